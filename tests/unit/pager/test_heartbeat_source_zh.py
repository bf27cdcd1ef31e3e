"""/pager/heartbeats/ names what feeds the console's own heartbeats in the reader's words
(walk item F2: "beat" was shown raw); a Watchdog's replica URL stays as written."""

import re

import pytest
from django.urls import reverse

from console import roles
from pager.heartbeats.console import console_heartbeats_ensure
from pager.models import Heartbeat, HeartbeatKind
from tests.english_words import english_words

pytestmark = pytest.mark.django_db
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}


def test_the_console_heartbeats_sources_read_in_chinese(client, make_user):
    console_heartbeats_ensure()
    Heartbeat.objects.create(
        slug="am-0", name="am-0", kind=HeartbeatKind.WATCHDOG, source="http://am-0:9093"
    )
    client.force_login(make_user("cara", roles.COMMANDER))
    page = client.get(reverse("pager:heartbeats"), **ZH).content.decode()
    sources = re.findall(r'<div class="muted small">(.*?)</div>', page)
    assert "Celery 定时调度器" in sources
    assert "<code>http://am-0:9093</code>" in sources
    workers = [s for s in sources if "Celery worker" in s]
    assert workers
    assert all("<code>" in s for s in workers)
    words = re.sub(r"<code>.*?</code>", " ", " ".join(sources))
    assert not english_words(words), words
