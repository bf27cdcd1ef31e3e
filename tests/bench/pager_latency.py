"""Pager latency bench (issue 26; a benchmark, not a test: `make bench`).

From the webhook's answer to the first page handed to the transport, under a storm of
new incidents (100 a minute by default): each incident is a new Alertmanager group
posted to the console's webhook; its escalation (the default team's default policy:
page one person) pages that person through ntfy, to a receiver in this process that
notes when each message arrives. Latency = the message's arrival minus the webhook's
answer, per incident.

The stack is production's (tests/bench/pager_common.py): gunicorn, a worker on
default,actions, a notifier on notifications, beat, on their own PostgreSQL database and
Redis key prefix. In-run baseline, interleaved with the storm at the same rate: the bare
transport call, pager.paging.send.send() made in this process with the same message
(the text of a real page) to the same receiver: call start -> arrival.

Every incident must be paged exactly once: one Page in the database, one message at the
receiver, delivered.

Environment: BENCH_PAGER_SECONDS (120), BENCH_PAGER_RATE (new incidents a minute, 100),
BENCH_TICK_SECONDS (5, the setting's default), BENCH_REDIS_URL
(redis://127.0.0.1:6379/15), BENCH_PG_HOST, BENCH_PG_PORT, BENCH_KEEP_LOGS (keep the
processes' logs).
Exit status: 0 when every incident was paged exactly once and every call answered; 1
otherwise (the issue sets no number for the latency: reported, not failed); 2 when the
bench could not be set up.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script

from tests.bench import pager_common as pc
from tests.bench import stack

SECONDS = float(os.environ.get("BENCH_PAGER_SECONDS", "120"))
RATE = float(os.environ.get("BENCH_PAGER_RATE", "100"))  # new incidents a minute
WARMUP = 5  # incidents (and bare calls) before the timed storm, not counted
DRAIN_S = 120.0  # after the last post: every page must be at the receiver by then
SETTLE_S = 3.0  # then this much longer, for a duplicate to show up
TAG = f"lat{os.getpid()}"


@dataclass
class Bare:
    started: float  # monotonic
    error: str = ""


def bare_calls(text, address: str, count: int, t0: float, interval: float, out: list[Bare]):
    """The baseline: send() as the worker calls it, half an interval after each post."""
    from pager.models import ContactKind
    from pager.paging.send import SendError, send

    for k in range(count):
        time.sleep(max(0.0, t0 + (k + 0.5) * interval - time.monotonic()))
        call = Bare(time.monotonic())
        try:
            send(ContactKind.NTFY, address, text, ref=f"bare.{k}")
        except SendError as exc:
            call.error = str(exc)
        out.append(call)


def page_text_of(page_id: int):
    """The message the worker sent for a page (its link names that page)."""
    from pager.models import Page
    from pager.paging.ack import ack_link
    from pager.paging.messages import page_text

    page = Page.objects.select_related("incident", "user").get(pk=page_id)
    return page_text(page, ack_url=ack_link(page))


def arrived_pages(receiver: pc.Receiver, topics: set[str]) -> Counter:
    return Counter(a.page_id for a in receiver.snapshot() if a.topic in topics)


def wait_for(check, deadline_s: float) -> bool:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)  # poll interval
    return check()


def main() -> int:
    machine = pc.machine()
    receiver = pc.Receiver()
    run = pc.Run("pager_latency")
    try:
        run.django_setup()
        run.database_create()
        person = pc.pager_setup(receiver, [("oncall", 0)])["oncall"]
        run.start()
        return bench(run, receiver, person, machine)
    finally:
        run.close()
        receiver.close()


def bench(run: pc.Run, receiver: pc.Receiver, person: pc.Person, machine: str) -> int:
    from pager.models import Page

    topics = {person.primary, person.fallback}
    bare_address = receiver.address("bare")
    webhook = pc.Webhook(run.port)
    warm = [webhook.new_incident(f"{TAG}w", n) for n in range(WARMUP)]
    if any(not 200 <= a.status < 300 for a in warm):
        raise stack.BenchError(f"warm-up webhook answers: {[a.status for a in warm]}\n"
                               + stack.tail(run.log("web")))  # fmt: skip
    if not wait_for(lambda: len(arrived_pages(receiver, topics)) >= WARMUP, 120):
        logs = [stack.tail(run.log(name)) for name in ("worker", "notifier")]
        raise stack.BenchError("the warm-up incidents were not paged:\n" + "\n".join(logs))
    warm_page = min(p for p in arrived_pages(receiver, topics) if p is not None)
    text = page_text_of(warm_page)
    warm_bare: list[Bare] = []
    bare_calls(text, bare_address, WARMUP, time.monotonic(), 0.0, warm_bare)
    if any(b.error for b in warm_bare):
        raise stack.BenchError(f"the bare call fails: {warm_bare[0].error}")
    bare_before = sum(1 for a in receiver.snapshot() if a.topic == "bare")

    count = max(1, round(SECONDS * RATE / 60))
    interval = 60.0 / RATE
    bare: list[Bare] = []
    t0 = time.monotonic() + 0.5
    baseline = threading.Thread(
        target=bare_calls, args=(text, bare_address, count, t0, interval, bare), daemon=True
    )
    baseline.start()
    answers: list[pc.Answer] = []
    for n in range(count):
        time.sleep(max(0.0, t0 + n * interval - time.monotonic()))
        answers.append(webhook.new_incident(TAG, n))
    posted_for = time.monotonic() - t0
    webhook.close()
    baseline.join(timeout=60 + interval * 2)

    from incidents.models import Incident

    ok = [a for a in answers if 200 <= a.status < 300]
    keys = [a.group_key for a in ok]

    def incident_ids() -> dict[str, int]:
        rows = Incident.objects.filter(grouping_key__in=keys).values_list("grouping_key", "pk")
        return dict(rows)

    def drained() -> bool:
        ids = incident_ids()
        if len(ids) < len(keys):
            return False
        pages = dict(Page.objects.filter(incident_id__in=ids.values()).values_list("pk", "status"))
        got = arrived_pages(receiver, topics)
        return len(pages) >= len(ids) and all(got[p] for p in pages)

    wait_for(drained, DRAIN_S)
    time.sleep(SETTLE_S)
    return report(
        run=run, receiver=receiver, person=person, answers=answers, ok=ok,
        incident_ids=incident_ids(), bare=bare, bare_before=bare_before, count=count,
        posted_for=posted_for, machine=machine,
    )  # fmt: skip


def report(*, run, receiver, person, answers, ok, incident_ids, bare, bare_before, count,
           posted_for, machine) -> int:  # fmt: skip
    from pager.models import DeliveryState, Page, PageDelivery, PageStatus

    topics = {person.primary, person.fallback}
    arrivals = receiver.snapshot()
    pages = list(
        Page.objects.filter(incident_id__in=incident_ids.values()).values(
            "pk", "incident_id", "status", "created_at", "escalation__started_at"
        )
    )
    sent = {
        d["page_id"]: d
        for d in PageDelivery.objects.filter(
            page_id__in=[p["pk"] for p in pages], state=DeliveryState.SENT
        ).values("page_id", "claimed_at", "sent_at", "position")
    }
    pages_of = Counter(p["incident_id"] for p in pages)
    page_of_incident = {p["incident_id"]: p for p in pages}
    first_arrival: dict[int, pc.Arrival] = {}
    times_arrived: Counter = Counter()
    for a in arrivals:
        if a.topic in topics and a.page_id is not None:
            times_arrived[a.page_id] += 1
            first_arrival.setdefault(a.page_id, a)
    known = set(Page.objects.values_list("pk", flat=True))  # the warm-up's too
    strangers = sum(n for pid, n in times_arrived.items() if pid not in known)
    by_key = {a.group_key: a for a in ok}

    latency, to_start, to_made, to_claim, to_arrival = [], [], [], [], []
    for key, incident_id in incident_ids.items():
        page = page_of_incident.get(incident_id)
        answer = by_key[key]
        if page is None or page["pk"] not in first_arrival:
            continue
        arrival = first_arrival[page["pk"]]
        latency.append(arrival.mono - answer.mono)
        to_arrival.append(arrival.wall - answer.wall)
        to_start.append(page["escalation__started_at"].timestamp() - answer.wall)
        to_made.append(page["created_at"].timestamp() - answer.wall)
        if page["pk"] in sent:
            to_claim.append(sent[page["pk"]]["claimed_at"].timestamp() - answer.wall)

    bare_arrivals = [a for a in arrivals if a.topic == "bare"][bare_before:]
    bare_ok = [b for b in bare if not b.error]
    bare_lat = [a.mono - b.started for a, b in zip(bare_arrivals, bare_ok, strict=False)]

    non_2xx = len(answers) - len(ok)
    no_incident = len(ok) - len(incident_ids)
    unpaged = sum(1 for i in incident_ids.values() if pages_of[i] == 0)
    paged_twice = sum(1 for i in incident_ids.values() if pages_of[i] > 1)
    never_arrived = sum(1 for p in pages if times_arrived[p["pk"]] == 0)
    arrived_twice = sum(1 for p in pages if times_arrived[p["pk"]] > 1)
    undelivered = sum(1 for p in pages if p["status"] != PageStatus.DELIVERED)
    fallbacks = sum(1 for d in sent.values() if d["position"] > 1)  # deliveries count from 1
    bare_failed = len(bare) - len(bare_ok) + (count - len(bare))
    exactly_once = not (no_incident or unpaged or paged_twice or never_arrived or arrived_twice
                        or undelivered or strangers)  # fmt: skip

    web_ms = [a.seconds * 1000 for a in ok]
    starts = [a.mono - a.seconds for a in answers]
    rate = (len(starts) - 1) * 60 / (starts[-1] - starts[0]) if len(starts) > 1 else RATE
    tick_started = run.log("worker").read_bytes().count(b"started the escalation of incident")
    print()
    print(
        f"Pager latency (issue 26): {count} new incidents at {RATE:g}/min for {SECONDS:g} s "
        f"(posted in {posted_for:.1f} s), PAGER_TICK_SECONDS={pc.TICK_SECONDS:g}"
    )
    print(f"  ({machine})")
    pc.line(
        "webhook request p50 / p95 (ms)", f"{pc.pct(web_ms, 0.5):.1f} / {pc.pct(web_ms, 0.95):.1f}"
    )
    p50, p95 = pc.pct(latency, 0.5) * 1000, pc.pct(latency, 0.95) * 1000
    b50, b95 = pc.pct(bare_lat, 0.5) * 1000, pc.pct(bare_lat, 0.95) * 1000
    pc.line("webhook answer -> page at the receiver p50 / p95 / max (ms)",
            pc.p50_95_max(latency, 1000, "{:.0f}"))  # fmt: skip
    pc.line("bare transport call -> at the receiver p50 / p95 / max (ms)",
            pc.p50_95_max(bare_lat, 1000, "{:.1f}"))  # fmt: skip
    pc.line("ratio pager / bare call, p50 / p95", f"{p50 / b50:.1f}x / {p95 / b95:.1f}x")
    print("  where the time goes, from the webhook's answer (wall clock, p50 / p95, ms):")
    for label, values in (
        ("escalation started (the start task ran)", to_start),
        ("page made", to_made),
        ("delivery claimed (page_send ran)", to_claim),
        ("message at the receiver", to_arrival),
    ):
        pc.line(
            f"  {label}", f"{pc.pct(values, 0.5) * 1000:.0f} / {pc.pct(values, 0.95) * 1000:.0f}"
        )
    pc.line("pages sent through the fallback method", str(fallbacks))
    pc.line("escalations the tick started (the start task was not first)", str(tick_started))
    targets = [
        pc.Target("webhook answer -> first page at the transport, p95", f"{p95:.0f} ms", None,
                  f"the pager adds {p95 - b95:.0f} ms p95 over the bare call's {b95:.1f} ms; "
                  "the issue sets no number"),
        pc.Target("every incident paged exactly once", "yes" if exactly_once else "NO",
                  exactly_once, ", ".join(f"{k} {v}" for k, v in (
                      ("no incident", no_incident), ("no page", unpaged),
                      ("two pages", paged_twice), ("never arrived", never_arrived),
                      ("arrived twice", arrived_twice), ("not delivered", undelivered),
                      ("unknown pages", strangers)) if v)),
        pc.Target("every webhook post answered 2xx", f"{non_2xx} not", not non_2xx),
        pc.Target("every bare call went out", f"{bare_failed} failed", not bare_failed,
                  bare[0].error if bare and bare[0].error else ""),
        pc.Target("the storm kept its rate", f"{rate:.0f}/min", rate >= 0.95 * RATE),
    ]  # fmt: skip
    pc.print_targets(targets)
    if not exactly_once:
        print("worker log tail:\n" + stack.tail(run.log("worker")))
        print("notifier log tail:\n" + stack.tail(run.log("notifier")))
    return 0 if exactly_once and not non_2xx and not bare_failed else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except stack.BenchError as exc:
        print(f"bench setup failed: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("bench interrupted; cleaned up", file=sys.stderr)
        sys.exit(130)
