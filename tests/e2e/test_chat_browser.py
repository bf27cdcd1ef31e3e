"""The chat pages in a real browser (Debian's headless Chromium, Playwright).

An installation and an incident with its thread are stored as the worker leaves them
(rows made with the ORM, tests/unit/chatops/test_views.py seed_thread): the state message
with its buttons, three timeline posts, one retrying, one failed, an answer only Ben saw.
A commander at 1440x900 reads the thread drawn from those posts; a colleague reads it,
/chat/ and the incident page in Chinese; the commander sends the failed post again,
reads /chat/ and the incident page's chat panel.

The README screenshots (docs/screenshot-chat-thread.png, docs/screenshot-chat-thread-zh.png,
docs/screenshot-chat-index.png, 1440x900) are written when CHAT_SHOTS=1; every run keeps
its screenshots in var/screenshots/.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
from django.conf import settings as django_settings

from chatops.models import ChatPost, PostStatus
from console import roles
from console.liveness.services import worker_heartbeat_record
from console.queues import QUEUE_NAMES
from tests.e2e.conftest import SHOTS
from tests.e2e.test_browser import log_in
from tests.e2e.test_pager_browser import csp_watch
from tests.unit.chatops.test_views import chat_panel, seed_thread  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
TIMEOUT_MS = 20_000
DOCS = django_settings.BASE_DIR / "docs"
DESK = {"width": 1440, "height": 900}
HAN = re.compile(r"[\u4e00-\u9fff]")


def shot(page, name: str, *, readme: bool = False) -> None:
    """Into var/screenshots/; a README one also into docs/ when CHAT_SHOTS=1."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    if readme and os.environ.get("CHAT_SHOTS") == "1":
        shutil.copy(path, DOCS / f"screenshot-{name}.png")


@pytest.fixture
def people(make_user):
    return {
        "ana": make_user("ana", roles.RESPONDER, email="ana@example.com"),
        "ben": make_user("ben", roles.COMMANDER),
        "cara": make_user("cara", roles.COMMANDER),
        "mei": make_user("mei", roles.COMMANDER),
    }


def test_thread_index_and_panel_in_english_and_chinese(live_server, browser, people, chat_panel):  # noqa: F811
    from playwright.sync_api import expect

    seeded = seed_thread(users=people)
    # A worker's heartbeat, as a running worker leaves it: the pages then carry no "no
    # worker" banner (these pages send nothing; the banner is another test's subject).
    worker_heartbeat_record(hostname="worker@e2e", pid=1, queues=list(QUEUE_NAMES))
    thread_url = f"{live_server.url}/chat/threads/{seeded.thread.pk}/"

    desk = browser.new_context(viewport=DESK, timezone_id="Europe/Berlin", locale="en-GB")
    page = desk.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    refused = csp_watch(page)
    log_in(page, live_server.url, "cara")

    # The thread as the chat shows it: the state message as last edited, its buttons
    # drawn (disabled), the timeline posts in order, delivery shown where it went wrong.
    page.goto(thread_url)
    thread = page.get_by_test_id("chat-thread")
    messages = thread.get_by_test_id("chat-message")
    expect(messages).to_have_count(7)  # the state message and six posts under it
    state = messages.first
    expect(state).to_have_attribute("data-kind", "state_edit")
    expect(state).to_contain_text("(edited)")
    expect(state).to_contain_text("Acknowledged")
    buttons = state.get_by_test_id("chat-buttons").get_by_role("button")
    expect(buttons).to_have_count(5)
    for i in range(5):
        expect(buttons.nth(i)).to_be_disabled()
    texts = [messages.nth(i).inner_text() for i in range(1, 7)]
    expected = ["Acknowledged by ana", "Triage finished", "Note by ben", "run #7", "Silence"]
    for text, want in zip(texts, expected, strict=False):
        assert want in text
    expect(messages.nth(4)).to_have_attribute("data-status", "retrying")
    failed = messages.nth(5)
    expect(failed).to_have_attribute("data-status", "failed")
    expect(failed.get_by_test_id("post-error")).to_contain_text("channel_not_found")
    reply = messages.nth(6)
    expect(reply.get_by_test_id("only-to")).to_have_text("Only visible to Ben")
    expect(page.get_by_test_id("incident-link")).to_have_attribute(
        "href", f"/incidents/{seeded.incident.pk}/"
    )
    expect(page.get_by_test_id("chat-link")).to_have_attribute(
        "href", re.compile(r"^https://app\.slack\.com/client/T0ACME/C0SERVING/thread/")
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= DESK["width"]
    shot(page, "chat-thread", readme=True)

    # In Chinese: the page's own words are Chinese; the stored messages stay as sent.
    in_chinese(browser, live_server.url, seeded)

    # Send the failed post again: back to waiting (the worker sends it with its thread).
    failed.get_by_test_id("send-again").click()
    expect(page.locator("#flash")).to_contain_text("will be sent again")
    again = page.locator(f"#post-{seeded.failed.pk}")
    expect(again).to_have_attribute("data-status", "pending")
    assert ChatPost.objects.get(pk=seeded.failed.pk).status == PostStatus.PENDING

    # /chat/: the installation with the addresses to paste, who is who, the requests.
    page.goto(f"{live_server.url}/chat/")
    install = page.get_by_test_id("chat-install")
    expect(install).to_contain_text("Acme Slack")
    urls = install.get_by_test_id("request-url")
    expect(urls).to_have_count(2)
    expect(urls.first).to_contain_text(
        f"{live_server.url}/chat/slack/{seeded.workspace.pk}/commands/"
    )
    expect(page.get_by_test_id("identity")).to_have_count(3)
    expect(page.get_by_test_id("identity").first).to_have_attribute("data-mapped", "no")
    expect(page.get_by_test_id("interaction")).to_have_count(3)
    expect(page.get_by_test_id("open-post")).to_have_count(2)  # retrying and now waiting
    expect(page.locator("body")).not_to_contain_text(seeded.workspace.bot_token)
    nav = page.locator("nav.mainnav a[aria-current='page']")
    expect(nav).to_have_text("Chat")
    shot(page, "chat-index", readme=True)

    # The incident page's chat panel links to the thread.
    page.goto(f"{live_server.url}/incidents/{seeded.incident.pk}/")
    panel = page.get_by_test_id("chat-panel")
    expect(panel).to_contain_text("Thread in Acme Slack")
    expect(panel.get_by_role("link")).to_have_attribute(
        "href", f"/chat/threads/{seeded.thread.pk}/"
    )
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(SHOTS / "chat-incident-panel.png"))
    assert not refused + page.evaluate("window.__csp.splice(0)")
    desk.close()


def in_chinese(browser, base_url: str, seeded) -> None:
    from playwright.sync_api import expect

    zh = browser.new_context(viewport=DESK, timezone_id="Asia/Shanghai", locale="zh-CN")
    page = zh.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{base_url}/chat/threads/{seeded.thread.pk}/")
    page.fill("#id_username", "mei")
    page.fill("#id_password", "pw-mei")
    page.get_by_role("button", name="登录", exact=True).click()
    page.wait_for_url(f"**/chat/threads/{seeded.thread.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert HAN.search(page.locator("main h1").inner_text())
    expect(page.get_by_test_id("chat-message")).to_have_count(7)
    expect(page.get_by_test_id("only-to")).to_contain_text("Ben")
    shot(page, "chat-thread-zh", readme=True)
    page.goto(f"{base_url}/chat/")
    assert HAN.search(page.locator("main h1").inner_text())
    shot(page, "chat-index-zh")
    page.goto(f"{base_url}/incidents/{seeded.incident.pk}/")
    expect(page.get_by_test_id("chat-panel")).to_be_visible()
    zh.close()
