"""The Kubernetes manifests (deploy/k8s): each overlay builds with `kubectl kustomize`,
every object validates offline against the Kubernetes API schema, the RBAC grants are
exactly the verbs the code calls, every setting the code reads is wired, and the
workloads keep the properties the issue asks for (probes, one beat, non-root...)."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from secrets import token_urlsafe

import kubernetes_validate
import pytest
import yaml

from actions.rbac import REQUIRED
from tests.conftest import need_service

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("dev", "production")
K8S_VERSION = "1.30.0"  # the oldest Kubernetes we support; the schemas are bundled
SPY = Path(__file__).with_name("settings_reads.py")
# Settings read by the code but deliberately wired nowhere (config.yaml's header says why).
NOT_WIRED = {"ACTIONS_APPROVAL_KINDS", "KUBECONFIG", "VAR_DIR", "DRILLS_SIMULATOR_URL",
             "SIMULATOR_URL", "SIMULATOR_PORT"}  # fmt: skip
# Every identity may create these (the default system:basic-user ClusterRole).
NEEDS_NO_GRANT = {("create", "selfsubjectaccessreviews")}


def kubectl() -> str:
    """kubectl with a kustomize that understands `labels` and `patches` (v4 or newer)."""
    # PATH, or the virtualenv (a kubectl shipped as a Python wheel installs there).
    exe = shutil.which(
        "kubectl", path=f"{os.environ['PATH']}{os.pathsep}{Path(sys.executable).parent}"
    )
    need_service("kubectl", exe is not None, "apt-get install kubectl (.ci/run installs it)")
    version = subprocess.run(
        [exe, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60
    )  # fmt: skip
    kustomize = json.loads(version.stdout or "{}").get("kustomizeVersion", "v0")
    need_service(
        "kubectl with kustomize v4+",
        int(re.sub(r"\D", "", kustomize.split(".")[0]) or 0) >= 4,
        f"this kubectl embeds kustomize {kustomize}",
    )
    return exe


@functools.cache
def _build(overlay: str) -> tuple[dict, ...]:
    done = subprocess.run(
        [kubectl(), "kustomize", str(K8S / "overlays" / overlay)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def build(overlay: str) -> list[dict]:
    return list(_build(overlay))


def one(docs: list[dict], kind: str, name: str) -> dict:
    (found,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def deployment(docs, component: str) -> dict:
    return one(docs, "Deployment", f"incident-console-{component}")


def selects(selector: dict, labels: dict) -> bool:
    """A label selector (matchLabels, matchExpressions with In) matches `labels`."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expr in selector.get("matchExpressions", []):
        assert expr["operator"] == "In", expr
        if labels.get(expr["key"]) not in expr["values"]:
            return False
    return True


def pod_specs(docs) -> list[tuple[str, dict]]:
    return [
        (d["metadata"]["name"], d["spec"]["template"]["spec"])
        for d in docs
        if d["kind"] in ("Deployment", "Job")
    ]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates_against_the_kubernetes_schema(overlay):
    docs = build(overlay)
    assert len(docs) > 15
    for doc in docs:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # Prometheus Operator CRDs: checked in test_production_monitoring
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_the_validator_rejects_a_misspelt_field():
    """strict=True: a typo is an error, not an ignored field."""
    doc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"},
           "spec": {"ports": [{"port": 80, "targetPrt": 8000}]}}  # fmt: skip
    with pytest.raises(kubernetes_validate.ValidationError, match="targetPrt"):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


# --- RBAC -------------------------------------------------------------------------------
def kube_calls() -> set[tuple[str, str]]:
    """(verb, resource) of every KubeApi.call("verb", "resource", ...) in the apps: the
    only way the console talks to Kubernetes (actions/k8s.py)."""
    calls = set()
    for package in ("console", "incidents", "runbooks", "actions", "drills", "postmortems",
                    "readiness", "notifications"):  # fmt: skip
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "call"
                    and len(node.args) >= 2
                    and all(isinstance(a, ast.Constant) for a in node.args[:2])
                ):
                    calls.add((node.args[0].value, node.args[1].value))
    return calls


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rbac_grants_exactly_the_verbs_the_code_calls(overlay):
    docs = build(overlay)
    granted = set()
    for role in (d for d in docs if d["kind"] in ("Role", "ClusterRole")):
        for rule in role["rules"]:
            granted |= {(v, r) for v in rule["verbs"] for r in rule["resources"]}
    called = kube_calls() - NEEDS_NO_GRANT
    assert ("patch", "leaderworkersets/scale") in called  # the scan sees the kinds' calls
    assert granted == called
    assert granted == {(p.verb, p.full_resource) for p in REQUIRED}
    role = one(docs, "Role", "console-worker-actions")
    assert role["metadata"]["namespace"] == "llm-serving"  # where the actions act
    subject = {"kind": "ServiceAccount", "name": "console-worker", "namespace": "incident-console"}
    for kind, name in (("RoleBinding", "console-worker-actions"),
                       ("ClusterRoleBinding", "console-worker-nodes")):  # fmt: skip
        assert one(docs, kind, name)["subjects"] == [subject]
    # Pods that never call the API get no token.
    specs = dict(pod_specs(docs))
    for name in ("incident-console-beat", "incident-console-migrate", "incident-console-notifier"):
        assert specs[name]["automountServiceAccountToken"] is False


# --- settings ---------------------------------------------------------------------------
@functools.cache
def settings_read() -> frozenset[str]:
    """The environment variables config/settings/ reads, seen by running it the way
    the pods do (PostgreSQL, a Redis broker and cache)."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"),
           "DATABASE_URL": "postgres://x@127.0.0.1:1/x", "SECRET_KEY": "x",
           "CELERY_BROKER_URL": "redis://127.0.0.1:1/0", "REDIS_URL": "redis://127.0.0.1:1/1",
           "VAR_DIR": "/tmp/settings-reads"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(SPY)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return frozenset(json.loads(done.stdout.splitlines()[-1]))


def secret_keys() -> set[str]:
    """The Secret's keys: generated in dev; the production Secret must have the same."""
    kustomization = yaml.safe_load((K8S / "overlays" / "dev" / "kustomization.yaml").read_text())
    (generator,) = kustomization["secretGenerator"]
    return {literal.split("=", 1)[0] for literal in generator["literals"]}


def test_the_settings_scan_sees_what_the_settings_read():
    assert {"SECRET_KEY", "DATABASE_URL", "WEBHOOK_MAX_BYTES", "POD_IP"} <= settings_read()


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_setting_is_wired_and_nothing_else(overlay):
    docs = build(overlay)
    config = set(one(docs, "ConfigMap", "incident-console-config")["data"])
    env = {e["name"] for _, spec in pod_specs(docs) for c in spec["containers"]
           for e in c.get("env", [])}  # fmt: skip
    wired = config | secret_keys() | env
    read = settings_read()
    assert read - wired - NOT_WIRED == set(), "read by config/settings/, wired nowhere"
    assert (config | secret_keys()) - read == set(), "wired, but no setting reads it"
    assert not config & secret_keys(), "a key in both the ConfigMap and the Secret"
    for _, spec in pod_specs(docs):
        for container in spec["containers"] + spec.get("initContainers", []):
            refs = {next(iter(ref.values()))["name"] for ref in container["envFrom"]}
            assert refs == {"incident-console-config", "incident-console-secrets"}


def test_production_config_passes_djangos_deploy_checks(tmp_path):
    """The production ConfigMap's values parse, and with a real Secret's shape the
    settings pass `check --deploy` (HTTPS, HSTS, secure cookies)."""
    config = one(build("production"), "ConfigMap", "incident-console-config")["data"]
    # The image's /app is this checkout here.
    config = {k: re.sub(r"^/app/", f"{ROOT}/", v) for k, v in config.items()}
    secrets = dict.fromkeys(secret_keys(), "")
    secrets.update(SECRET_KEY=token_urlsafe(50), ALERTMANAGER_TOKEN=token_urlsafe(32),
                   FIELD_ENCRYPTION_KEYS=token_urlsafe(32),
                   DATABASE_URL="postgres://console:pw@db.example.com:5432/console",
                   CELERY_BROKER_URL="redis://redis.example.com:6379/0")  # fmt: skip
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "VAR_DIR": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "config.settings", **config, **secrets}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# --- workloads --------------------------------------------------------------------------
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_container_is_non_root_read_only_and_bounded(overlay):
    for name, spec in pod_specs(build(overlay)):
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True, name
        assert pod["runAsUser"] == 10001, name  # the image's user
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for container in spec["containers"] + spec.get("initContainers", []):
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["capabilities"] == {"drop": ["ALL"]}, name
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), name
            assert {"cpu", "memory"} <= set(resources["limits"]), name
            assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], name


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_web_worker_beat_and_migrations(overlay):
    docs = build(overlay)
    web = deployment(docs, "web")["spec"]["template"]["spec"]
    (gunicorn,) = web["containers"]
    assert gunicorn["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gunicorn["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert gunicorn["command"][0] == "gunicorn"
    pod_ip = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    assert pod_ip in gunicorn["env"]  # probes and scrapes address the pod by IP
    # Metrics in multiprocess mode need their directory to exist: a volume of its own.
    for component in ("web", "worker", "notifier"):
        (container,) = deployment(docs, component)["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert env["PROMETHEUS_MULTIPROC_DIR"] in mounts
    beat = deployment(docs, "beat")["spec"]
    assert beat["replicas"] == 1
    assert beat["strategy"] == {"type": "Recreate"}
    assert not [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"
                and d["spec"]["scaleTargetRef"]["name"] == "incident-console-beat"]  # fmt: skip
    migrate = one(docs, "Job", "incident-console-migrate")["spec"]["template"]["spec"]
    assert migrate["containers"][0]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    # New web and worker pods wait for that Job: `migrate --check` fails while unapplied.
    for component in ("web", "worker", "notifier"):
        (init,) = deployment(docs, component)["spec"]["template"]["spec"]["initContainers"]
        assert "migrate --check" in init["command"][-1]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_autoscaling_and_disruption_budgets(overlay):
    docs = build(overlay)
    web = one(docs, "HorizontalPodAutoscaler", "incident-console-web")["spec"]
    assert web["metrics"][0]["resource"]["name"] == "cpu"
    worker = one(docs, "HorizontalPodAutoscaler", "incident-console-worker")["spec"]
    (metric,) = worker["metrics"]
    assert metric["type"] == "External"
    assert metric["external"]["metric"] == {
        "name": "console_queue_depth", "selector": {"matchLabels": {"queue": "actions"}}
    }  # fmt: skip
    budgets = {d["metadata"]["name"] for d in docs if d["kind"] == "PodDisruptionBudget"}
    if overlay == "production":
        assert budgets == {
            "incident-console-web", "incident-console-worker", "incident-console-notifier"
        }  # fmt: skip
        assert deployment(docs, "web")["spec"]["replicas"] >= 3


def test_production_monitoring():
    docs = build("production")
    monitor = one(docs, "ServiceMonitor", "incident-console-web")["spec"]
    (endpoint,) = monitor["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("http", "/metrics")
    assert endpoint["authorization"]["credentials"] == {
        "name": "incident-console-secrets", "key": "METRICS_TOKEN"
    }  # fmt: skip
    service = one(docs, "Service", "incident-console-web")
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    pods = one(docs, "PodMonitor", "incident-console-worker")["spec"]
    assert pods["podMetricsEndpoints"][0]["port"] == "metrics"
    # Both kinds of worker are scraped, and may receive the scrape.
    (policy,) = [d for d in docs if d["kind"] == "NetworkPolicy"
                 and d["metadata"]["name"] == "incident-console-worker-metrics"]  # fmt: skip
    for component in ("worker", "notifier"):
        labels = deployment(docs, component)["spec"]["template"]["metadata"]["labels"]
        for selector in (pods["selector"], policy["spec"]["podSelector"]):
            assert selects(selector, labels), (component, selector)
    rule = one(docs, "PrometheusRule", "incident-console")
    source = ROOT / "deploy" / "prometheus" / "console-rules" / "console.yml"
    assert rule["spec"]["groups"] == yaml.safe_load(source.read_text())["groups"]
