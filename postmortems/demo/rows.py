"""The demo incidents as rows, written in bulk: incidents, their alerts, their action
runs with each run's audit, and their timelines, a handful of INSERTs for the whole
history. Bulk rather than the ingest and action services: those would replay every
webhook and run the worker against the simulator for each of ~50 incidents (minutes on
SQLite), and their timeline writes announce themselves to notifications and auto-triage,
which must not fire for history. The rows are the ones those services write (the same
kinds, messages and payload shapes), stamped at the moment each thing happened."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import F

from actions.audit import run_label, run_text_set
from actions.kinds import KINDS
from actions.models import ActionRun, ActionRunEvent, ActionRunStatus
from actions.timeline_kinds import ACTION
from console.texts import Msg, join, msg
from incidents.demo import DemoContext
from incidents.ingest.parse import labels_fingerprint
from incidents.models import (
    Alert,
    AlertStatus,
    Incident,
    IncidentStatus,
    TimelineEvent,
    TimelineEventType,
)
from incidents.texts import event_say
from postmortems.demo import texts  # noqa: F401  (registry: the demo's own ids)
from postmortems.demo.plan import Story
from runbooks.catalog import load_catalog
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED
from runbooks.timeline_text import first_sentence


def in_place() -> Msg:
    """What each demo fix's read-back found (the kinds' own words need a live target)."""
    return msg("postmortems.demo.in_place")


def run_said(run: ActionRun, step: str) -> Msg:
    """A demo run's audit line for `step`, with the ids the actions app uses (no plan:
    the request names the kind and its parameters, as a run without a summary does)."""
    if step == "requested":
        summary = msg("actions.run.params", kind=run.kind, params=str(run.params))
        return msg("actions.run.requested", summary=summary)
    if step == "approved":
        return msg("actions.run.approved")
    if step == "started":
        return msg("actions.run.started")
    summary = msg("actions.run.params", kind=run.kind, params=str(run.params))
    return msg("actions.run.succeeded", summary=summary, detail=in_place())


def grouping_key(story: Story) -> str:
    # "demo:" keeps real Alertmanager groups away from demo incidents: the ingest never
    # reopens or adopts alerts into one (their keys cannot match).
    return f'demo:{{}}:{{alertname="{story.alertname}", lws="{story.lws}"}}'


def title(story: Story) -> str:
    name = story.alertname
    return (story.summary if name.lower() in story.summary.lower() else f"{name}: {story.summary}")[
        :300
    ]


def incidents_write(stories: list[Story], ctx: DemoContext) -> list[Incident]:
    people = {"admin": ctx.admin, "commander": ctx.commander}
    rows = [
        Incident(
            title=title(s),
            severity=s.severity,
            status=IncidentStatus.RESOLVED,
            grouping_key=grouping_key(s),
            runbook=s.runbook,
            namespace=s.labels["namespace"],
            group_labels={"alertname": s.alertname, "lws": s.lws},
            commander=people[s.commander],
            started_at=s.started,
            triggered_at=s.triggered,
            acknowledged_at=s.acknowledged,
            mitigated_at=s.mitigated,
            resolved_at=s.resolved,
            last_alert_at=s.triggered,
            is_drill=s.drill,
            is_demo=True,
        )
        for s in stories
    ]
    incidents = Incident.objects.bulk_create(rows)
    # auto_now(_add) stamped the seeding moment: the rows were created when they opened.
    Incident.objects.filter(pk__in=[i.pk for i in incidents]).update(
        created_at=F("triggered_at"), updated_at=F("resolved_at")
    )
    return incidents


def alerts_write(stories: list[Story], incidents: list[Incident]) -> int:
    rows = []
    for story, incident in zip(stories, incidents, strict=True):
        for pod in story.pods:
            labels = {**story.labels, "pod": pod}
            rows.append(Alert(
                fingerprint=labels_fingerprint(labels), starts_at=story.started,
                alertname=story.alertname, status=AlertStatus.RESOLVED,
                severity=labels["severity"], labels=labels,
                annotations={"summary": story.summary,
                             "description": f"{story.summary} ({pod})"},
                ends_at=story.mitigated,
                generator_url=f"{settings.PROMETHEUS_URL}/graph?g0.expr={story.alertname}",
                grouping_key=incident.grouping_key, incident=incident,
                first_received_at=story.triggered, last_received_at=story.mitigated,
                receive_count=max(1, int((story.mitigated - story.triggered).total_seconds()
                                         // 300)),
            ))  # fmt: skip
    Alert.objects.bulk_create(rows)
    return len(rows)


def _run(story: Story, incident: Incident, ctx: DemoContext) -> ActionRun | None:
    if story.action is None:
        return None
    kind_name, params = story.action
    kind = KINDS[kind_name]
    params = kind.clean(params)  # the kind's defaults, as a request would store them
    requester = ctx.admin if story.commander == "admin" else ctx.commander
    approver = ctx.commander if requester == ctx.admin else ctx.admin
    requested = story.fixed - timedelta(minutes=3)
    run = ActionRun(
        incident=incident, kind=kind_name, target=kind.target(params), params=params,
        idempotency_key=f"demo-{incident.pk}", status=ActionRunStatus.SUCCEEDED,
        requested_by=requester, requested_at=requested, requires_approval=kind.risky,
        decided_by=approver if kind.risky else None,
        decided_at=requested + timedelta(seconds=70) if kind.risky else None,
        queued_at=requested + timedelta(seconds=75 if kind.risky else 1),
        started_at=requested + timedelta(seconds=80 if kind.risky else 3),
        finished_at=story.fixed, attempts=1, runbook=story.runbook,
    )  # fmt: skip
    # The run's texts as the services write them (English column, parts in run.texts).
    run_text_set(run, "verification", in_place(), limit=500)
    if kind.risky:
        why = join([msg("actions.approval.risky", kind=kind_name), msg("actions.approval.then")])
        run_text_set(run, "approval_reason", why)
    return run


def runs_write(stories: list[Story], incidents: list[Incident], ctx: DemoContext) -> dict:
    """The fix of each story, succeeded: {incident id: run}."""
    pending = [(i.pk, _run(s, i, ctx)) for s, i in zip(stories, incidents, strict=True)]
    runs = ActionRun.objects.bulk_create([r for _pk, r in pending if r is not None])
    ActionRun.objects.filter(pk__in=[r.pk for r in runs]).update(updated_at=F("finished_at"))
    by_incident = {r.incident_id: r for r in runs}
    events = []
    for run in by_incident.values():
        first = (
            ActionRunStatus.AWAITING_APPROVAL if run.requires_approval else ActionRunStatus.QUEUED
        )
        steps: list[tuple[Any, Any, str, str, Msg]] = [
            (run.requested_at, run.requested_by, "", first, run_said(run, "requested"))
        ]
        if run.requires_approval:
            steps.append((run.decided_at, run.decided_by, ActionRunStatus.AWAITING_APPROVAL,
                          ActionRunStatus.QUEUED, run_said(run, "approved")))  # fmt: skip
        steps += [
            (run.started_at, None, ActionRunStatus.QUEUED, ActionRunStatus.RUNNING,
             run_said(run, "started")),
            (run.finished_at, None, ActionRunStatus.RUNNING, ActionRunStatus.SUCCEEDED,
             run_said(run, "succeeded")),
        ]  # fmt: skip
        # The audit event's shape (actions/audit.py run_record): English and its parts.
        events += [
            ActionRunEvent(
                run=run, occurred_at=at, actor=actor, status_from=a, status_to=b,
                message=said.english,
                payload={"run": run.pk, "kind": run.kind, "target": run.target,
                         "msg": said.stored},
            )
            for at, actor, a, b, said in steps
        ]  # fmt: skip
    ActionRunEvent.objects.bulk_create(events)
    return by_incident


def _event(incident: Incident, kind: str, at, said: Msg | None, payload: dict[str, Any], *,
           actor=None, source: str = "system", message: str = "") -> TimelineEvent:  # fmt: skip
    """A line as the services write it: English in `message`, parts in payload["msg"]
    (`said` None: a line worded from its payload, as the real one, `message` as given)."""
    event = TimelineEvent(incident=incident, kind=kind, occurred_at=at, actor=actor,
                          source=source, message=message, payload=payload)  # fmt: skip
    if said is not None:
        event_say(event, said)
    return event


def _status(incident, at, old, new, verb, *, actor=None, reason: Msg | None = None):
    return _event(
        incident, TimelineEventType.STATUS_CHANGED, at,
        reason or msg(f"incidents.status.{verb}"),
        {"from": old, "to": new, "verb": verb}, actor=actor,
        source="console" if actor is not None else "alertmanager",
    )  # fmt: skip


def timelines_write(
    stories: list[Story], incidents: list[Incident], runs: dict, ctx: DemoContext
) -> int:
    """Each incident's timeline, as the console would have written it. Not announced
    (timeline_announce): history must not notify anyone or queue auto-triage."""
    people = {"admin": ctx.admin, "commander": ctx.commander}
    catalog = load_catalog()
    S = IncidentStatus
    events: list[TimelineEvent] = []
    for story, inc in zip(stories, incidents, strict=True):
        cmd = people[story.commander]
        refs = [{"fingerprint": labels_fingerprint({**story.labels, "pod": p}),
                 "alertname": story.alertname, "pod": p, "node": story.node,
                 "starts_at": story.started.isoformat()} for p in story.pods]  # fmt: skip
        n = len(refs)
        ack = story.acknowledged
        name = cmd.get_username()
        took = msg("incidents.commander.took_by_ack", actor=name, to=name,
                   **{"from": msg("incidents.word.nobody")})  # fmt: skip
        events += [
            _event(inc, TimelineEventType.INCIDENT_OPENED, story.triggered,
                   msg("incidents.opened", title=inc.title),
                   {"grouping_key": inc.grouping_key, "receiver": "incident-console",
                    "external_url": "http://127.0.0.1:9093"}, source="alertmanager"),
            _event(inc, TimelineEventType.ALERT_FIRED, story.triggered,
                   msg("incidents.alerts.firing", count=n, names=story.alertname),
                   {"alerts": refs, "count": n}, source="alertmanager"),
            _event(inc, TimelineEventType.COMMANDER_CHANGED, ack, took,
                   {"from": None, "to": name}, actor=cmd, source="console"),
            _status(inc, ack, S.TRIGGERED, S.ACKNOWLEDGED, "acknowledged", actor=cmd),
        ]  # fmt: skip
        rb = catalog.get(story.runbook)
        branch = next((b for b in (rb.decision_tree if rb else ()) if b.id == story.branch), None)
        if branch is not None:
            # As runbooks/services.py writes it: the words come from the catalogue, in
            # the reader's language (runbooks/timeline_text.py), and the payload says
            # which; the parts name the runbook and branch for the API and search.
            events.append(_event(
                inc, DIAGNOSIS_CONFIRMED, ack + timedelta(minutes=2), None,
                {"runbook": story.runbook, "branch": branch.id, "checks": []},
                actor=cmd, source="console",
                message=f"Diagnosis confirmed: {branch.id} — {first_sentence(branch.diagnosis)}",
            ))  # fmt: skip
        run = runs.get(inc.pk)
        if run is not None:
            base = {"run": run.pk, "kind": run.kind, "target": run.target}
            events.append(_event(inc, ACTION, run.requested_at,
                                 run_label(run) + run_said(run, "requested"),
                                 {**base, "status": "awaiting_approval" if run.requires_approval
                                  else "queued"},
                                 actor=run.requested_by, source="console"))  # fmt: skip
            if run.requires_approval:
                events.append(_event(inc, ACTION, run.decided_at,
                                     run_label(run) + run_said(run, "approved"),
                                     {**base, "status": "queued"},
                                     actor=run.decided_by, source="console"))  # fmt: skip
            events.append(_event(inc, ACTION, run.finished_at,
                                 run_label(run) + run_said(run, "succeeded"),
                                 {**base, "status": "succeeded"},
                                 source="worker"))  # fmt: skip
        events += [
            _event(inc, TimelineEventType.ALERT_RESOLVED, story.mitigated,
                   msg("incidents.alerts.resolved", count=n, names=story.alertname),
                   {"alerts": refs, "count": n}, source="alertmanager"),
            _status(inc, story.mitigated, S.ACKNOWLEDGED, S.MITIGATED, "mitigated",
                    reason=msg("incidents.status.all_resolved")),
            _status(inc, story.resolved, S.MITIGATED, S.RESOLVED, "resolved", actor=cmd),
        ]  # fmt: skip
    TimelineEvent.objects.bulk_create(events, batch_size=500)
    return len(events)
