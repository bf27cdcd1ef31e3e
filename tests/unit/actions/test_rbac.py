"""The worker's Kubernetes permissions: one list (REQUIRED), the RBAC manifest and the
simulator's worker token must agree, and the startup check must tell what is missing."""

from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from actions.k8s import LWS_GROUP
from actions.rbac import REQUIRED, missing_permissions
from simulator.k8s_api import default_tokens
from simulator.k8s_auth import USER_PREFIX, token_for

RBAC = Path(__file__).resolve().parents[3] / "deploy" / "k8s" / "rbac.yaml"


def _grants(doc: dict, namespaced: bool) -> set[tuple]:
    return {
        (verb, group, *resource.partition("/")[::2], namespaced)
        for rule in doc["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def test_rbac_manifest_grants_exactly_the_required_permissions():
    docs = list(yaml.safe_load_all(RBAC.read_text()))
    by_kind = {d["kind"]: d for d in docs}
    assert by_kind["ServiceAccount"]["metadata"] == {
        "name": "console-worker",
        "namespace": "incident-console",
    }
    granted = _grants(by_kind["Role"], True) | _grants(by_kind["ClusterRole"], False)
    required = {(p.verb, p.group, p.resource, p.subresource, p.namespaced) for p in REQUIRED}
    assert granted == required
    for binding, role in (("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")):
        doc = by_kind[binding]
        assert doc["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role,
            "name": by_kind[role]["metadata"]["name"],
        }
        assert doc["subjects"] == [
            {"kind": "ServiceAccount", "name": "console-worker", "namespace": "incident-console"}
        ]
    assert not any(p.verb in ("update", "create", "*") for p in REQUIRED)


def test_simulator_worker_token_has_exactly_the_required_permissions():
    tokens = default_tokens()
    worker = {
        p for p in tokens[token_for(tokens, "console-worker")] if not p.startswith(USER_PREFIX)
    }
    assert worker == {f"{p.verb} {p.full_resource}" for p in REQUIRED}


def test_missing_permissions_for_worker_and_read_only(api, reader_api):
    assert missing_permissions(api) == []
    missing = missing_permissions(reader_api)
    assert len(missing) == sum(p.verb not in ("get", "list") for p in REQUIRED)
    assert (
        f"patch leaderworkersets/scale (API group {LWS_GROUP}) in namespace "
        '"llm-serving", needed by scale_lws'
    ) in missing
    assert "patch nodes cluster-wide, needed by cordon_node" in missing


def test_actions_check_command(sim, settings, capsys):
    settings.KUBECONFIG = str(sim.kubeconfig("console-worker"))
    call_command("actions_check")
    assert f"OK: all {len(REQUIRED)} permissions granted" in capsys.readouterr().out

    settings.KUBECONFIG = str(sim.kubeconfig("read-only"))
    with pytest.raises(CommandError, match="permissions are missing") as exc:
        call_command("actions_check")
    assert exc.value.returncode == 1
    assert "MISSING: delete pods" in capsys.readouterr().err

    settings.KUBECONFIG = str(sim.tmp_path / "nowhere")
    with pytest.raises(CommandError, match="cannot check Kubernetes permissions"):
        call_command("actions_check")
