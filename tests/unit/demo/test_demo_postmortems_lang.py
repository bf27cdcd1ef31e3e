"""The demo's postmortems are drafted in English (the team's words in them are English)
and a Chinese reader sees them marked as such: `lang="en"` on the document's text, a note
saying it was drafted in English, and the console's own words around it in Chinese (zh
walk E2, E4)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from postmortems.models import ActionItem, Postmortem
from tests.english_words import english_words
from tests.unit.demo.test_seed_demo import _isolated, seed  # noqa: F401 (autouse fixture)
from tests.unit.postmortems.test_document_language import merged, read

pytestmark = pytest.mark.django_db
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def _allowed(pm: Postmortem) -> set[str]:
    found = {"PromQL", "console", "guard"}
    for user in User.objects.all():
        found.update({user.username, user.first_name, user.last_name})
    for alert in pm.incident.alerts.all():
        for key, value in (alert.labels or {}).items():
            found.update({str(key), *re.split(r"[-_/.]", str(value)), str(value)})
    found.update(re.findall(r"[A-Za-z][\w-]*", pm.incident.title))
    found.update({pm.runbook, *pm.runbook.split("-")})
    return found


def test_demo_postmortems_are_english_and_marked_for_a_chinese_reader(client):
    seed()
    pms = Postmortem.objects.filter(incident__is_demo=True)
    assert pms.exists()
    assert set(pms.values_list("draft_language", flat=True)) == {"en"}
    pm = pms.filter(status="published").first() or pms.first()
    admin = User.objects.filter(is_superuser=True).first() or User.objects.first()
    client.force_login(admin)
    html = client.get(reverse("postmortems:detail", args=[pm.pk]), **ZH).content.decode()
    assert 'data-testid="drafted-in"' in html
    assert 'data-testid="section-root_cause" lang="en"' in html
    assert 'class="pm-entry-text" lang="en"' in html
    # The stored not-captured reason (Prometheus was down while seeding) is worded.
    if pm.snapshots.exclude(error="").exists():
        assert "refused the connection" not in html
    items = client.get(reverse("postmortems:items"), **ZH).content.decode()
    assert ActionItem.objects.filter(postmortem__in=pms).exists()
    assert re.search(r'data-testid="item-title" lang="en"', items)
    if merged():
        for name in ("detail", "print", "history"):
            page = client.get(reverse(f"postmortems:{name}", args=[pm.pk]), **ZH)
            text = "\n".join(read(page.content.decode()).text)
            assert english_words(text, _allowed(pm)) == [], name
