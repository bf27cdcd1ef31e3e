"""A responder whose browser speaks Chinese walks the console in Chinese: sign in, the
incident (its runbook from the Chinese catalogue, acknowledged with the Chinese button),
then every section of the header; times in the browser's zone; the switcher back to
English. Debian's headless Chromium with a zh-CN locale and an Asia/Shanghai clock."""

import re

import pytest
from django.conf import settings as django_settings
from django.utils import translation

from console import roles
from runbooks.catalog import load_catalog
from tests.e2e.conftest import SHOTS
from tests.e2e.test_runbook_browser import TIMEOUT_MS, live, prom, send_alert  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HAN = re.compile(r"[\u4e00-\u9fff]")
DOCS = django_settings.BASE_DIR / "docs"
# Every section of the header an admin sees, by URL.
SECTIONS = [
    "/",
    "/receipts/",
    "/runbooks/",
    "/runbooks/categories/",
    "/runbooks/ttft-spike/",
    "/runbooks/actions/",
    "/runbooks/drills/",
    "/postmortems/",
    "/postmortems/reports/",
    "/readiness/",
    "/notifications/",
    "/audit/",
]


def test_the_console_in_chinese(live, prom, browser, make_user):  # noqa: F811
    from playwright.sync_api import expect

    make_user("mei", roles.ADMIN)
    incident_id = send_alert(live.url)
    context = browser.new_context(
        locale="zh-CN", timezone_id="Asia/Shanghai", viewport={"width": 1440, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(live.url + f"/incidents/{incident_id}/")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    page.fill("#id_username", "mei")
    page.fill("#id_password", "pw-mei")
    page.get_by_role("button", name="登录", exact=True).click()
    page.wait_for_url(f"**/incidents/{incident_id}/")

    with translation.override("zh-hans"):
        runbook_title = load_catalog().get("ttft-spike").title
    assert HAN.search(runbook_title)
    expect(page.locator("body")).to_contain_text(runbook_title)
    nav = page.locator("nav.mainnav")
    for label in ("事件", "运行手册", "复盘", "演练"):
        expect(nav).to_contain_text(label)
    # The browser's zone came back in a cookie on the first page; the header names it.
    page.reload()
    expect(page.get_by_test_id("utc-toggle")).to_have_text("Asia/Shanghai")
    page.get_by_role("button", name="认领", exact=True).click()
    expect(page.locator("#incident-header")).to_contain_text("已认领")
    page.wait_for_timeout(300)
    page.screenshot(path=str(DOCS / "screenshot-incident-zh-1440.png"))

    for url in SECTIONS:
        response = page.goto(live.url + url)
        assert response is not None
        assert response.ok, (url, response.status)
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        heading = page.locator("main h1").first.inner_text()
        assert HAN.search(heading), (url, heading)
        page.screenshot(path=str(SHOTS / f"zh{url.rstrip('/').replace('/', '-') or '-list'}.png"))

    page.get_by_test_id("lang-en").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page.locator("nav.mainnav")).to_contain_text("Incidents")
    context.close()
