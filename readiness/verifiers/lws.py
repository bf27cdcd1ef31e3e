"""Items read from the LeaderWorkerSet's templates: drain, readinessProbe, NCCL watchdog,
OOM restart and zone spread. Paths in the evidence are the object's own, so a person can
find them with `kubectl get lws -o yaml`."""

from __future__ import annotations

import re

from django.conf import settings

from readiness.verifiers import Finding, failed, passed

ZONE_KEY = "topology.kubernetes.io/zone"
DEFAULT_GRACE_SECONDS = 30  # Kubernetes' default terminationGracePeriodSeconds
NCCL_ASYNC = "TORCH_NCCL_ASYNC_ERROR_HANDLING"
NCCL_TIMEOUTS = ("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "NCCL_TIMEOUT", "TORCH_NCCL_BLOCKING_WAIT")
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


def _handler(probe: dict) -> str:
    if isinstance(probe.get("httpGet"), dict):
        get = probe["httpGet"]
        return f"httpGet {get.get('path', '/')} port {get.get('port')}"
    for kind in ("exec", "tcpSocket", "grpc"):
        if kind in probe:
            return kind
    return "no handler"


def readiness_probe(lws: dict) -> Finding:
    path, spec = _leader(lws)
    container = _main(spec)
    where = f"{path}.spec.containers[{container.get('name', '?')}]"
    probe = container.get("readinessProbe")
    if not isinstance(probe, dict):
        return failed(
            "No readinessProbe on the leader: traffic can reach it before the model is loaded.",
            [f"{where}.readinessProbe: absent"],
        )
    need = _model_load_seconds()
    evidence = [f"{where}.readinessProbe: {_handler(probe)}"]
    evidence.append(
        f"initialDelaySeconds {_num(probe.get('initialDelaySeconds'), 0)}, periodSeconds "
        f"{_num(probe.get('periodSeconds'), 10)}, failureThreshold "
        f"{_num(probe.get('failureThreshold'), 3)}"
    )
    startup = container.get("startupProbe")
    # A startupProbe holds the other probes back until it succeeds, so it carries the load time.
    window, which = _probe_window(probe), "readinessProbe"
    if isinstance(startup, dict):
        window, which = max(window, _probe_window(startup)), "startupProbe"
        evidence.append(f"startupProbe: {_handler(startup)}, window {_probe_window(startup)} s")
    liveness = container.get("livenessProbe")
    if isinstance(liveness, dict) and not isinstance(startup, dict):
        live = _probe_window(liveness)
        evidence.append(f"livenessProbe window {live} s")
        if live < need:
            return failed(
                f"The livenessProbe gives up after {live} s, before a {need} s model load "
                "finishes: the pod is killed while loading.",
                evidence,
            )
    if _handler(probe) == "no handler":
        return failed("The readinessProbe has no handler (httpGet, exec, tcpSocket).", evidence)
    if window < need:
        return failed(
            f"The {which} allows {window} s, less than the {need} s a model load takes "
            "(READINESS_MODEL_LOAD_SECONDS).",
            evidence,
        )
    return passed(
        f"readinessProbe on the leader ({_handler(probe)}), {window} s allowed for a {need} s "
        "model load.",
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
    evidence = [
        f"{path}.spec.terminationGracePeriodSeconds: {grace}"
        + ("" if given else " (Kubernetes' default; not set)")
    ]
    hook = ((container.get("lifecycle") or {}).get("preStop")) or None
    if not isinstance(hook, dict):
        evidence.append(
            f"{path}.spec.containers[{container.get('name', '?')}].lifecycle.preStop: absent"
        )
        return failed(
            "No preStop hook on the leader: SIGTERM arrives while the endpoint still gets "
            "traffic, and in-flight requests are cut.",
            evidence,
        )
    sleep = _prestop_seconds(hook)
    evidence.append(
        "preStop: " + (f"waits {sleep} s for endpoints to drain" if sleep is not None else "a hook")
    )
    if sleep is not None and sleep >= grace:
        return failed(
            f"The preStop wait ({sleep} s) uses the whole grace period ({grace} s): vLLM is "
            "killed before it can finish in-flight requests after SIGTERM.",
            evidence,
        )
    left = grace - (sleep or 0)
    return passed(
        f"preStop drains the endpoint, then {left} s remain for vLLM to finish in-flight "
        "requests after SIGTERM.",
        evidence,
    )


def _env(container: dict) -> dict[str, str]:
    return {
        e["name"]: str(e.get("value", "(from a reference)"))
        for e in container.get("env") or []
        if isinstance(e, dict) and e.get("name")
    }


def nccl_watchdog(lws: dict) -> Finding:
    evidence, missing = [], []
    templates = _templates(lws)
    for path, spec in templates:
        container = _main(spec)
        env = _env(container)
        asynch = env.get(NCCL_ASYNC)
        timeouts = [f"{k}={env[k]}" for k in NCCL_TIMEOUTS if k in env]
        evidence.append(
            f"{path} {container.get('name', '?')}: {NCCL_ASYNC}={asynch if asynch else '(unset)'}"
            + (f", {', '.join(timeouts)}" if timeouts else "")
        )
        if asynch not in ("1", "2", "3"):
            missing.append(path.rsplit(".", 1)[-1])
    if not templates:
        return failed("The LeaderWorkerSet has no pod templates.", evidence)
    if missing:
        return failed(
            f"{NCCL_ASYNC} is not 1-3 in the {' and '.join(missing)}: a hung NCCL collective "
            "stalls the group instead of failing fast.",
            evidence,
        )
    return passed(
        f"{NCCL_ASYNC} set on every template: the NCCL watchdog aborts hung collectives.", evidence
    )


def oom_restart(lws: dict) -> Finding:
    lwt = (lws.get("spec") or {}).get("leaderWorkerTemplate") or {}
    policy = lwt.get("restartPolicy") or "Default"
    evidence = [f"spec.leaderWorkerTemplate.restartPolicy: {policy}"]
    bad = []
    for path, spec in _templates(lws):
        pod_policy = spec.get("restartPolicy") or "Always"
        evidence.append(f"{path}.spec.restartPolicy: {pod_policy}")
        if pod_policy == "Never":
            bad.append(path)
    if bad:
        return failed(
            "A pod template says restartPolicy Never: an OOM-killed pod stays down.", evidence
        )
    if policy != "RecreateGroupOnPodRestart":
        return failed(
            f"restartPolicy {policy}: an OOM-killed pod restarts alone and cannot rejoin its "
            "group's collectives; use RecreateGroupOnPodRestart.",
            evidence,
        )
    return passed("An OOM-killed pod restarts and brings its whole group back.", evidence)


def zone_spread(lws: dict) -> Finding:
    path, spec = _leader(lws)
    constraints = [c for c in spec.get("topologySpreadConstraints") or [] if isinstance(c, dict)]
    zonal = [c for c in constraints if c.get("topologyKey") == ZONE_KEY]
    evidence = [
        f"{path}.spec.topologySpreadConstraints: topologyKey {c.get('topologyKey')}, maxSkew "
        f"{c.get('maxSkew')}, whenUnsatisfiable {c.get('whenUnsatisfiable', 'DoNotSchedule')}"
        for c in constraints
    ] or [f"{path}.spec.topologySpreadConstraints: absent"]
    if not zonal:
        return failed(
            f"No topologySpreadConstraint on {ZONE_KEY}: every group may land in one zone.",
            evidence,
        )
    return passed(f"Groups are spread across zones ({ZONE_KEY}).", evidence)
