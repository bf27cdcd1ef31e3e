"""Items read from Prometheus (DCGM series), the runbook catalogue against the alert
rules, and the drill history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml
from django.conf import settings

from console.texts import msg
from readiness.verifiers import Finding, failed, passed, unknown

DCGM_SERIES = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS")
DRILL_MAX_AGE = timedelta(days=90)


def dcgm_query(metric: str, namespace: str, lws: str) -> str:
    return f'count({metric}{{namespace="{namespace}",lws="{lws}"}})'


def dcgm(counts: dict[str, float | None], namespace: str, lws: str) -> Finding:
    """`counts`: series per DCGM metric for the pool's GPUs (None: no series)."""
    evidence = [
        msg(
            "readiness.dcgm.evidence",
            query=dcgm_query(metric, namespace, lws),
            value=msg("readiness.value.no_series") if n is None else f"{n:g}",
        )
        for metric, n in counts.items()
    ]
    missing = [metric for metric, n in counts.items() if not n]
    if missing:
        return failed(
            msg(
                "readiness.dcgm.missing",
                metrics=", ".join(missing),
                deployment=f"{namespace}/{lws}",
            ),
            evidence,
        )
    gpus = max(n or 0 for n in counts.values())
    return passed(msg("readiness.dcgm.ok", count=int(gpus)), evidence)


def rules_dir() -> Path:
    return Path(settings.READINESS_RULES_DIR)


def alert_names(directory: Path) -> list[tuple[str, str]]:
    """(alert name, file) for every alerting rule in the directory's *.yml/*.yaml files."""
    found = []
    for path in sorted([*directory.glob("*.yml"), *directory.glob("*.yaml")]):
        doc = yaml.safe_load(path.read_text()) or {}
        for group in doc.get("groups") or []:
            for rule in group.get("rules") or []:
                if isinstance(rule, dict) and rule.get("alert"):
                    found.append((str(rule["alert"]), path.name))
    return found


def runbooks_written(alerts: list[tuple[str, str]], catalog) -> Finding:
    if not alerts:
        return failed(msg("readiness.runbooks.no_alerts"), [])
    evidence, missing = [], []
    for name, file in alerts:
        runbook = catalog.for_alert(name)
        shown = runbook.slug if runbook else msg("readiness.value.no_runbook")
        evidence.append(msg("readiness.runbooks.evidence", alert=name, file=file, runbook=shown))
        if runbook is None:
            missing.append(name)
    if missing:
        return failed(msg("readiness.runbooks.missing", alerts=", ".join(missing)), evidence)
    return passed(msg("readiness.runbooks.ok", count=len(alerts)), evidence)


def _drill_time(run) -> datetime | None:
    return getattr(run, "ended_at", None) or getattr(run, "started_at", None)


def chaos_drill(run, now: datetime) -> Finding:
    """`run`: the latest passed drill run on the deployment, or None."""
    if run is None:
        return failed(msg("readiness.drill.none"), [])
    when = _drill_time(run)
    if when is None:
        evidence = [msg("readiness.drill.evidence_no_time", id=run.pk)]
        return unknown(msg("readiness.drill.no_end"), evidence)
    plan = getattr(run, "plan", None)
    runbook = getattr(run, "runbook", "") or msg("readiness.value.runbook_unknown")
    moment = f"{when.astimezone(UTC):%Y-%m-%d %H:%M}"
    evidence = [
        msg(
            "readiness.drill.evidence_plan",
            id=run.pk,
            runbook=runbook,
            plan=repr(plan.title),
            at=moment,
        )
        if plan
        else msg("readiness.drill.evidence", id=run.pk, runbook=runbook, at=moment)
    ]
    age = now - when
    if age > DRILL_MAX_AGE:
        return failed(
            msg("readiness.drill.too_old", days=age.days, max=DRILL_MAX_AGE.days), evidence
        )
    return passed(msg("readiness.drill.ok", days=age.days), evidence)
