"""The scorecard: each pass criterion of the plan judged from what the console recorded
(the incident's timestamps, its confirmed diagnosis, its action runs), with the evidence a
reviewer needs to check the verdict (timestamps, values, links)."""

from __future__ import annotations

from datetime import datetime

from django.urls import reverse

from actions.models import ActionRun, ActionRunStatus
from incidents.models import TimelineEvent
from runbooks.catalog import load_catalog
from runbooks.timeline_kinds import DIAGNOSIS_CONFIRMED

UNDONE = (ActionRunStatus.FAILED, ActionRunStatus.CANCELLED, ActionRunStatus.REJECTED)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _seconds(later: datetime | None, earlier: datetime | None) -> float | None:
    if later is None or earlier is None:
        return None
    return round((later - earlier).total_seconds(), 1)


def _criterion(cid, title, passed, evidence, values=None, links=None) -> dict:
    return {
        "id": cid,
        "title": title,
        "passed": bool(passed),
        "evidence": evidence,
        "values": values or {},
        "links": links or [],
    }


def _within(cid, title, took, limit, start_name, start, end_name, end, links, missing) -> dict:
    values = {start_name: _iso(start), end_name: _iso(end), "seconds": took, "limit_seconds": limit}
    if took is None:
        return _criterion(cid, title, False, missing, values, links)
    ok = took <= limit
    verdict = "within" if ok else "over"
    return _criterion(cid, title, ok, f"{took:g} s, {verdict} the agreed {limit} s", values, links)


def drill_scorecard(*, run, ended_reason: str, aborted: bool = False) -> dict:
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
            {
                "label": f"incident #{incident.pk}",
                "url": reverse("incidents:detail", args=[incident.pk]),
            }
        ]
    criteria = []
    injected = run.injected_at
    triggered = incident.triggered_at if incident else None
    mttd = _seconds(triggered, injected)
    criteria.append(_within(
        "detected", f"An alert opened the incident within {plan['detect_within_seconds']} s",
        mttd, plan["detect_within_seconds"], "injected_at", injected, "incident_opened_at",
        triggered, links, "no incident was opened",
    ))  # fmt: skip
    mtta = _seconds(incident.acknowledged_at if incident else None, triggered)
    criteria.append(_within(
        "acknowledged", f"Acknowledged within {plan['acknowledge_within_seconds']} s",
        mtta, plan["acknowledge_within_seconds"], "incident_opened_at", triggered,
        "acknowledged_at", incident.acknowledged_at if incident else None, links,
        "not acknowledged" if incident else "no incident was opened",
    ))  # fmt: skip
    got_runbook = incident.runbook if incident else ""
    criteria.append(_criterion(
        "runbook", f"The incident carries runbook {plan['runbook']}",
        incident is not None and got_runbook == plan["runbook"],
        f"runbook {got_runbook or '(none)'}" if incident else "no incident opened",
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
    criteria.append(_criterion(
        "branch", f"Diagnosis confirmed on branch {expected or '(any of the runbook)'}",
        branch_ok,
        f"confirmed {confirmed.get('runbook')}/{confirmed.get('branch')} "
        f"at {_iso(diagnosis.occurred_at)}" if diagnosis
        else "no diagnosis was confirmed on the incident",
        {"expected": expected, "actual": confirmed.get("branch")}, links,
    ))  # fmt: skip
    fixes = [
        r for r in runs
        if r.status == ActionRunStatus.SUCCEEDED and r.undo_of_id is None and r.kind in fix_kinds
    ]  # fmt: skip
    run_links = [
        {
            "label": f"action run #{r.pk} ({r.kind})",
            "url": reverse("actions:action-run", args=[r.pk]),
        }
        for r in fixes
    ]
    criteria.append(_criterion(
        "fix_applied", "A recommended fix ran and succeeded",
        bool(fixes),
        f"{fixes[0].kind} succeeded at {_iso(fixes[0].finished_at)}" if fixes
        else f"no succeeded run of {', '.join(sorted(fix_kinds)) or 'a recommended action'}",
        {"recommended": sorted(fix_kinds), "runs": [r.pk for r in fixes]}, run_links,
    ))  # fmt: skip
    mitigated = incident.mitigated_at if incident else None
    mttr = _seconds(mitigated, injected)
    criteria.append(_within(
        "recovered", f"Recovered (alert resolved) within {plan['recover_within_seconds']} s",
        mttr, plan["recover_within_seconds"], "injected_at", injected, "mitigated_at",
        mitigated, links, "the alert did not resolve while the drill ran",
    ))  # fmt: skip
    undone = [
        r
        for r in runs
        if r.undo_of_id is None and any(u.status not in UNDONE for u in r.undos.all())
    ]
    undo_links = [
        {
            "label": f"action run #{r.pk} ({r.kind})",
            "url": reverse("actions:action-run", args=[r.pk]),
        }
        for r in undone
    ]
    criteria.append(_criterion(
        "no_undo", "No action needed undoing",
        incident is not None and not undone,
        "no incident opened" if incident is None
        else f"{len(undone)} run(s) were undone" if undone
        else f"{len(runs)} run(s), none undone",
        {"undone": [r.pk for r in undone]}, undo_links,
    ))  # fmt: skip
    passed = all(c["passed"] for c in criteria)
    return {
        "outcome": "aborted" if aborted else "passed" if passed else "failed",
        "passed": None if aborted else passed,
        "aborted_reason": ended_reason if aborted else "",
        "ended_reason": ended_reason,
        "measurements": {"mttd_seconds": mttd, "mtta_seconds": mtta, "mttr_seconds": mttr},
        "criteria": criteria,
    }
