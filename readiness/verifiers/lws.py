"""Items read from the LeaderWorkerSet's templates: drain, readinessProbe, NCCL watchdog,
OOM restart and zone spread. Paths in the evidence are the object's own, so a person can
find them with `kubectl get lws -o yaml`."""

from __future__ import annotations

import re

from django.conf import settings

from console.texts import Msg, msg
from readiness.texts import listing
from readiness.verifiers import Finding, failed, passed

ZONE_KEY = "topology.kubernetes.io/zone"
DEFAULT_GRACE_SECONDS = 30  # Kubernetes' default terminationGracePeriodSeconds
NCCL_ASYNC = "TORCH_NCCL_ASYNC_ERROR_HANDLING"
NCCL_TIMEOUTS = ("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "NCCL_TIMEOUT", "TORCH_NCCL_BLOCKING_WAIT")
GROUP_RESTART = "RecreateGroupOnPodRestart"
LEADER = "spec.leaderWorkerTemplate.leaderTemplate"
WORKER = "spec.leaderWorkerTemplate.workerTemplate"


def _model_load_seconds() -> int:
    return int(settings.READINESS_MODEL_LOAD_SECONDS)


def _templates(lws: dict) -> list[tuple[str, dict]]:
    lwt = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    found = []
    # LWS uses the worker template for the leader too when leaderTemplate is absent.
    for path, key in ((LEADER, "leaderTemplate"), (WORKER, "workerTemplate")):
        if isinstance(lwt.get(key), dict):
            found.append((path, lwt[key].get("spec") or {}))
    return found


def _leader(lws: dict) -> tuple[str, dict]:
    templates = _templates(lws)
    return templates[0] if templates else (LEADER, {})


def _containers(spec: dict) -> list[dict]:
    return [c for c in spec.get("containers") or [] if isinstance(c, dict)]


def _main(spec: dict) -> dict:
    containers = _containers(spec)
    return next(
        (c for c in containers if c.get("name") == "vllm"), containers[0] if containers else {}
    )


def _num(value, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _probe_window(probe: dict) -> int:
    """Seconds from container start until the probe gives up: initial delay + tries."""
    delay = _num(probe.get("initialDelaySeconds"), 0)
    period = _num(probe.get("periodSeconds"), 10)
    failures = _num(probe.get("failureThreshold"), 3)
    return delay + period * failures


def _handler(probe: dict) -> str | Msg | None:
    """How the probe asks (a phrase for httpGet, the kind's name otherwise); None: it has
    no handler."""
    if isinstance(probe.get("httpGet"), dict):
        get = probe["httpGet"]
        path, port = str(get.get("path", "/")), str(get.get("port"))
        return msg("readiness.probe.http", path=path, port=port)
    for kind in ("exec", "tcpSocket", "grpc"):
        if kind in probe:
            return kind
    return None


def _shown_handler(probe: dict) -> str | Msg:
    handler = _handler(probe)
    return msg("readiness.probe.no_handler") if handler is None else handler


def readiness_probe(lws: dict) -> Finding:
    path, spec = _leader(lws)
    container = _main(spec)
    where = f"{path}.spec.containers[{container.get('name', '?')}]"
    probe = container.get("readinessProbe")
    if not isinstance(probe, dict):
        return failed(
            msg("readiness.probe.absent"),
            [msg("readiness.evidence.absent", path=f"{where}.readinessProbe")],
        )
    need = _model_load_seconds()
    evidence = [
        msg("readiness.evidence.field", path=f"{where}.readinessProbe", value=_shown_handler(probe))
    ]
    evidence.append(
        msg(
            "readiness.probe.timing",
            delay=_num(probe.get("initialDelaySeconds"), 0),
            period=_num(probe.get("periodSeconds"), 10),
            failures=_num(probe.get("failureThreshold"), 3),
        )
    )
    startup = container.get("startupProbe")
    # A startupProbe holds the other probes back until it succeeds, so it carries the load time.
    window, which = _probe_window(probe), "readinessProbe"
    if isinstance(startup, dict):
        window, which = max(window, _probe_window(startup)), "startupProbe"
        evidence.append(
            msg(
                "readiness.probe.startup",
                handler=_shown_handler(startup),
                window=_probe_window(startup),
            )
        )
    liveness = container.get("livenessProbe")
    if isinstance(liveness, dict) and not isinstance(startup, dict):
        live = _probe_window(liveness)
        evidence.append(msg("readiness.probe.liveness", window=live))
        if live < need:
            return failed(msg("readiness.probe.liveness_too_short", live=live, need=need), evidence)
    if _handler(probe) is None:
        return failed(msg("readiness.probe.handler_missing"), evidence)
    if window < need:
        return failed(
            msg("readiness.probe.too_short", which=which, window=window, need=need), evidence
        )
    return passed(
        msg("readiness.probe.ok", handler=_shown_handler(probe), window=window, need=need),
        evidence,
    )


def _prestop_seconds(hook: dict) -> int | None:
    """The sleep a preStop hook makes, when it says (sleep action or `sleep N`)."""
    if isinstance(hook.get("sleep"), dict):
        return _num(hook["sleep"].get("seconds"), 0)
    command = " ".join(str(x) for x in (hook.get("exec") or {}).get("command") or [])
    match = re.search(r"\bsleep\s+(\d+)", command)
    return int(match.group(1)) if match else None


def drain(lws: dict) -> Finding:
    path, spec = _leader(lws)
    container = _main(spec)
    grace = _num(spec.get("terminationGracePeriodSeconds"), DEFAULT_GRACE_SECONDS)
    given = "terminationGracePeriodSeconds" in spec
    field = f"{path}.spec.terminationGracePeriodSeconds"
    evidence = [
        msg("readiness.evidence.field", path=field, value=grace)
        if given
        else msg("readiness.drain.grace_default", path=field, grace=grace)
    ]
    hook = ((container.get("lifecycle") or {}).get("preStop")) or None
    if not isinstance(hook, dict):
        name = container.get("name", "?")
        field = f"{path}.spec.containers[{name}].lifecycle.preStop"
        evidence.append(msg("readiness.evidence.absent", path=field))
        return failed(msg("readiness.drain.no_prestop"), evidence)
    sleep = _prestop_seconds(hook)
    evidence.append(
        msg("readiness.drain.prestop_waits", seconds=sleep)
        if sleep is not None
        else msg("readiness.drain.prestop_hook")
    )
    if sleep is not None and sleep >= grace:
        return failed(msg("readiness.drain.prestop_too_long", sleep=sleep, grace=grace), evidence)
    return passed(msg("readiness.drain.ok", left=grace - (sleep or 0)), evidence)


def _env(container: dict) -> dict[str, str | None]:
    """Each variable's value; None when it comes from a reference (valueFrom)."""
    return {
        e["name"]: str(e["value"]) if "value" in e else None
        for e in container.get("env") or []
        if isinstance(e, dict) and e.get("name")
    }


def _pair(name: str, value: str | None) -> Msg:
    shown = msg("readiness.value.from_reference") if value is None else value
    return msg("readiness.env.pair", name=name, value=shown)


def nccl_watchdog(lws: dict) -> Finding:
    evidence, missing = [], []
    templates = _templates(lws)
    for path, spec in templates:
        container = _main(spec)
        env = _env(container)
        asynch = env.get(NCCL_ASYNC)
        pairs = [
            _pair(NCCL_ASYNC, asynch)
            if NCCL_ASYNC in env and (asynch is None or asynch)
            else msg("readiness.env.pair", name=NCCL_ASYNC, value=msg("readiness.value.unset"))
        ]
        pairs += [_pair(k, env[k]) for k in NCCL_TIMEOUTS if k in env]
        evidence.append(
            msg(
                "readiness.nccl.evidence",
                path=path,
                container=str(container.get("name", "?")),
                env=listing(pairs),
            )
        )
        if asynch not in ("1", "2", "3"):
            missing.append(path.rsplit(".", 1)[-1])
    if not templates:
        return failed(msg("readiness.nccl.no_templates"), evidence)
    if missing:
        return failed(
            msg("readiness.nccl.missing", env=NCCL_ASYNC, templates=listing(missing)), evidence
        )
    return passed(msg("readiness.nccl.ok", env=NCCL_ASYNC), evidence)


def oom_restart(lws: dict) -> Finding:
    lwt = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    policy = str(lwt.get("restartPolicy") or "Default")
    field = "spec.leaderWorkerTemplate.restartPolicy"
    evidence = [msg("readiness.evidence.field", path=field, value=policy)]
    bad = []
    for path, spec in _templates(lws):
        pod_policy = str(spec.get("restartPolicy") or "Always")
        evidence.append(
            msg("readiness.evidence.field", path=f"{path}.spec.restartPolicy", value=pod_policy)
        )
        if pod_policy == "Never":
            bad.append(path)
    if bad:
        return failed(msg("readiness.oom.never", policy="Never"), evidence)
    if policy != GROUP_RESTART:
        return failed(msg("readiness.oom.alone", policy=policy, wanted=GROUP_RESTART), evidence)
    return passed(msg("readiness.oom.ok"), evidence)


def zone_spread(lws: dict) -> Finding:
    path, spec = _leader(lws)
    constraints = [c for c in spec.get("topologySpreadConstraints") or [] if isinstance(c, dict)]
    zonal = [c for c in constraints if c.get("topologyKey") == ZONE_KEY]
    field = f"{path}.spec.topologySpreadConstraints"
    evidence = [
        msg(
            "readiness.zone.evidence",
            path=field,
            topology=str(c.get("topologyKey")),
            skew=str(c.get("maxSkew")),
            when=str(c.get("whenUnsatisfiable", "DoNotSchedule")),
        )
        for c in constraints
    ] or [msg("readiness.evidence.absent", path=field)]
    if not zonal:
        return failed(msg("readiness.zone.none", topology=ZONE_KEY), evidence)
    return passed(msg("readiness.zone.ok", topology=ZONE_KEY), evidence)
