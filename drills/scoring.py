"""The scorecard: each pass criterion of the plan judged from what the console recorded
(the incident's timestamps, its confirmed diagnosis, its action runs), with the evidence a
reviewer needs to check the verdict (timestamps, values, links)."""

from __future__ import annotations

from datetime import datetime

from django.urls import reverse

from actions.models import ActionRun, ActionRunStatus
from console.texts import Msg, msg
from drills.texts import moment
from incidents.models import TimelineEvent
from runbooks.catalog import load_catalog
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED

UNDONE = (ActionRunStatus.FAILED, ActionRunStatus.CANCELLED, ActionRunStatus.REJECTED)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _seconds(later: datetime | None, earlier: datetime | None) -> float | None:
    if later is None or earlier is None:
        return None
    return round((later - earlier).total_seconds(), 1)


def _link(label: Msg, url: str) -> dict:
    return {"label": label.english, "label_msg": label.stored, "url": url}


def _criterion(cid, title: Msg, passed, evidence: Msg, values=None, links=None) -> dict:
    """English in `title` and `evidence` (as before), their parts beside them (`*_msg`),
    worded in each reader's language when read."""
    return {
        "id": cid,
        "title": title.english,
        "title_msg": title.stored,
        "passed": bool(passed),
        "evidence": evidence.english,
        "evidence_msg": evidence.stored,
        "values": values or {},
        "links": links or [],
    }


def _within(cid, title, took, limit, start_name, start, end_name, end, links, missing) -> dict:
    values = {start_name: _iso(start), end_name: _iso(end), "seconds": took, "limit_seconds": limit}
    if took is None:
        return _criterion(cid, title, False, missing, values, links)
    ok = took <= limit
    key = "drills.evidence.within" if ok else "drills.evidence.over"
    return _criterion(cid, title, ok, msg(key, took=f"{took:g}", limit=limit), values, links)


def _reason(ended_reason: Msg | str) -> tuple[str, list | None]:
    if isinstance(ended_reason, Msg):
        return ended_reason.english, ended_reason.stored
    return ended_reason, None  # a caller that still words it in English itself


def drill_scorecard(*, run, ended_reason: Msg | str, aborted: bool = False) -> dict:
    """The scorecard of `run` as things stand. A few queries (events, runs, undos).

    An aborted drill (stopped by a person, a real SEV1, its maximum duration, an error)
    did not run its course: its outcome is "aborted" with the reason, `passed` is None,
    and the criteria are kept as measured when it stopped, judged on nothing."""
    plan = run.plan_snapshot
    incident = run.incident
    catalog_rb = load_catalog().get(plan["runbook"])
    expected = plan.get("expected_branch") or ""
    branch = next(
        (b for b in (catalog_rb.decision_tree if catalog_rb else ()) if b.id == expected), None
    )
    if branch is not None:
        fix_kinds = set(branch.recommended_actions)
    else:
        fix_kinds = {a.kind for a in (catalog_rb.emergency_actions if catalog_rb else ())}
    links = []
    if incident is not None:
        links = [
            _link(
                msg("drills.link.incident", id=incident.pk),
                reverse("incidents:detail", args=[incident.pk]),
            )
        ]
    no_incident = msg("drills.evidence.no_incident")
    criteria = []
    injected = run.injected_at
    triggered = incident.triggered_at if incident else None
    mttd = _seconds(triggered, injected)
    criteria.append(_within(
        "detected", msg("drills.criterion.detected", seconds=plan["detect_within_seconds"]),
        mttd, plan["detect_within_seconds"], "injected_at", injected, "incident_opened_at",
        triggered, links, no_incident,
    ))  # fmt: skip
    mtta = _seconds(incident.acknowledged_at if incident else None, triggered)
    criteria.append(_within(
        "acknowledged",
        msg("drills.criterion.acknowledged", seconds=plan["acknowledge_within_seconds"]),
        mtta, plan["acknowledge_within_seconds"], "incident_opened_at", triggered,
        "acknowledged_at", incident.acknowledged_at if incident else None, links,
        msg("drills.evidence.not_acknowledged") if incident else no_incident,
    ))  # fmt: skip
    got_runbook = incident.runbook if incident else ""
    if incident is None:
        runbook_evidence = no_incident
    elif got_runbook:
        runbook_evidence = msg("drills.evidence.runbook", runbook=got_runbook)
    else:
        runbook_evidence = msg("drills.evidence.runbook_none")
    criteria.append(_criterion(
        "runbook", msg("drills.criterion.runbook", runbook=plan["runbook"]),
        incident is not None and got_runbook == plan["runbook"], runbook_evidence,
        {"expected": plan["runbook"], "actual": got_runbook}, links,
    ))  # fmt: skip
    diagnosis = None
    runs: list[ActionRun] = []
    if incident is not None:
        diagnosis = (
            TimelineEvent.objects.filter(incident=incident, kind=DIAGNOSIS_CONFIRMED)
            .order_by("-occurred_at", "-id")
            .first()
        )
        runs = list(
            ActionRun.objects.filter(incident=incident)
            .prefetch_related("undos")
            .order_by("requested_at")
        )
    confirmed = (diagnosis.payload or {}) if diagnosis else {}
    branch_ok = (
        bool(diagnosis)
        and confirmed.get("runbook") == plan["runbook"]
        and (not expected or confirmed.get("branch") == expected)
    )
    branch_evidence = msg("drills.evidence.no_diagnosis")
    if diagnosis is not None:
        branch_evidence = msg(
            "drills.evidence.confirmed",
            runbook=str(confirmed.get("runbook")),
            branch=str(confirmed.get("branch")),
            at=moment(diagnosis.occurred_at),
        )
    criteria.append(_criterion(
        "branch",
        msg("drills.criterion.branch", branch=expected or msg("drills.criterion.any_branch")),
        branch_ok, branch_evidence,
        {"expected": expected, "actual": confirmed.get("branch")}, links,
    ))  # fmt: skip
    fixes = [
        r for r in runs
        if r.status == ActionRunStatus.SUCCEEDED and r.undo_of_id is None and r.kind in fix_kinds
    ]  # fmt: skip
    run_links = [
        _link(
            msg("drills.link.action_run", id=r.pk, kind=r.kind),
            reverse("actions:action-run", args=[r.pk]),
        )
        for r in fixes
    ]
    if fixes:
        fix_evidence = msg(
            "drills.evidence.fix_succeeded", kind=fixes[0].kind, at=moment(fixes[0].finished_at)
        )
    elif fix_kinds:
        fix_evidence = msg("drills.evidence.no_fix", kinds=", ".join(sorted(fix_kinds)))
    else:
        fix_evidence = msg("drills.evidence.no_fix_any")
    criteria.append(_criterion(
        "fix_applied", msg("drills.criterion.fix_applied"), bool(fixes), fix_evidence,
        {"recommended": sorted(fix_kinds), "runs": [r.pk for r in fixes]}, run_links,
    ))  # fmt: skip
    mitigated = incident.mitigated_at if incident else None
    mttr = _seconds(mitigated, injected)
    criteria.append(_within(
        "recovered", msg("drills.criterion.recovered", seconds=plan["recover_within_seconds"]),
        mttr, plan["recover_within_seconds"], "injected_at", injected, "mitigated_at",
        mitigated, links, msg("drills.evidence.not_recovered"),
    ))  # fmt: skip
    undone = [
        r
        for r in runs
        if r.undo_of_id is None and any(u.status not in UNDONE for u in r.undos.all())
    ]
    undo_links = [
        _link(
            msg("drills.link.action_run", id=r.pk, kind=r.kind),
            reverse("actions:action-run", args=[r.pk]),
        )
        for r in undone
    ]
    if incident is None:
        undo_evidence = no_incident
    elif undone:
        undo_evidence = msg("drills.evidence.undone", count=len(undone))
    else:
        undo_evidence = msg("drills.evidence.none_undone", count=len(runs))
    criteria.append(_criterion(
        "no_undo", msg("drills.criterion.no_undo"), incident is not None and not undone,
        undo_evidence, {"undone": [r.pk for r in undone]}, undo_links,
    ))  # fmt: skip
    passed = all(c["passed"] for c in criteria)
    reason, reason_parts = _reason(ended_reason)
    card = {
        "outcome": "aborted" if aborted else "passed" if passed else "failed",
        "passed": None if aborted else passed,
        "aborted_reason": reason if aborted else "",
        "ended_reason": reason,
        "measurements": {"mttd_seconds": mttd, "mtta_seconds": mtta, "mttr_seconds": mttr},
        "criteria": criteria,
    }
    if reason_parts is not None:
        card["ended_reason_msg"] = reason_parts
        card["aborted_reason_msg"] = reason_parts if aborted else None
    return card
