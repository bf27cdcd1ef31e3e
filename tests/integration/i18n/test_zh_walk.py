"""Issue 28's "done when": a reader of Simplified Chinese sees no English the console wrote.

A stack as `make run` starts it (the demo history; simulator, Prometheus, Alertmanager,
web, worker, in the drill suite's compressed time), seeded with one live incident of
each of the eight runbooks, each with an action run (approved by a second person where
needed) and its guard watch, a silence, plus a drill and a readiness verification
(seed.py). Then Debian's headless Chromium, in a zh-CN context on Asia/Shanghai time,
signs in as the admin, sets the language to 简体中文 and walks every page it can reach
from the header's sections, the incidents, runs, drills and readiness pages (walker.py:
demo rows of one kind of page are sampled); and the API is read with
`Accept-Language: zh-hans`. Any English word that is not a name, a label value, a query
or a code fails the test, listed by page with the lines holding it.

Screenshots (docs/screenshot-zh-*.png, 1440x900) are written only with ZH_SHOTS=1.
The full report is also written to $ZH_WALK_REPORT when set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.chromium import chromium
from tests.conftest import need_service
from tests.drill_stack import LOOP_ENV
from tests.integration.i18n.names import stack_names
from tests.integration.i18n.seed import RUNBOOKS, seed
from tests.integration.i18n.walker import Walk, api_check
from tests.prom_rules import fast_rules

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parents[3]
SECTIONS = [
    "/", "/receipts/", "/audit/", "/runbooks/", "/runbooks/categories/",
    "/runbooks/actions/", "/runbooks/drills/", "/readiness/", "/postmortems/",
    "/postmortems/items/", "/postmortems/reports/", "/postmortems/notifications/", "/pager/",
    "/pager/me/", "/pager/pages/", "/pager/heartbeats/", "/pager/reports/", "/notifications/",
    "/chat/",
]  # fmt: skip


@pytest.fixture
def browser():
    with chromium() as browser:
        yield browser


def sign_in_chinese(page, stack: dict) -> None:
    """Sign in as the admin, then choose 简体中文 with the header's switcher (saved to the
    account), whatever the browser's own language made the first page."""
    base = stack["base"]
    page.goto(base + "/login/")
    page.fill("#id_username", stack["user"])
    page.fill("#id_password", stack["password"])
    page.locator("section.login button[type=submit]").click()
    page.wait_for_url(base + "/")
    if page.locator("[data-testid=lang-zh-hans]").count() == 0:
        page.locator("[data-testid=lang-en]").click()
        page.wait_for_load_state("load")
    page.locator("[data-testid=lang-zh-hans]").click()
    page.wait_for_load_state("load")
    assert page.locator("html").get_attribute("lang") == "zh-hans"


def pages_to_walk(seeded) -> list[str]:
    must = list(SECTIONS)
    must += [f"/incidents/{i}/" for i in seeded.incidents.values()]
    must += [f"/runbooks/{slug}/" for slug in RUNBOOKS]
    must += [f"/runbooks/actions/{r['id']}/" for r in seeded.runs.values()]
    must += [f"/runbooks/drills/plans/{seeded.drill_plan}/",
             f"/runbooks/drills/runs/{seeded.drill_run}/"]  # fmt: skip
    must += [f"/readiness/{d}/" for d in seeded.deployments]
    must += [f"/postmortems/{p}/" for p in seeded.postmortems.values()]
    return must


def api_urls(seeded, walked: list[str]) -> list[str]:
    urls = ["/api/v1/incidents/", "/api/v1/actions/", "/api/v1/drills/plans/",
            "/api/v1/drills/runs/", "/api/v1/readiness/deployments/", "/api/v1/action-items/",
            "/api/v1/notifications/deliveries/", "/api/v1/pager/teams/", "/api/v1/pager/pages/",
            "/api/v1/pager/heartbeats/", "/api/v1/pager/maintenance-windows/",
            "/api/v1/pager/reports/"]  # fmt: skip
    for iid in seeded.incidents.values():
        urls += [f"/api/v1/incidents/{iid}/{part}" for part in
                 ("", "timeline/", "triage/", "silences/", "actions/", "similar/")]  # fmt: skip
        urls.append(f"/api/v1/pager/incidents/{iid}/oncall/")
    urls += [f"/api/v1/actions/{r['id']}/" for r in seeded.runs.values()]
    urls += [f"/api/v1/drills/plans/{seeded.drill_plan}/",
             f"/api/v1/drills/runs/{seeded.drill_run}/"]  # fmt: skip
    urls += [f"/api/v1/readiness/deployments/{d}/" for d in seeded.deployments]
    urls += [f"/api/v1/readiness/verifications/{v}/" for v in seeded.verifications]
    urls += [f"/api/v1/postmortems/{p}/" for p in seeded.postmortems.values()]
    # The demo's postmortems and drill runs the walk reached.
    for path in walked:
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "postmortems" and parts[1].isdigit():
            urls.append(f"/api/v1/postmortems/{parts[1]}/")
        if len(parts) == 4 and parts[1:3] == ["drills", "runs"] and parts[3].isdigit():
            urls.append(f"/api/v1/drills/runs/{parts[3]}/")
    return list(dict.fromkeys(urls))


def screenshots(page, base: str, seeded) -> None:
    """docs/screenshot-zh-*.png: an incident, a run card, a drill's scorecard, a
    readiness checklist, in Chinese at 1440x900."""
    shots = {
        "incident": f"/incidents/{seeded.incidents['ttft-spike']}/",
        "run": f"/runbooks/actions/{seeded.runs['ttft-spike']['id']}/",
        "drill": f"/runbooks/drills/runs/{seeded.drill_run}/",
        "readiness": f"/readiness/{seeded.deployments[0]}/",
    }
    for name, path in shots.items():
        page.goto(base + path, wait_until="load")
        page.wait_for_timeout(1500)  # htmx panels and charts
        page.screenshot(path=str(ROOT / "docs" / f"screenshot-zh-{name}.png"))


def test_every_page_and_api_text_in_chinese(make_run, tmp_path, browser):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    stack = make_run(
        {**LOOP_ENV, "PROMETHEUS_RULES_DIR": str(fast_rules(tmp_path / "rules", for_="6s"))}
    )
    seeded = seed(stack)
    context = browser.new_context(
        locale="zh-CN", timezone_id="Asia/Shanghai", viewport={"width": 1440, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    sign_in_chinese(page, stack)
    # Read once every row the walk can show exists, the browser's sign-in (its audit
    # row's user agent) too.
    walk = Walk(stack["base"], *stack_names(stack))
    walk.walk(page, pages_to_walk(seeded))
    if os.environ.get("ZH_SHOTS") == "1":
        screenshots(page, stack["base"], seeded)
    context.close()
    api_check(walk, stack["login"](), api_urls(seeded, walk.visited))

    report = walk.report()
    header = f"walked {len(walk.visited)} pages; seeded: " + "; ".join(seeded.log)
    if os.environ.get("ZH_WALK_REPORT"):
        full = walk.report(limit=1000)
        Path(os.environ["ZH_WALK_REPORT"]).write_text(f"{header}\n{full}\n")
    assert not walk.errors, f"{header}\n{report}"
    assert not walk.findings, f"{header}\n{report}"
