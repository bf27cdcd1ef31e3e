"""Chat-ops end to end, as `make run` starts it (issue 27's "done when"): an alert from the
simulator through real Prometheus and Alertmanager opens an incident, its channel and
state message appear in Slack, a button press there acknowledges it, the recommended fix
is requested from the modal, the requester's own approval is refused, and a second
person's press approves it: the worker runs it once against the cluster.

Slack is a local server speaking the part of its Web API the console uses
(tests/chat_slack_server.py), driven by the console's real slack_sdk client; every press
is posted to the stack signed exactly as Slack signs it. The people and the installation
are written into the stack's own database with `manage.py shell` before the alert fires.
Every wait polls with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.chat_slack_server import (
    CHANNEL,
    SIGNING_SECRET,
    SlackServer,
    payload_body,
    signed_headers,
)
from tests.conftest import need_service
from tests.drill_stack import LOOP_ENV
from tests.helpers import wait_for
from tests.prom_rules import fast_rules
from tests.run_stack import manage

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]
ROOT = Path(__file__).resolve().parents[3]
SCENARIO = "ecc-errors"  # its fix, cordon_node, is a risky kind: a second person approves
WAIT = 150

SETUP = """
import json, os
from django.contrib.auth.models import Group, User
from chatops.models import Surface, Workspace
from console import roles

cfg = json.loads(os.environ["CHAT_E2E"])
for name, role in (("e2e-ana", roles.RESPONDER), ("e2e-ben", roles.COMMANDER)):
    user = User.objects.create_user(name, email=name + "@example.com", password="pw-" + name)
    user.groups.add(Group.objects.get(name=role))
workspace = Workspace.objects.create(
    name="E2E Slack", surface=Surface.SLACK, api_url=cfg["api_url"], bot_token=cfg["token"],
    signing_secret=cfg["secret"], external_team=cfg["team"], default_channel=cfg["channel"],
)
print(json.dumps({"workspace": workspace.pk}))
"""


def simulator(url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip


def get(session: requests.Session, url: str) -> dict:
    response = session.get(url, timeout=10)
    assert response.status_code == 200, (url, response.status_code, response.text[:500])
    return response.json()


def press(url: str, payload: dict, *, retry: int | None = None) -> requests.Response:
    """POST an interactivity payload to the console, signed as Slack signs it."""
    body = payload_body(payload)
    headers = {
        **signed_headers(SIGNING_SECRET, body),
        "Content-Type": "application/x-www-form-urlencoded",
    }
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return requests.post(url, data=body, headers=headers, timeout=10)


@pytest.fixture
def slack():
    server = SlackServer()
    server.add_user("U0ANA", "ana", email="e2e-ana@example.com")
    server.add_user("U0BEN", "ben", email="e2e-ben@example.com")
    yield server
    server.close()


def test_alert_thread_ack_request_and_second_person_approves(make_run, tmp_path, slack):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    loop = {k: v for k, v in LOOP_ENV.items() if k.startswith(("SIMULATOR_", "PROMETHEUS_",
                                                                "ALERTMANAGER_"))}  # fmt: skip
    stack = make_run({
        **loop,
        "PROMETHEUS_RULES_DIR": str(fast_rules(tmp_path / "rules", for_="6s")),
        "OUTGOING_URL_ALLOWLIST": "127.0.0.1/32",  # the local Slack
        "CHAT_REQUEUE_SECONDS": "2",
    })  # fmt: skip
    setup = manage(stack, "shell", "-c", SETUP, env={"CHAT_E2E": json.dumps({
        "api_url": slack.api_url, "token": slack.token, "secret": SIGNING_SECRET,
        "team": slack.team, "channel": CHANNEL,
    })})  # fmt: skip
    workspace = json.loads(setup.strip().splitlines()[-1])["workspace"]
    hook = f"{stack['base']}/chat/slack/{workspace}/interactions/"
    base, session = stack["base"], stack["login"]()
    before = {i["id"] for i in get(session, base + "/api/v1/incidents/")["results"]}
    simulator(stack["sim_url"], "inject", SCENARIO)

    def opened() -> dict | None:
        rows = get(session, base + "/api/v1/incidents/")["results"]
        return next((i for i in rows if i["id"] not in before and i["runbook"] == SCENARIO), None)

    incident = wait_for(opened, timeout=WAIT, every=1, what="the ecc-errors incident")
    number = incident["id"]

    # The state message: in the incident's own channel (SEV1/SEV2) or the default one
    # (the alert's severity decides), at the top level.
    def state() -> tuple[str, dict] | None:
        for channel_id, messages in list(slack.messages.items()):
            for message in list(messages):
                if not message.get("thread_ts") and f"#{number} " in message["text"]:
                    return channel_id, message
        return None

    channel_id, first = wait_for(state, timeout=WAIT, every=0.5, what="the state message")
    root = first["ts"]
    if incident["severity"] in ("SEV1", "SEV2"):
        assert slack.channels[channel_id]["name"].startswith(f"inc-{number}-")
    else:
        assert channel_id == CHANNEL

    # ana presses Acknowledge: the console answers at once, the worker acknowledges, ana
    # commands it, the timeline says it came from Slack.
    answer = press(hook, slack.press(channel_id, root, "ack", user_id="U0ANA", username="ana"))
    assert answer.status_code == 200, answer.text
    detail = f"{base}/api/v1/incidents/{number}/"
    wait_for(lambda: get(session, detail)["status"] == "acknowledged", timeout=WAIT, every=0.5,
             what="the acknowledgement from Slack")  # fmt: skip
    assert get(session, detail)["commander"] == "e2e-ana"
    timeline = get(session, f"{detail}timeline/")["results"]
    assert any(e["source"] == "slack" and e["actor"] == "e2e-ana" for e in timeline)

    # The state message is edited in place: acknowledged, and (once triage has run) the
    # recommended fix's button.
    def request_button() -> bool:
        message = slack.message(channel_id, root) or {}
        return "acknowledged" in json.dumps(message).lower() and any(
            b["action_id"].startswith("request:") for b in slack.buttons(channel_id, root)
        )

    wait_for(request_button, timeout=WAIT, every=1, what="the state message's Request button")
    opened_views = set(slack.views)
    answer = press(hook, slack.press(channel_id, root, "request", user_id="U0ANA",
                                     username="ana"))  # fmt: skip
    assert answer.status_code == 200

    # The modal opens at once, then shows the preview with a submit button.
    def modal() -> dict | None:
        new = [v for pk, v in dict(slack.views).items() if pk not in opened_views]
        return new[-1] if new and new[-1].get("submit") else None

    view = wait_for(modal, timeout=WAIT, every=0.5, what="the request modal with its preview")
    shown = json.dumps(view)
    assert "cordon_node" in shown
    submitted = press(hook, slack.submit(view["id"], user_id="U0ANA", username="ana"))
    assert submitted.status_code == 200

    def pending() -> list[dict]:
        runs = get(session, f"{base}/api/v1/actions/?incident={number}")["results"]
        return [r for r in runs if r["incident"] == number]

    [run] = wait_for(pending, timeout=WAIT, every=0.5, what="the requested run")
    assert (run["kind"], run["status"], run["requested_by"]) == (
        "cordon_node", "awaiting_approval", "e2e-ana"
    )  # fmt: skip

    def approve_button() -> bool:
        return any(b["action_id"].startswith("approve:") for b in slack.buttons(channel_id, root))

    wait_for(approve_button, timeout=WAIT, every=0.5, what="the Approve button")

    # ana (the requester) presses Approve: refused, and told why.
    own = slack.press(channel_id, root, "approve", user_id="U0ANA", username="ana")
    assert press(hook, own).status_code == 200
    own_url = own["response_url"].rsplit("/", 1)[-1]
    wait_for(lambda: slack.responses.get(own_url), timeout=WAIT, every=0.5,
             what="the refusal to the requester")  # fmt: skip
    assert "someone else" in json.dumps(slack.responses[own_url])
    assert get(session, f"{base}/api/v1/actions/{run['id']}/")["status"] == "awaiting_approval"

    # ben presses Approve; Slack's retry of the same press changes nothing.
    his = slack.press(channel_id, root, "approve", user_id="U0BEN", username="ben")
    assert press(hook, his).status_code == 200
    assert press(hook, his, retry=1).status_code == 200

    def finished() -> dict | None:
        found = get(session, f"{base}/api/v1/actions/{run['id']}/")
        return found if found["status"] in ("succeeded", "failed") else None

    done = wait_for(finished, timeout=WAIT, every=1, what="the approved run to finish")
    assert (done["status"], done["decided_by"]) == ("succeeded", "e2e-ben")
    runs = pending()
    assert len(runs) == 1  # approved once, run once
    timeline = get(session, f"{detail}timeline/")["results"]
    assert any(e["source"] == "slack" and e["actor"] == "e2e-ben" for e in timeline)
    # The thread carries the timeline: replies under the state message.
    assert slack.thread(channel_id, root)
