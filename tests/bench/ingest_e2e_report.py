"""The end-to-end storm's report (tests/bench/ingest_e2e.py): figures, then each target
of issue #14 with its measured value and PASS or MISS."""

from __future__ import annotations

import os

from tests.bench import stack, storm, summary

SECONDS = float(os.environ.get("BENCH_STORM_SECONDS", "30"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
ONCALL_ALERTS_S = 523  # Grafana OnCall on this machine, same storm (issue #14)
POLL_EVERY_S = 0.01


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(label: str, value: str) -> None:
    print(f"  {label:<52}{value}")


def report(
    *,
    clients,
    wall,
    e2e,
    right,
    poller,
    posted,
    base_wall,
    timed_alerts,
    rss,
    peaks,
    cpu,
    logs,
    load,
    queries,
    triage,
):
    sent = [s for c in clients for s in c.sent]
    ok = [s for s in sent if 200 <= s.status < 300]
    failures = [f for c in clients for f in c.failures]
    mix = {k: sum(1 for s in ok if s.kind == k) for k in (storm.NEW, storm.REPEAT, storm.RESOLVE)}
    alerts = len(ok) * storm.ALERTS_PER_BODY
    e2e_rate = alerts / e2e
    lags = [poller.seen[k] - t for k, t in posted.items() if k in poller.seen]
    unseen = sum(1 for k in posted if k not in poller.seen)
    base_rate = timed_alerts / base_wall
    ratio = (alerts / wall) / base_rate
    rss_before, rss_after, rss_end = rss
    growth_mb = (rss_after - rss_before) * 1024 / 1e6
    non_2xx = len(sent) - len(ok)
    print()
    print(
        f"Storm (issue #14): {CLIENTS} clients x {SECONDS:.0f} s, {storm.ALERTS_PER_BODY}-alert "
        f"bodies: {mix[storm.NEW]} new groups, {mix[storm.REPEAT]} unchanged repeats, "
        f"{mix[storm.RESOLVE]} resolutions ({alerts} alerts)"
    )
    print(f"  ({os.cpu_count()} CPUs; 1-min load average {load:.1f} before the bench started)")
    line("end-to-end alerts/s (first post -> every row right)", f"{e2e_rate:.0f}")
    line("accepted requests/s", f"{len(ok) / wall:.1f}")
    for kind in ("all", *mix):
        ms = [s.latency * 1000 for s in ok if kind in ("all", s.kind)]
        line(f"request p50 / p95, {kind} (ms)", f"{pct(ms, 0.5):.1f} / {pct(ms, 0.95):.1f}")
    line("lag until the incident is visible p50 / p95 (s)", f"{pct(lags, 0.5):.3f} / "
         f"{pct(lags, 0.95):.3f} (polled every {POLL_EVERY_S * 1000:.0f} ms)")  # fmt: skip
    line("peak RSS web / worker (MiB, summed over processes)",
         f"{peaks[0] / 1024:.0f} / {peaks[1] / 1024:.0f}")  # fmt: skip
    line("web RSS warm / after 10k alerts / after the storm", f"{rss_before / 1024:.0f} / "
         f"{rss_after / 1024:.0f} / {rss_end / 1024:.0f} MiB")  # fmt: skip
    web_ms, db_ms, worker_ms, client_ms = (c / max(len(sent), 1) * 1000 for c in cpu)
    line("CPU per request: web / database / worker / clients",
         f"{web_ms:.1f} / {db_ms:.1f} / {worker_ms:.1f} / {client_ms:.1f} ms")  # fmt: skip
    line("raw psycopg upsert of the same rows (alerts/s)", f"{base_rate:.0f}")
    line("auto-triage: incidents with an entry / a runbook",
         f"{triage.triaged} / {triage.incidents} ({triage.open_untriaged} open without one, "
         f"{triage.due} still due)")  # fmt: skip
    line("auto-triage: opening -> entry p50 / p95 (s); drains", f"{pct(triage.lags, 0.5):.2f} / "
         f"{pct(triage.lags, 0.95):.2f}; {triage.drains} drain tasks")  # fmt: skip
    lag95 = pct(lags, 0.95)
    targets = [
        stack.Target("end-to-end alerts/s >= 10x Grafana OnCall (5,300)", f"{e2e_rate:.0f}",
                     e2e_rate >= 5300, f"{e2e_rate / ONCALL_ALERTS_S:.1f}x OnCall's 523"),
        stack.Target("lag p95 <= 0.2 s", f"{lag95:.3f} s", bool(lags) and lag95 <= 0.2
                     and not unseen, f"{unseen} incidents never seen" if unseen else ""),
        stack.Target("no non-2xx answer", f"{non_2xx} non-2xx, {len(failures)} failed",
                     not non_2xx and not failures),
        stack.Target("webhook ingest >= 0.5x raw psycopg upsert", f"{ratio:.2f}x", ratio >= 0.5),
        stack.Target("web RSS after a 10k-alert storm <= +20 MB", f"{growth_mb:+.1f} MB",
                     growth_mb <= 20),
        stack.Target("queries per body constant (1 vs 100 alerts)",
                     ", ".join(f"{k} {c['1']}/{c['100']}" for k, c in queries.items()),
                     all(c["1"] == c["100"] for c in queries.values())),
        stack.Target("rows equal the baseline's, incidents right", "yes" if right else "NO",
                     right),
        stack.Target("every open incident with a runbook auto-triaged",
                     "yes" if triage.done else "NO", triage.done),
    ]  # fmt: skip
    stack.print_targets(targets)
    # Into `make bench`'s summary (tests/bench/summary.py; nothing when run by hand).
    summary.record(
        "ingest e2e",
        "end-to-end alerts/s vs Grafana OnCall",
        e2e_rate / ONCALL_ALERTS_S,
        10,
        e2e_rate >= 5300,
        f"{e2e_rate:.0f} alerts/s",
        higher_is_better=True,
    )
    summary.record(
        "ingest e2e",
        "webhook ingest vs raw psycopg upsert (storm)",
        ratio,
        0.5,
        ratio >= 0.5,
        f"{alerts / wall:.0f} vs {base_rate:.0f} alerts/s",
        higher_is_better=True,
    )
    summary.record(
        "ingest e2e",
        "lag until the incident is visible, p95",
        lag95,
        0.2,
        targets[1].met,
        targets[1].note,
        unit=" s",
    )
    summary.record(
        "ingest e2e", "web RSS after a 10k-alert storm", growth_mb, 20, growth_mb <= 20, unit=" MB"
    )
    sound = not non_2xx and not failures and right and triage.done
    summary.record(
        "ingest e2e",
        "every answer 2xx, rows right, auto-triage done (1: yes)",
        float(sound),
        1,
        sound,
        f"{non_2xx} non-2xx, {len(failures)} failed, rows {'right' if right else 'WRONG'}",
        unit="",
        higher_is_better=True,
    )
    for f in failures[:10]:
        print(f"  failure: {f}")
    if failures:
        print("web log tail:\n" + stack.tail(logs / "web.log"))
    return 0 if right and triage.done and not failures and not non_2xx else 1
