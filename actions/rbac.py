"""What the console worker may do in Kubernetes (its RBAC), and a check that it really can.
The console's own permissions for action runs are another matter: actions/permissions.py.

REQUIRED is the single list of (verb, resource) pairs the six action kinds use; the RBAC
manifest (deploy/k8s/rbac.yaml) and the simulator's worker token grant exactly these, and
a unit test keeps the three in agreement. `missing_permissions()` asks the API server
(SelfSubjectAccessReview) about each, so a missing grant shows at worker start and in
`manage.py actions_check`, not halfway through a fix during an incident.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from actions.k8s import LWS_GROUP, kube_api


@dataclass(frozen=True)
class Permission:
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespaced: bool = True
    used_by: str = ""

    @property
    def full_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def describe(self, namespace: str) -> str:
        group = f" (API group {self.group})" if self.group else ""
        scope = f'in namespace "{namespace}"' if self.namespaced else "cluster-wide"
        return f"{self.verb} {self.full_resource}{group} {scope}, needed by {self.used_by}"


REQUIRED: tuple[Permission, ...] = (
    Permission("get", LWS_GROUP, "leaderworkersets", used_by="set_enforce_eager, restart, scale"),
    Permission("patch", LWS_GROUP, "leaderworkersets", used_by="set_enforce_eager"),
    Permission("list", LWS_GROUP, "leaderworkersets", used_by="readiness checklist (find LWS)"),
    Permission("get", LWS_GROUP, "leaderworkersets", "scale", used_by="scale_lws"),
    Permission("patch", LWS_GROUP, "leaderworkersets", "scale", used_by="scale_lws"),
    Permission("get", "", "configmaps", used_by="rollback_router_config, gateway limits"),
    Permission("patch", "", "configmaps", used_by="rollback_router_config, gateway limits"),
    Permission("get", "", "pods", used_by="restart_lws_group, cordon_node"),
    Permission("list", "", "pods", used_by="cordon_node (pods on the node)"),
    Permission("delete", "", "pods", used_by="restart_lws_group, cordon_node"),
    Permission("get", "", "nodes", namespaced=False, used_by="cordon_node"),
    Permission("list", "", "nodes", namespaced=False, used_by="cordon_node (guardrail)"),
    Permission("patch", "", "nodes", namespaced=False, used_by="cordon_node"),
)


def actions_namespace() -> str:
    return str(settings.ACTIONS_K8S_NAMESPACE)


def missing_permissions(api=None) -> list[str]:
    """Each REQUIRED permission the configured credentials lack, described for a human.

    Raises ActionError (Transient when the API does not answer) if it cannot ask at all.
    """
    api = api or kube_api()
    namespace = actions_namespace()
    return [
        p.describe(namespace)
        for p in REQUIRED
        if not api.can_i(
            p.verb, p.group, p.resource, p.subresource, namespace if p.namespaced else ""
        )
    ]
