"""Items read from Prometheus (DCGM series), the runbook catalogue against the alert
rules, and the drill history."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import yaml
from django.conf import settings

from readiness.verifiers import Finding, failed, passed, unknown

DCGM_SERIES = ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS")
DRILL_MAX_AGE = timedelta(days=90)


def dcgm_query(metric: str, namespace: str, lws: str) -> str:
    return f'count({metric}{{namespace="{namespace}",lws="{lws}"}})'


def dcgm(counts: dict[str, float | None], namespace: str, lws: str) -> Finding:
    """`counts`: series per DCGM metric for the pool's GPUs (None: no series)."""
    evidence = [
        f"{dcgm_query(metric, namespace, lws)} = {'no series' if n is None else f'{n:g}'}"
        for metric, n in counts.items()
    ]
    missing = [metric for metric, n in counts.items() if not n]
    if missing:
        return failed(
            f"Prometheus has no {', '.join(missing)} series for {namespace}/{lws}: GPU faults "
            "on this pool would go unseen.",
            evidence,
        )
    gpus = max(n or 0 for n in counts.values())
    return passed(f"DCGM exporter series present for {gpus:g} GPUs of the pool.", evidence)


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
        return failed("The alert rules define no alerts, so nothing pages anyone.", [])
    evidence, missing = [], []
    for name, file in alerts:
        runbook = catalog.for_alert(name)
        evidence.append(f"{name} ({file}) -> {runbook.slug if runbook else 'no runbook'}")
        if runbook is None:
            missing.append(name)
    if missing:
        return failed(f"No runbook answers {', '.join(missing)}.", evidence)
    return passed(f"Every one of the {len(alerts)} alerts has a runbook.", evidence)


def _drill_time(run) -> datetime | None:
    return getattr(run, "ended_at", None) or getattr(run, "started_at", None)


def chaos_drill(run, now: datetime) -> Finding:
    """`run`: the latest passed drill run on the deployment, or None."""
    if run is None:
        return failed("No drill has passed against this deployment.", [])
    when = _drill_time(run)
    plan = getattr(run, "plan", None)
    evidence = [
        f"drill run #{run.pk} ({getattr(run, 'runbook', '') or 'runbook ?'}"
        f"{', plan ' + repr(plan.title) if plan else ''}) passed at {when:%Y-%m-%d %H:%M} UTC"
        if when
        else f"drill run #{run.pk} passed"
    ]
    if when is None:
        return unknown("The last passed drill has no end time.", evidence)
    age = now - when
    if age > DRILL_MAX_AGE:
        return failed(
            f"The last passed drill is {age.days} days old (more than {DRILL_MAX_AGE.days}).",
            evidence,
        )
    return passed(f"A drill passed {age.days} days ago.", evidence)
