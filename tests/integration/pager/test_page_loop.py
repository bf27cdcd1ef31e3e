"""The pager end to end, as `make run` starts it (issue 26's "done when"): an alert from
the simulator through real Prometheus and Alertmanager opens an incident, the owning
team's escalation pages the person on call, the page's one-tap link acknowledges it
(no sign-in) and stops the escalation, and a page nobody acknowledges reaches the
second step.

The stack is the real one (tests/run_stack.py: SQLite, the filesystem broker, the worker
with beat running the escalation tick, the notifier worker sending pages, the simulator,
Prometheus, Alertmanager) in compressed time (the drill suite's timings). Pages go to
local servers speaking the services' protocols (tests/pager_receivers.py): ntfy for push,
a real SMTP server for email, a webhook receiver. What the demo data lacks (the team
owning the simulator's namespace, its schedule and policy, the people's contact methods)
is written into the stack's own database with `manage.py shell` before the alerts fire.

Two failures are injected at once, so one minute of escalation serves both proofs:
- ttft-spike (VLLMHighTTFT): ana, on call, gets the ntfy push with the one-tap link; the
  link acknowledges it, ana commands the incident, and the second step (due a minute
  later) never pages ben.
- nccl-hang (VLLMEngineStalled): ntfy answers 500 to its page, so it falls through to ana's
  email; nobody acknowledges, and after the step's one-minute wait the second step pages
  ben through his signed webhook. The email's link then acknowledges it.
Every wait polls with a deadline; nothing sleeps for a fixed time.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
import requests

from tests.conftest import need_service
from tests.drill_stack import LOOP_ENV
from tests.helpers import http_session, wait_for
from tests.pager_receivers import NtfyServer, Request, SmtpServer, WebhookReceiver
from tests.prom_rules import fast_rules
from tests.run_stack import manage

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]
ROOT = Path(__file__).resolve().parents[3]

ACKED, UNACKED = "ttft-spike", "nccl-hang"  # runbook slugs of the two injected failures
UNACKED_ALERT = "VLLMEngineStalled"  # ntfy fails every page whose text names it
ONCALL, SECOND = "e2e-ana", "e2e-ben"
TEAM = "e2e-serving"
TOPIC = "e2e-ana-pages-7f3k"
SECRET = "e2e-webhook-signing-key-0123"
ACK_LINK = re.compile(r"https?://\S+?/pager/ack/[^/\s]+/")
TICK_DONE = re.compile(r"Task pager\.tasks\.escalation\.tick\[[^\]]+\] succeeded")
WAIT = 120  # seconds any one event may take (the step's wait is 60)

# Runs inside the stack (`manage.py shell -c`), with PAGER_E2E holding the addresses.
SETUP = """
import json, os
from datetime import timedelta
from django.contrib.auth.models import Group, User
from django.utils import timezone
from console import roles
from pager.models import (ContactMethod, EscalationPolicy, EscalationStep, Ownership,
    Rotation, RotationMember, Schedule, StepAction, Team)
from pager.schedules.rotation import wall_clock_stored
from pager.schedules.selectors import oncall_now_and_next

cfg = json.loads(os.environ["PAGER_E2E"])
people = {}
for name in (cfg["oncall"], cfg["second"]):
    user = User.objects.create_user(name, email=name + "@example.com", password="pw-" + name)
    user.groups.add(Group.objects.get(name=roles.RESPONDER))
    people[name] = user
ana, ben = people[cfg["oncall"]], people[cfg["second"]]
team = Team.objects.create(slug=cfg["team"], name="E2E serving")
team.members.add(ana, ben)
# The stack is this test's own: no other team's claim (the demo's) competes for the
# simulator's namespace.
Ownership.objects.exclude(team=team).delete()
Ownership.objects.create(team=team, namespace=cfg["namespace"])
schedule = Schedule.objects.create(team=team, slug=cfg["team"] + "-primary", name="Primary")
# Weekly turns from yesterday: ana holds the first week.
first = (timezone.now() - timedelta(days=1)).replace(tzinfo=None, microsecond=0)
rotation = Rotation.objects.create(
    schedule=schedule, name="Weekly", starts_at=wall_clock_stored(first)
)
RotationMember.objects.create(rotation=rotation, user=ana, position=1)
RotationMember.objects.create(rotation=rotation, user=ben, position=2)
policy = EscalationPolicy.objects.create(name="E2E policy", team=team)
EscalationStep.objects.create(policy=policy, position=1, action=StepAction.PAGE_SCHEDULE,
                              schedule=schedule, wait_minutes=1)
EscalationStep.objects.create(policy=policy, position=2, action=StepAction.PAGE_USER, user=ben)
team.escalation_policy = policy
team.save()
for position, (user, kind, address) in enumerate(
    ((ana, "ntfy", cfg["ntfy"]), (ana, "email", cfg["email"]), (ben, "webhook", cfg["webhook"]))
):
    ContactMethod.objects.create(user=user, kind=kind, address=address, position=position + 1)
print(json.dumps({"oncall": [s.username for s in oncall_now_and_next(schedule).now]}))
"""


class NtfyDown(NtfyServer):
    """ntfy that answers 500 to every message naming `failing` (its server down for that
    incident's pages) and takes the rest."""

    def __init__(self, failing: str) -> None:
        self.failing = failing
        super().__init__()

    def handle(self, request: Request) -> int:
        if self.failing in request.body.decode(errors="replace"):
            return 500
        return super().handle(request)


@pytest.fixture
def receivers():
    ntfy, webhook, smtp = NtfyDown(UNACKED_ALERT), WebhookReceiver(), SmtpServer()
    yield ntfy, webhook, smtp
    for server in (ntfy, webhook, smtp):
        server.close()


def simulator(url: str, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "simulator", *args, "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip


def get(session: requests.Session, url: str) -> dict:
    response = session.get(url, timeout=10)
    assert response.status_code == 200, (url, response.status_code, response.text[:500])
    return response.json()


def ticks_done(log: Path) -> int:
    """Escalation ticks the worker finished so far (its INFO log in the run's log)."""
    return len(TICK_DONE.findall(log.read_text(errors="replace")))


def at(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def test_alert_pages_oncall_link_acks_and_unacked_page_escalates(make_run, tmp_path, receivers):
    for name in ("prometheus", "prometheus-alertmanager"):
        need_service(name, shutil.which(name) is not None, "apt-get install " + name)
    ntfy, webhook, smtp = receivers
    loop = {k: v for k, v in LOOP_ENV.items() if k.startswith(("SIMULATOR_", "PROMETHEUS_",
                                                                "ALERTMANAGER_"))}  # fmt: skip
    started = time.monotonic()
    stack = make_run({
        **loop,
        "PROMETHEUS_RULES_DIR": str(fast_rules(tmp_path / "rules", for_="6s")),
        # Pages go to the local receivers (loopback), email to the local SMTP server.
        "OUTGOING_URL_ALLOWLIST": "127.0.0.1/32",
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp.port),
        "PAGER_TICK_SECONDS": "2",
        "PAGER_RETRY_BACKOFF_SECONDS": "0",
    })  # fmt: skip
    up = time.monotonic()
    setup = manage(stack, "shell", "-c", SETUP, env={"PAGER_E2E": json.dumps({
        "oncall": ONCALL, "second": SECOND, "team": TEAM, "namespace": "llm-serving",
        "ntfy": f"ntfy://{ntfy.host}/{TOPIC}", "email": ONCALL + "@example.com",
        "webhook": f"{webhook.url}/pages#secret={SECRET}",
    })})  # fmt: skip
    assert json.loads(setup.strip().splitlines()[-1]) == {"oncall": [ONCALL]}
    base, session = stack["base"], stack["login"]()
    before = {i["id"] for i in get(session, base + "/api/v1/incidents/")["results"]}
    for slug in (ACKED, UNACKED):
        simulator(stack["sim_url"], "inject", slug)

    def opened() -> dict[str, dict] | None:
        rows = get(session, base + "/api/v1/incidents/")["results"]
        found = {i["runbook"]: i for i in rows if i["id"] not in before}
        return found if {ACKED, UNACKED} <= set(found) else None

    found = wait_for(opened, timeout=WAIT, every=1, what="incidents for both failures")
    acked, unacked = found[ACKED]["id"], found[UNACKED]["id"]
    incidents_at = time.monotonic()

    def oncall(incident_id: int) -> dict:
        return get(session, f"{base}/api/v1/pager/incidents/{incident_id}/oncall/")

    # (a) The team owning the namespace pages who is on call: ntfy, with the one-tap link.
    def pushed(incident_id: int) -> list[dict]:
        return [m for m in ntfy.messages[TOPIC] if f"#{incident_id}:" in m.get("title", "")]

    push = wait_for(lambda: pushed(acked), timeout=WAIT, every=0.5, what="the ntfy page")[0]
    paged_at = time.monotonic()
    link = ACK_LINK.search(push["message"]).group(0)
    assert link.startswith(base + "/pager/ack/")
    answer = oncall(acked)
    assert answer["team"]["slug"] == TEAM
    assert answer["escalation"]["state"] == "active"
    [page] = answer["pages"]
    assert (page["user"], page["step_position"], page["status"]) == (ONCALL, 1, "delivered")
    assert [(d["kind"], d["state"]) for d in page["deliveries"]] == [
        ("ntfy", "sent"), ("email", "skipped")
    ]  # fmt: skip
    second_step_due = at(page["created_at"]) + 60  # the step's wait: one minute

    # (c) The link, signed out: GET shows the incident and the button, POST acknowledges.
    phone = http_session()
    shown = phone.get(link, timeout=10)
    assert shown.status_code == 200, shown.text[:500]
    assert f"Incident #{acked}" in shown.text
    assert 'data-testid="ack-button"' in shown.text
    assert oncall(acked)["escalation"]["state"] == "active"  # opening it acknowledged nothing
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown.text).group(1)
    done = phone.post(link, data={"csrfmiddlewaretoken": csrf}, headers={"Referer": link},
                      timeout=10)  # fmt: skip
    assert done.status_code == 200, done.text[:500]
    assert f"Acknowledged by {ONCALL}." in done.text
    assert "You are the incident commander." in done.text
    again = phone.post(link, data={"csrfmiddlewaretoken": csrf}, timeout=10)
    assert again.status_code == 409  # a link works once
    assert "already used" in again.text
    incident = get(session, f"{base}/api/v1/incidents/{acked}/")
    assert (incident["status"], incident["commander"]) == ("acknowledged", ONCALL)
    escalation = wait_for(
        lambda: (e := oncall(acked)["escalation"])["state"] == "acknowledged" and e,
        timeout=30, every=0.5, what="the escalation to stop on the acknowledgement",
    )  # fmt: skip
    assert escalation["acknowledged_by"] == ONCALL

    # The other incident: ntfy answers 500 (a 5xx is tried once more), so the page
    # falls through to ana's email, which arrives at the SMTP server with its own link.
    def mailed(incident_id: int) -> list:
        return [m for m in smtp.mails if f"#{incident_id}:" in m.subject]

    mail = wait_for(lambda: mailed(unacked), timeout=WAIT, every=0.5, what="the email page")[0]
    assert mail.recipients == [ONCALL + "@example.com"]
    mail_link = ACK_LINK.search(mail.text()).group(0)
    [first] = oncall(unacked)["pages"]
    assert [(d["kind"], d["state"]) for d in first["deliveries"]] == [
        ("ntfy", "failed"), ("email", "sent")
    ]  # fmt: skip
    assert "HTTP 500" in first["deliveries"][0]["error"]
    assert not pushed(unacked)  # ntfy refused it: nothing was taken
    assert any(UNACKED_ALERT in r.body.decode() for r in ntfy.requests)

    # (b) Nobody acknowledges it: after the step's one-minute wait, step 2 pages ben
    # through his webhook, signed with his key.
    def hooked(incident_id: int) -> list[Request]:
        return [r for r in webhook.requests if r.json()["incident"]["id"] == incident_id]

    hook = wait_for(lambda: hooked(unacked), timeout=WAIT, every=0.5, what="step 2's webhook")[0]
    escalated_at = time.monotonic()
    assert webhook.signature_ok(hook, SECRET)
    body = hook.json()
    assert (body["event"], body["recipient"], body["page"]["step"]) == ("page", SECOND, 2)
    assert ACK_LINK.fullmatch(body["ack_url"])
    pages = oncall(unacked)["pages"]
    assert [(p["user"], p["step_position"]) for p in pages] == [(ONCALL, 1), (SECOND, 2)]

    # The acknowledged incident's step 2 was due meanwhile: two ticks after it, still
    # nothing went to ben (or anyone) for it.
    wait_for(lambda: time.time() > second_step_due, timeout=WAIT, every=0.5,
             what="the acknowledged incident's second step to fall due")  # fmt: skip
    ticks = ticks_done(stack["log"])
    wait_for(lambda: ticks_done(stack["log"]) >= ticks + 2, timeout=30, every=0.5,
             what="two escalation ticks after it was due")  # fmt: skip
    assert not hooked(acked)
    assert len(pushed(acked)) == 1
    assert [p["status"] for p in oncall(acked)["pages"]] == ["acknowledged"]
    assert oncall(acked)["escalation"]["state"] == "acknowledged"

    # The email's link acknowledges the second incident too: ana takes command.
    form = http_session()
    shown = form.get(mail_link, timeout=10)
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', shown.text).group(1)
    done = form.post(mail_link, data={"csrfmiddlewaretoken": csrf}, timeout=10)
    assert done.status_code == 200
    assert f"Acknowledged by {ONCALL}." in done.text
    incident = get(session, f"{base}/api/v1/incidents/{unacked}/")
    assert (incident["status"], incident["commander"]) == ("acknowledged", ONCALL)
    wait_for(lambda: oncall(unacked)["escalation"]["state"] == "acknowledged", timeout=30,
             every=0.5, what="the second escalation to record the acknowledgement")  # fmt: skip
    timeline = get(session, f"{base}/api/v1/incidents/{unacked}/timeline/")
    linked = [e for e in timeline["results"] if e["kind"] == "page"
              and e["payload"].get("event") == "acknowledged"]  # fmt: skip
    assert [e["payload"]["via"] for e in linked] == ["link"]
    print(
        f"stack up {up - started:.0f}s, incidents after {incidents_at - up:.0f}s, "
        f"first page after {paged_at - up:.0f}s, step 2 after {escalated_at - up:.0f}s, "
        f"total {time.monotonic() - started:.0f}s"
    )
