"""An incident's timeline as COPY text lines: the one ingest and the buttons write
(kinds, sources, payload shapes, message ids in `payload["msg"]` beside the English
`message`), in time order, naming the same alerts as the alert rows."""

from __future__ import annotations

from postmortems.fleet_year import texts
from postmortems.fleet_year.clock import Clock, esc
from postmortems.fleet_year.plan import REOPEN_WINDOW, Inc
from postmortems.fleet_year.rows import Alerts, N, Shape, dumps, fingerprint

EVENT_FIELDS = ("id", "incident", "kind", "occurred_at", "actor", "source", "message", "payload")


def _ref(inc: Inc, sh: Shape, al: Alerts, j: int, clock: Clock) -> str:
    p = al.pods[j]
    node = sh.nodes[p] if sh.nodes else ""
    return (
        f'{{"fingerprint":"{fingerprint(inc.group, p)}","alertname":"{sh.alertname}",'
        f'"pod":"{sh.pods[p]}","node":"{node}","starts_at":"{clock.iso(al.starts[j])}"}}'
    )


def _wave(kind: str, key: str, refs: list[str], name: str, count: int) -> tuple:
    """An alert_fired / alert_resolved line: at most 200 alerts named, all counted."""
    message = texts.PLURAL[key][count != 1] % {"count": count, "names": name}
    payload = (
        f'{{"alerts":[{",".join(refs[:200])}],"count":{count},'
        f'"msg":[["{key}",{{"count":{count},"names":"{name}"}}]]}}'
    )
    return kind, N, "alertmanager", message, payload


def _say(key: str, params: dict, extra: dict | None = None) -> tuple[str, str]:
    """(English message, payload JSON) of one message id; a nested phrase is [[id, {}]]."""
    words = {k: texts.EN[v[0][0]] if isinstance(v, list) else v for k, v in params.items()}
    # esc: the grouping key holds quotes, which JSON escapes with a backslash.
    return texts.EN[key] % words, esc(dumps({**(extra or {}), "msg": [[key, params]]}))


def _status(frm: str, to: str, verb: str, key: str, params: dict | None = None) -> tuple:
    return _say(key, params or {}, {"from": frm, "to": to, "verb": verb})


class Timeline:
    """One incident's entries: (when, order, kind, actor, source, message, payload)."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, str, str, str, str, str]] = []

    def add(self, t: int, kind: str, actor: str, source: str, said: tuple[str, str]) -> None:
        self.rows.append((t, len(self.rows), kind, actor, source, said[0], said[1]))

    def wave(self, t: int, line: tuple) -> None:
        self.rows.append((t, len(self.rows), *line))


def timeline(
    inc: Inc,
    sh: Shape,
    al: Alerts,
    clock: Clock,
    people: list[tuple[str, str]],
    gk: str,
    end: int,
) -> list[tuple[int, int, str, str, str, str, str]]:
    """The incident's timeline in time order. `people`: (user id, username) of the users."""
    rng, tl, am = sh.rng, Timeline(), "alertmanager"
    opened = {"grouping_key": gk, "receiver": texts.RECEIVER, "external_url": texts.EXTERNAL_URL}
    tl.add(
        inc.trig, "incident_opened", N, am, _say("incidents.opened", {"title": sh.title}, opened)
    )
    for key, kind, waves in (
        ("incidents.alerts.firing", "alert_fired", al.fired),
        ("incidents.alerts.resolved", "alert_resolved", al.resolved),
    ):
        for when, chunk in waves:
            refs = [_ref(inc, sh, al, j, clock) for j in chunk[:200]]
            tl.wave(when, _wave(kind, key, refs, sh.alertname, len(chunk)))
    person, who = people[inc.user]
    state = "triggered"
    if inc.acked:
        said = _status("triggered", "acknowledged", "acknowledged", "incidents.status.acknowledged")
        tl.add(inc.acked, "status_changed", person, "console", said)
        params = {"actor": who, "to": who, "from": [["incidents.word.nobody", {}]]}
        said = _say("incidents.commander.took_by_ack", params, {"from": None, "to": who})
        tl.add(inc.acked, "commander_changed", person, "console", said)
        state = "acknowledged"
    _cycles(inc, sh, al, clock, tl, person, state)
    _related(inc, sh, tl)
    last = inc.resolved or end
    notes = rng.choice((0, 0, 0, 1, 1, 2)) + (2 if inc.sev in ("SEV1", "SEV2") else 0)
    values = {
        "lws": sh.lws_name,
        "ns": sh.ns,
        "pod": sh.pods[sh.first],
        "team": sh.team,
        "node": (sh.nodes or sh.pods)[sh.first],
        "cluster": sh.cluster,
    }
    for _ in range(notes):
        t = inc.trig + 1 + rng.randrange(max(1, last - inc.trig - 1))
        text = rng.choice(texts.NOTES).format(**values)
        tl.add(t, "note", people[rng.randrange(len(people))][0], "console", (text, "{}"))
    tl.rows.sort()
    return tl.rows


def _cycles(
    inc: Inc, sh: Shape, al: Alerts, clock: Clock, tl: Timeline, person: str, state: str
) -> None:
    """Mitigation by the alerts, resolution by a person; again for each reopening."""
    am = "alertmanager"
    cycles = inc.cycles or ((0, inc.mitigated, inc.resolved),)
    ref = [_ref(inc, sh, al, 0, clock)]
    for n, (again, calm, done) in enumerate(cycles):
        if again:
            params = {"alert": sh.alertname, "minutes": REOPEN_WINDOW // 60}
            said = _status(
                "resolved", "triggered", "reopened", "incidents.status.reopened_by_alert", params
            )
            tl.add(again, "status_changed", N, am, said)
            tl.wave(again, _wave("alert_fired", "incidents.alerts.firing", ref, sh.alertname, 1))
            if calm:
                line = _wave("alert_resolved", "incidents.alerts.resolved", ref, sh.alertname, 1)
                tl.wave(calm, line)
            state = "triggered"
        if calm:
            said = _status(state, "mitigated", "mitigated", "incidents.status.all_resolved")
            tl.add(calm, "status_changed", N, am, said)
            state = "mitigated"
        if done:
            tl.add(done, "status_changed", person, "console", _resolved(inc, sh, n))
            state = "resolved"


def _resolved(inc: Inc, sh: Shape, n: int) -> tuple[str, str]:
    rng = sh.rng
    extra: dict[str, object] = {"from": "mitigated", "to": "resolved", "verb": "resolved"}
    if rng.random() < 0.3:
        reason = rng.choice(texts.RESOLVE_REASONS)
        parts: list = [["incidents.status.resolved.reason", {"reason": reason}]]
        message = texts.EN["incidents.status.resolved.reason"] % {"reason": reason}
    else:
        parts, message = [["incidents.status.resolved", {}]], texts.EN["incidents.status.resolved"]
    if n == 0 and not inc.acked and inc.sev in ("SEV1", "SEV2"):
        # Nobody took command of a SEV1/SEV2: resolving it needed a confirmation.
        extra["no_commander"] = True
        parts.append(["incidents.status.no_commander", {}])
        message += " " + texts.EN["incidents.status.no_commander"]
    return message, dumps({**extra, "msg": parts})


def _related(inc: Inc, sh: Shape, tl: Timeline) -> None:
    """incident_linked on both sides (incidents/related/services.py)."""
    links = []
    if inc.related_to:
        links.append((inc.related_to, inc.id, inc.linked_at, inc.why, inc.lead_runbook))
    links += [(inc.id, other, at, why, runbook) for other, at, why, runbook in inc.leads]
    for lead, related, at, (why_key, why_params), runbook in links:
        why = texts.EN[why_key] % why_params
        payload = {"lead": lead, "related": related, "why": why, "previous_lead": None}
        if related == inc.id:
            key, params = "incidents.related.part_of", {"lead": lead, "runbook": runbook}
        else:
            key, params = "incidents.related.leads", {"id": related, "runbook": runbook}
        message = texts.EN[key] % {**params, "why": why}
        params["why"] = [[why_key, why_params]]
        said = (message, dumps({**payload, "msg": [[key, params]]}))
        tl.add(at, "incident_linked", N, "system", said)


def event_lines(inc: Inc, rows: list, clock: Clock, first_id: int) -> list[str]:
    ts, head = clock.ts, f"\t{inc.id}\t"
    return [
        f"{first_id + n}{head}{kind}\t{ts(t)}\t{actor}\t{source}\t{message}\t{payload}"
        for n, (t, _, kind, actor, source, message, payload) in enumerate(rows)
    ]
