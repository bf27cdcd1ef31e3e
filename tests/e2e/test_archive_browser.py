"""Retention's archive in a real browser (Debian's headless Chromium, Playwright).

Three archive batches are made through the service as retention, the management command
and the page leave them (one incident since restored). An admin at 1440x900 reads the
batches and the archived incidents, searches one by its number, opens it (the banner
says where its alerts and timeline went), restores it from the banner and finds its
alerts back; then asks for an archive run ("queued") and a batch restore.

The README screenshot (docs/screenshot-archive.png, the archive page at 1440x900) is
written when ARCHIVE_SHOTS=1; every run keeps its screenshots in var/screenshots/.
"""

from __future__ import annotations

import os
import shutil
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db.models import F
from django.utils import timezone

from console import roles
from console.liveness.services import worker_heartbeat_record
from console.queues import QUEUE_NAMES
from incidents import tasks
from incidents.archive.services import incidents_archive, incidents_restore
from incidents.models import Alert, ArchiveBatch, Incident
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in
from tests.e2e.test_pager_browser import csp_watch
from tests.factories import AlertFactory, IncidentFactory, TimelineEventFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
TIMEOUT_MS = 20_000
DOCS = django_settings.BASE_DIR / "docs"
DESK = {"width": 1440, "height": 900}
TITLES = [
    ("VLLMHighTTFT: TTFT p99 above 2s", "llm-serving"),
    ("VLLMKVCacheNearlyFull: KV cache above 95%", "llm-serving"),
    ("VLLMPodCrashLooping: vllm-code-2 restarts", "llm-code"),
    ("VLLMQueueBacklog: 180 requests waiting", "llm-chat"),
    ("VLLMGPUXidErrors: Xid 79 on node gpu-a17", "llm-serving"),
]


def shot(page, name: str, *, readme: bool = False) -> None:
    """Into var/screenshots/; a README one also into docs/ when ARCHIVE_SHOTS=1."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    if readme and os.environ.get("ARCHIVE_SHOTS") == "1":
        shutil.copy(path, DOCS / f"screenshot-{name}.png")


def _history(days_ago: int, count: int, start: int = 0) -> list[Incident]:
    made = []
    for n in range(count):
        title, namespace = TITLES[(start + n) % len(TITLES)]
        when = timezone.now() - timedelta(days=days_ago, hours=n)
        inc = IncidentFactory(
            status="resolved",
            resolved_at=when,
            triggered_at=when - timedelta(minutes=40),
            title=title,
            namespace=namespace,
            severity=("SEV2", "SEV3", "SEV1")[n % 3],
        )
        for k in range(2 + n % 4):
            AlertFactory(incident=inc, status="resolved", labels={"pod": f"vllm-{k}"})
        for k in range(3 + n % 5):
            TimelineEventFactory(incident=inc, kind="note", message=f"checked pod {k}")
        made.append(inc)
    return made


@pytest.fixture
def archive(make_user):
    ada = make_user("ada", roles.ADMIN, first_name="Ada", last_name="Okafor")
    now = timezone.now()
    _history(200, 6)
    incidents_archive(
        older_than_days=90, actor=None, method="retention", now=now - timedelta(days=60)
    )
    _history(150, 4, start=2)
    command = incidents_archive(
        older_than_days=120, actor=None, method="command", now=now - timedelta(days=14)
    )
    recent = _history(100, 5, start=1)
    incidents_archive(older_than_days=90, actor=ada, method="page")
    # Runs of a few minutes each (the service stamps its own end time).
    ArchiveBatch.objects.update(finished_at=F("created_at") + timedelta(minutes=3))
    # Restored after the last run, or that run would have archived it again.
    incidents_restore(actor=None, method="command", incident_ids=[command.archived.first().pk])
    return {"ada": ada, "searched": recent[2]}


def test_archive_page_search_banner_and_restore(
    live_server, browser, archive, monkeypatch, settings
):
    from playwright.sync_api import expect

    settings.RETENTION_RESOLVED_DAYS = 90  # as a production console would set it
    sent = []
    for task in (tasks.archive_run, tasks.restore_run):
        monkeypatch.setattr(
            task, "apply_async", lambda args, task_id, _t=task.name: sent.append((_t, args))
        )
    worker_heartbeat_record(hostname="worker@e2e", pid=1, queues=list(QUEUE_NAMES))
    desk = browser.new_context(viewport=DESK, timezone_id="Europe/Berlin", locale="en-GB")
    page = desk.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    refused = csp_watch(page)
    log_in(page, live_server.url, "ada")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Archive").click()
    expect(page.locator("h1")).to_have_text("Archive")
    expect(page.get_by_test_id("archive-retention")).to_contain_text("On: every night")
    batches = page.get_by_test_id("archive-batch")
    expect(batches).to_have_count(3)
    expect(batches.first).to_contain_text("Ada Okafor")
    expect(batches.first).to_contain_text("Archive page")
    expect(batches.nth(1)).to_contain_text("Management command")
    expect(batches.nth(2)).to_contain_text("the console")
    expect(page.get_by_test_id("archived-incident")).to_have_count(14)  # 6 + 4 - 1 + 5
    assert page.evaluate("document.documentElement.scrollWidth") <= DESK["width"]
    shot(page, "archive", readme=True)

    # Search by number, open it: the banner says where its alerts and timeline went.
    searched = archive["searched"]
    page.get_by_role("searchbox").fill(f"#{searched.pk}")
    page.get_by_role("button", name="Search", exact=True).click()
    found = page.get_by_test_id("archived-incident")
    expect(found).to_have_count(1)
    found.get_by_role("link", name=f"#{searched.pk}").click()
    banner = page.get_by_test_id("archived-banner")
    expect(banner).to_contain_text("Its alerts and timeline were archived on")
    expect(banner).to_contain_text("timeline entries")
    expect(page.locator(".incident-timeline")).to_contain_text("Archived (resolved more than")
    shot(page, "archive-banner")
    banner.get_by_test_id("restore-incident").click()
    expect(page.locator("#flash")).to_contain_text(f"Incident #{searched.pk} restored")
    expect(page.get_by_test_id("archived-banner")).to_have_count(0)
    expect(page.locator(".incident-timeline")).to_contain_text("checked pod 0")
    assert Alert.objects.filter(incident=searched).exists()

    # Archive now and Restore batch are queued; the page says so.
    page.goto(f"{live_server.url}/archive/")
    now = page.get_by_test_id("archive-now")
    now.locator("input[name=older_than_days]").fill("60")
    now.get_by_role("button", name="Archive now").click()
    expect(page.locator("#flash")).to_contain_text("Archive run queued")
    page.get_by_test_id("restore-batch").first.click()
    expect(page.locator("#flash")).to_contain_text("queued")
    assert [name for name, _ in sent] == [
        "incidents.tasks.archive_run",
        "incidents.tasks.restore_run",
    ]
    assert sent[0][1] == (60, archive["ada"].pk, "page")
    assert not refused, refused
