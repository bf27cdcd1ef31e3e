"""Chat latency bench (issue 27: Slack's three-second rule, "answer at once, do the work on
the worker"; a benchmark, not a test: `.venv/bin/python tests/bench/chat_latency.py`).

The stack is production's (tests/bench/pager_common.py): gunicorn, a worker on
default,actions, a notifier on notifications, beat, on their own PostgreSQL database and
Redis key prefix. Slack is the local Web API server of the tests (tests/chat_slack_server.py)
in this process; the console reaches it through OUTGOING_URL_ALLOWLIST=127.0.0.1/32.

2 x (N + warm-up) SEV3 incidents are opened through the webhook (their threads go to the
workspace's default channel). Then, interleaved at BENCH_CHAT_RATE pairs a minute:
- a Slack user presses Acknowledge on one incident's state message (signed as Slack signs
  it): the HTTP answer time of the press, and, from the press, the times the incident is
  acknowledged (Incident.acknowledged_at, written by the worker), the reply reaches the
  press's response_url and the state message is edited to "acknowledged";
- half an interval later, a second user acknowledges another incident through the API
  (POST /api/v1/incidents/<id>/acknowledge/ with an API token): its HTTP answer time, the
  baseline every figure is a ratio against.
Every 10th press is sent again with X-Slack-Retry-Num: 1 (Slack's retry): nothing changes.

Exactly once: each incident acknowledged once (one status change), one ChatInteraction per
press (done, as the mapped user; repeats 1 for a retried press), one reply per press.

CHAT_ACTIONS_PER_MINUTE is raised in the stack's environment: one Slack user presses
faster than the per-person limit (20 a minute) here, and the limiter is not what is
measured.

Environment: BENCH_CHAT_COUNT (100 presses, and as many API acknowledgements),
BENCH_CHAT_RATE (pairs a minute, 60), BENCH_REDIS_URL, BENCH_PG_HOST, BENCH_PG_PORT,
BENCH_KEEP_LOGS. Exit status: 0 when every press was answered 200 and every incident was
acknowledged exactly once (and the other exactly-once checks hold); 1 otherwise; 2 when
the bench could not be set up.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script

import requests

from tests.bench import pager_common as pc
from tests.bench import stack

COUNT = int(os.environ.get("BENCH_CHAT_COUNT", "100"))
RATE = float(os.environ.get("BENCH_CHAT_RATE", "60"))  # press + API pairs a minute
WARMUP = 3  # presses and API calls before the timed run, not counted
RETRY_EVERY = 10  # every 10th press is sent again as Slack's retry
OPEN_DEADLINE_S = 300.0  # every state message posted and the posts drained by then
DRAIN_S = 120.0  # after the last press: every incident acknowledged by then
SETTLE_S = 3.0  # then this much longer, for a duplicate to show up
TAG = f"chat{os.getpid()}"
CHAT_USER, API_USER = ("bench-chat", "U0BENCHCHAT"), ("bench-api", "U0BENCHAPI")
_LINK = re.compile(r"/incidents/(\d+)/")


@dataclass
class Press:
    incident: int
    channel: str
    root: str
    reply_id: str  # the response_url's last part
    sent_mono: float = 0.0
    sent_wall: float = 0.0
    seconds: float = 0.0  # the HTTP answer time
    status: int = 0
    retried: bool = False
    retry_status: int = 0


@dataclass
class ApiAck:
    incident: int
    seconds: float = 0.0
    status: int = 0


@dataclass
class Timed:
    """Arrival times (monotonic) of the Slack server's calls and replies: its lists are
    swapped for these, which note when each item is appended (on arrival)."""

    calls: list[tuple[float, Any]] = field(default_factory=list)
    replies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


def timed_slack(slack: Any, timed: Timed) -> None:
    class Calls(list):
        def append(self, call: Any) -> None:
            timed.calls.append((time.monotonic(), call))
            super().append(call)

    class Replies(defaultdict):
        def __missing__(self, key: str) -> list:
            class One(list):
                def append(self, body: Any) -> None:
                    timed.replies[key].append(time.monotonic())
                    super().append(body)

            self[key] = One()
            return self[key]

    slack.calls = Calls(slack.calls)
    slack.responses = Replies(list)


# --- set-up -------------------------------------------------------------------------------
def setup(slack: Any) -> tuple[int, int, int, str]:
    """Two responders with emails, both mapped by the Slack server's users.info, the
    Slack workspace, and an API token for the second: (workspace, chat user, api user,
    token). Plain ORM against the bench's database, as pager_common's set-up is."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from chatops.models import Surface, Workspace
    from console import roles
    from console.api_tokens.services import api_token_issue
    from tests.chat_slack_server import CHANNEL, SIGNING_SECRET

    users = []
    for name, slack_id in (CHAT_USER, API_USER):
        email = f"{name}@example.com"
        user = get_user_model().objects.create_user(username=name, email=email, password=None)
        user.groups.add(Group.objects.get(name=roles.RESPONDER))
        slack.add_user(slack_id, name, email=email)
        users.append(user)
    workspace = Workspace.objects.create(
        name="Bench Slack", surface=Surface.SLACK, api_url=slack.api_url,
        bot_token=slack.token, signing_secret=SIGNING_SECRET, external_team=slack.team,
        default_channel=CHANNEL,
    )  # fmt: skip
    token = api_token_issue(user=users[1], client="bench")[1]
    return workspace.pk, users[0].pk, users[1].pk, token


def incident_body(n: int) -> bytes:
    """A new group with one firing SEV3 ("warning") alert of its own (tests/payloads.py)."""
    from tests import payloads

    lws = f"vllm-chat-bench-{n}"
    alert = payloads.alert(
        pod=f"{lws}-0", severity="warning", starts_at=datetime.now(UTC),
        extra_labels={"lws": lws, "bench": f"{TAG}-{n}"},
    )  # fmt: skip
    body = payloads.notification([alert], group_key=pc.group_key(TAG, n))
    body["groupLabels"] = {"alertname": "VLLMHighTTFT", "bench": f"{TAG}-{n}"}
    return json.dumps(body).encode()


def open_incidents(base: str, count: int) -> list[int]:
    headers = {"Authorization": f"Bearer {stack.TOKEN}", "Content-Type": "application/json"}
    ids = []
    with requests.Session() as session:
        session.trust_env = False
        for n in range(count):
            r = session.post(base + stack.WEBHOOK_PATH, data=incident_body(n), headers=headers,
                             timeout=60)  # fmt: skip
            if r.status_code >= 300 or len(r.json().get("incidents") or []) != 1:
                raise stack.BenchError(f"webhook answered {r.status_code}: {r.text[:300]}")
            ids.append(int(r.json()["incidents"][0]))
    return ids


def state_messages(slack: Any) -> dict[int, tuple[str, str]]:
    """incident -> (channel, ts) of its state message (top level, with its link)."""
    found: dict[int, tuple[str, str]] = {}
    for channel, messages in list(slack.messages.items()):
        for message in list(messages):
            link = _LINK.search(message.get("text") or "")
            if link and not message.get("thread_ts"):
                found.setdefault(int(link.group(1)), (channel, message["ts"]))
    return found


def quiet() -> bool:
    """No chat post waiting to be sent."""
    from chatops.models import ChatPost, PostStatus

    return not ChatPost.objects.exclude(status__in=[PostStatus.SENT, PostStatus.FAILED]).exists()


def wait_for(check: Any, deadline_s: float, every: float = 0.2) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every)  # poll interval
    return bool(check())


# --- the measured calls ----------------------------------------------------------------------
def press(session: requests.Session, url: str, slack: Any, p: Press, retry: bool) -> None:
    from tests.chat_slack_server import SIGNING_SECRET, payload_body, signed_headers

    payload = slack.press(p.channel, p.root, "ack", user_id=CHAT_USER[1], username=CHAT_USER[0])
    p.reply_id = payload["response_url"].rsplit("/", 1)[-1]
    body = payload_body(payload)
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    headers = {**signed_headers(SIGNING_SECRET, body), **kind}
    p.sent_mono, p.sent_wall = time.monotonic(), time.time()
    try:
        p.status = session.post(url, data=body, headers=headers, timeout=30).status_code
    except requests.RequestException:
        p.status = 0
    p.seconds = time.monotonic() - p.sent_mono
    if retry:
        p.retried = True
        again = {**signed_headers(SIGNING_SECRET, body), **kind}
        again |= {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
        try:
            p.retry_status = session.post(url, data=body, headers=again, timeout=30).status_code
        except requests.RequestException:
            p.retry_status = 0


def api_ack(session: requests.Session, base: str, a: ApiAck) -> None:
    started = time.monotonic()
    try:
        url = f"{base}/api/v1/incidents/{a.incident}/acknowledge/"
        a.status = session.post(url, timeout=30).status_code
    except requests.RequestException:
        a.status = 0
    a.seconds = time.monotonic() - started


# --- main -----------------------------------------------------------------------------------
def main() -> int:
    machine = pc.machine()
    run = pc.Run("chat_latency", CHAT_ACTIONS_PER_MINUTE="1000000")
    slack = None
    try:
        run.django_setup()
        from tests.chat_slack_server import SlackServer

        run.database_create()
        slack = SlackServer()
        timed = Timed()
        timed_slack(slack, timed)
        ids = setup(slack)
        run.start()
        return bench(run, slack, timed, ids, machine)
    finally:
        run.close()
        if slack is not None:
            slack.close()


def bench(run: pc.Run, slack: Any, timed: Timed, ids: tuple[int, int, int, str],
          machine: str) -> int:  # fmt: skip
    workspace, chat_user, api_user, token = ids
    base = f"http://127.0.0.1:{run.port}"
    n = COUNT + WARMUP
    opened = open_incidents(base, 2 * n)
    via_chat, via_api = opened[0::2], opened[1::2]
    if not wait_for(lambda: set(opened) <= set(state_messages(slack)), OPEN_DEADLINE_S, 1.0):
        missing = len(set(opened) - set(state_messages(slack)))
        logs = [stack.tail(run.log(name)) for name in ("worker", "notifier")]
        raise stack.BenchError(f"{missing} state messages never posted:\n" + "\n".join(logs))
    wait_for(quiet, OPEN_DEADLINE_S, 1.0)  # triage's edits too: the run starts quiet
    roots = state_messages(slack)
    url = f"{base}/chat/slack/{workspace}/interactions/"
    chat_s, api_s = requests.Session(), requests.Session()
    for s in (chat_s, api_s):
        s.trust_env = False
    api_s.headers["Authorization"] = f"Token {token}"
    presses = [Press(i, *roots[i], reply_id="") for i in via_chat]
    acks = [ApiAck(i) for i in via_api]
    for k in range(WARMUP):
        press(chat_s, url, slack, presses[k], retry=False)
        api_ack(api_s, base, acks[k])
    if any(p.status != 200 for p in presses[:WARMUP]) or any(
        a.status != 200 for a in acks[:WARMUP]
    ):
        raise stack.BenchError(
            f"warm-up answers: presses {[p.status for p in presses[:WARMUP]]}, API "
            f"{[a.status for a in acks[:WARMUP]]}\n" + stack.tail(run.log("web"))
        )
    wait_for(lambda: acknowledged(via_chat[:WARMUP]), 60)
    wait_for(quiet, 60, 0.5)

    interval = 60.0 / RATE
    t0 = time.monotonic() + 0.5
    for k in range(COUNT):
        time.sleep(max(0.0, t0 + k * interval - time.monotonic()))
        press(chat_s, url, slack, presses[WARMUP + k], retry=k % RETRY_EVERY == 0)
        time.sleep(max(0.0, t0 + (k + 0.5) * interval - time.monotonic()))
        api_ack(api_s, base, acks[WARMUP + k])
    ran_for = time.monotonic() - t0
    wait_for(lambda: acknowledged(via_chat), DRAIN_S, 0.5)
    wait_for(quiet, DRAIN_S, 0.5)
    time.sleep(SETTLE_S)
    return report(run, timed, workspace, (chat_user, api_user), presses, acks,
                  ran_for, machine)  # fmt: skip


def acknowledged(incidents: list[int]) -> bool:
    from incidents.models import Incident

    done = Incident.objects.filter(pk__in=incidents, acknowledged_at__isnull=False).count()
    return done == len(incidents)


def report(
    run: pc.Run,
    timed: Timed,
    workspace: int,
    users: tuple[int, int],
    presses: list[Press],
    acks: list[ApiAck],
    ran_for: float,
    machine: str,
) -> int:
    from chatops.models import ChatInteraction, InteractionStatus
    from incidents.models import Incident, TimelineEvent, TimelineEventType

    counted, baseline = presses[WARMUP:], acks[WARMUP:]
    every = [p.incident for p in presses] + [a.incident for a in acks]
    rows = {i.pk: i for i in Incident.objects.filter(pk__in=every)}
    changes: dict[int, int] = defaultdict(int)
    for (incident,) in TimelineEvent.objects.filter(
        incident_id__in=every, kind=TimelineEventType.STATUS_CHANGED
    ).values_list("incident_id"):
        changes[incident] += 1
    interactions: dict[int, list[ChatInteraction]] = defaultdict(list)
    all_interactions = list(ChatInteraction.objects.filter(workspace_id=workspace))
    for row in all_interactions:
        interactions[row.incident_id or 0].append(row)

    # Where each press's effects showed, monotonic: the state edit is the first
    # chat.update of its root that says "acknowledged".
    edits: dict[str, float] = {}
    for at, call in timed.calls:
        if (
            call.method == "chat.update"
            and "status: acknowledged" in str(call.body.get("text", "")).lower()
        ):
            edits.setdefault(str(call.body.get("ts")), at)
    answer_ms = [p.seconds * 1000 for p in counted]
    api_ms = [a.seconds * 1000 for a in baseline]
    applied_ms: list[float] = []
    reply_ms: list[float] = []
    edit_ms: list[float] = []
    for p in counted:
        acked = rows[p.incident].acknowledged_at
        if acked is not None:
            applied_ms.append((acked.timestamp() - p.sent_wall) * 1000)
        if timed.replies.get(p.reply_id):
            reply_ms.append((timed.replies[p.reply_id][0] - p.sent_mono) * 1000)
        if p.root in edits:
            edit_ms.append((edits[p.root] - p.sent_mono) * 1000)

    not_200 = sum(1 for p in presses if p.status != 200)
    retry_not_200 = sum(1 for p in presses if p.retried and p.retry_status != 200)
    api_not_200 = sum(1 for a in acks if a.status != 200)
    not_acked = sum(1 for i in every if rows[i].status != "acknowledged")
    acked_twice = sum(1 for i in every if changes[i] > 1)
    never_changed = sum(1 for i in every if changes[i] == 0)
    bad_rows = 0
    for p in presses:
        mine = interactions.get(p.incident, [])
        ok = (
            len(mine) == 1
            and mine[0].status == InteractionStatus.DONE
            and mine[0].user_id == users[0]
            and mine[0].repeats == (1 if p.retried else 0)
        )
        bad_rows += not ok
    strangers = len(all_interactions) - len(presses)  # rows for no press of ours
    replies_off = sum(1 for p in presses if len(timed.replies.get(p.reply_id, [])) != 1)
    wrong_source = sum(
        1
        for e in TimelineEvent.objects.filter(
            incident_id__in=[p.incident for p in presses],
            kind=TimelineEventType.STATUS_CHANGED,
        ).exclude(source="slack")
    )
    exactly_once = not (not_acked or acked_twice or never_changed or bad_rows or strangers
                        or replies_off or retry_not_200 or wrong_source)  # fmt: skip

    p50 = pc.pct(api_ms, 0.5)
    p95 = pc.pct(api_ms, 0.95)
    print()
    print(
        f"Chat latency (issue 27): {len(counted)} Slack presses + {len(baseline)} API "
        f"acknowledgements, interleaved at {RATE:g} pairs/min (ran {ran_for:.1f} s); "
        f"{sum(p.retried for p in counted)} presses retried"
    )
    print(f"  ({machine})")
    print(f"  {'':<56}{'p50 / p95 / max (ms)':>26}   ratio to API answer p50 / p95")
    for label, values in (
        ("Slack press: HTTP answer", answer_ms),
        ("Slack press -> incident acknowledged (DB)", applied_ms),
        ("Slack press -> reply at the response_url", reply_ms),
        ("Slack press -> state message edited", edit_ms),
        ("API acknowledge: HTTP answer (baseline)", api_ms),
    ):
        ratio = f"{pc.pct(values, 0.5) / p50:.2f}x / {pc.pct(values, 0.95) / p95:.2f}x"
        print(f"  {label:<56}{pc.p50_95_max(values, 1, '{:.0f}'):>26}   {ratio}")
    print(f"  (measured: {len(applied_ms)} acknowledged, {len(reply_ms)} replies, "
          f"{len(edit_ms)} state edits of {len(counted)} presses)")  # fmt: skip
    worst = max(answer_ms) if answer_ms else float("nan")
    targets = [
        pc.Target("every press answered 200", f"{not_200} not", not not_200),
        pc.Target("press answered within Slack's 3 s, max", f"{worst:.0f} ms", worst < 3000),
        pc.Target("every API acknowledge answered 200", f"{api_not_200} not", not api_not_200),
        pc.Target("every incident acknowledged exactly once", "yes" if exactly_once else "NO",
                  exactly_once, ", ".join(f"{k} {v}" for k, v in (
                      ("not acknowledged", not_acked), ("two status changes", acked_twice),
                      ("no status change", never_changed), ("bad interaction rows", bad_rows),
                      ("unknown interactions", strangers), ("not one reply", replies_off),
                      ("retry not 200", retry_not_200), ("press not from slack", wrong_source),
                  ) if v)),
    ]  # fmt: skip
    pc.print_targets(targets)
    if not exactly_once or not_200:
        print("worker log tail:\n" + stack.tail(run.log("worker")))
        print("web log tail:\n" + stack.tail(run.log("web")))
    return 0 if exactly_once and not not_200 and not api_not_200 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except stack.BenchError as exc:
        print(f"bench setup failed: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("bench interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
