"""One verification pass: read the LeaderWorkerSet and the namespace's ConfigMaps once,
ask Prometheus, the catalogue and the drill history, and turn each into a Finding per
verifiable item. A source that cannot be reached makes its items `unknown`, naming the
source and the reason; it never fails the other items. Runs on the worker (I/O only,
no database writes: `readiness.services.verification_run` stores the result). The
checks themselves are the pure functions beside it (lws.py, config.py, signals.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import yaml
from django.conf import settings

from actions.kinds.base import ActionError, TargetNotFound
from console.texts import Msg, msg
from drills.selectors import drill_last_passed
from readiness.items import BY_KEY, VERIFIED_KEYS
from readiness.texts import detail
from readiness.verifiers import Finding, config, failed, lws, signals, unknown
from runbooks import prometheus
from runbooks.catalog import CatalogError, load_catalog

LWS_CHECKS: dict[str, Callable[[dict], Finding]] = {
    "drain": lws.drain,
    "readiness_probe": lws.readiness_probe,
    "nccl_watchdog": lws.nccl_watchdog,
    "oom_restart": lws.oom_restart,
    "zone_spread": lws.zone_spread,
}


def _configmap_names() -> tuple[str, str]:
    return settings.READINESS_ROUTER_CONFIGMAP, settings.READINESS_GATEWAY_CONFIGMAP


def _k8s_unknown(exc: Exception, what: Msg) -> Finding:
    return unknown(msg("readiness.source.k8s_unreachable", what=what, detail=detail(exc)))


def _lws_findings(api, namespace: str, name: str) -> dict[str, Finding]:
    what = msg("readiness.where.lws", namespace=namespace, name=name)
    try:
        obj = api.get_lws(namespace, name)
    except TargetNotFound:
        gone = unknown(msg("readiness.source.lws_gone", what=what))
        return dict.fromkeys(LWS_CHECKS, gone)
    except ActionError as exc:
        return dict.fromkeys(LWS_CHECKS, _k8s_unknown(exc, what))
    return {key: check(obj) for key, check in LWS_CHECKS.items()}


def _configmap_findings(api, namespace: str) -> dict[str, Finding]:
    router, gateway = _configmap_names()
    found: dict[str, Finding] = {}
    for name, checks in (
        (router, {"router_fallback": config.router_fallback}),
        (
            gateway,
            {"gateway_limits": config.gateway_limits, "max_tokens_cap": config.max_tokens_cap},
        ),
    ):
        where = msg("readiness.where.configmap", namespace=namespace, name=name)
        try:
            obj = api.get_configmap(namespace, name)
        except TargetNotFound:
            missing = failed(
                msg("readiness.source.configmap_missing", where=where),
                [msg("readiness.evidence.field", path=where, value=404)],
            )
            found.update(dict.fromkeys(checks, missing))
            continue
        except ActionError as exc:
            found.update(dict.fromkeys(checks, _k8s_unknown(exc, where)))
            continue
        found.update({key: check(obj, where) for key, check in checks.items()})
    return found


def _dcgm_finding(namespace: str, name: str) -> Finding:
    counts: dict[str, float | None] = {}
    try:
        for metric in signals.DCGM_SERIES:
            data = prometheus.query(signals.dcgm_query(metric, namespace, name))
            counts[metric] = prometheus.single_value(data)[0]
    except prometheus.PrometheusUnavailable as exc:
        return unknown(msg("readiness.source.prometheus_unreachable", detail=detail(exc)))
    return signals.dcgm(counts, namespace, name)


def _runbooks_finding() -> Finding:
    directory = signals.rules_dir()
    try:
        alerts = signals.alert_names(directory)
    except (OSError, ValueError, yaml.YAMLError) as exc:  # a broken file: unknown, not a crash
        return unknown(
            msg("readiness.source.rules_unreadable", directory=str(directory), detail=detail(exc))
        )
    try:
        catalog = load_catalog()
    except CatalogError as exc:  # names the file and field
        return unknown(msg("readiness.source.catalogue_unloadable", detail=detail(exc)))
    return signals.runbooks_written(alerts, catalog)


def _drill_finding(namespace: str, name: str, now: datetime) -> Finding:
    return signals.chaos_drill(drill_last_passed(namespace=namespace, lws=name, runbook=None), now)


def findings(*, namespace: str, name: str, now: datetime, api_factory) -> dict[str, Finding]:
    """A Finding for every verifiable item. `api_factory()` builds the Kubernetes client
    (it raises when Kubernetes is not configured, which makes those items unknown)."""
    try:
        api = api_factory()
    except ActionError as exc:
        k8s = {
            key: _k8s_unknown(exc, msg("readiness.where.checklist"))
            for key in VERIFIED_KEYS
            if BY_KEY[key].source == "kubernetes"
        }
    else:
        k8s = {**_lws_findings(api, namespace, name), **_configmap_findings(api, namespace)}
    result = {
        **k8s,
        "dcgm": _dcgm_finding(namespace, name),
        "runbooks": _runbooks_finding(),
        "chaos_drill": _drill_finding(namespace, name, now),
    }
    return result
