"""Bearer-token authentication and RBAC-like authorization for the simulated API.

Tokens map to a set of permissions, each `"<verb> <resource>[/<subresource>]"` (for example
`"patch leaderworkersets/scale"`), `"<verb> *"`, `"* <resource>"` or `"*"`. One entry of the
form `"user:<name>"` names the token's user: it appears in RBAC-style 403 messages and as
the actor in the store's change history.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from simulator.k8s_errors import ApiError, qualified
from simulator.store import Resource

USER_PREFIX = "user:"
ADMIN_USER = "kubernetes-admin"
WORKER_USER = "system:serviceaccount:llm-serving:console-worker"
READ_ONLY_USER = "system:serviceaccount:llm-serving:read-only"

_WORKER_PERMISSIONS = {
    # Exactly deploy/k8s/rbac.yaml (actions/rbac.py REQUIRED; a unit test
    # keeps the three in step), so a missing grant fails here as it would in a cluster.
    # scale_lws (scale subresource), set_enforce_eager and restart_lws_group (the LWS);
    # list: the pre-launch checklist finds the deployments it verifies
    *(f"{verb} leaderworkersets" for verb in ("get", "list", "patch")),
    *(f"{verb} leaderworkersets/scale" for verb in ("get", "patch")),
    # rollback_router_config, update_gateway_limits
    *(f"{verb} configmaps" for verb in ("get", "patch")),
    # restart_lws_group (delete the group's leader), cordon_node (find pods on the node)
    *(f"{verb} pods" for verb in ("get", "list", "delete")),
    # cordon_node
    *(f"{verb} nodes" for verb in ("get", "list", "patch")),
}
_READ_ONLY_PERMISSIONS = {
    *(
        f"{verb} {res}"
        for verb in ("get", "list")
        for res in ("leaderworkersets", "configmaps", "pods", "nodes")
    ),
    "get leaderworkersets/scale",
    "get leaderworkersets/status",
}


def default_tokens() -> dict[str, set[str]]:
    """Three fresh random tokens: an admin, the console's worker, and a read-only viewer."""
    return {
        secrets.token_urlsafe(32): {"*", USER_PREFIX + ADMIN_USER},
        secrets.token_urlsafe(32): {*_WORKER_PERMISSIONS, USER_PREFIX + WORKER_USER},
        secrets.token_urlsafe(32): {*_READ_ONLY_PERMISSIONS, USER_PREFIX + READ_ONLY_USER},
    }


def user_of(token: str, permissions: set[str]) -> str:
    for entry in permissions:
        if entry.startswith(USER_PREFIX):
            return entry[len(USER_PREFIX) :]
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:8]


def token_for(tokens: dict[str, set[str]], user: str) -> str:
    """The token whose user is `user`, or ends with `:user` (e.g. "console-worker")."""
    for token, permissions in tokens.items():
        name = user_of(token, permissions)
        if name == user or name.endswith(":" + user):
            return token
    raise KeyError(user)


def allows(permissions: set[str], verb: str, resource: str) -> bool:
    wanted = (f"{verb} {resource}", f"* {resource}", f"{verb} *", "* *", "*")
    return any(w in permissions for w in wanted)


class Authenticator:
    def __init__(self, tokens: dict[str, set[str]]) -> None:
        self._tokens = [(t.encode(), t, set(p)) for t, p in tokens.items()]

    def authenticate(self, headers: dict[str, str]) -> tuple[str, set[str]]:
        """(user, permissions) for the request's bearer token, else a 401 ApiError."""
        value = headers.get("authorization", "")
        scheme, _, presented = value.partition(" ")
        found = None
        if scheme.lower() == "bearer" and presented.strip():
            candidate = presented.strip().encode()
            for raw, token, permissions in self._tokens:  # no early exit: constant time
                if hmac.compare_digest(raw, candidate):
                    found = (user_of(token, permissions), permissions)
        if found is None:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        return found


def forbidden(
    user: str,
    verb: str,
    resource: Resource,
    subresource: str | None,
    name: str | None,
    namespace: str | None,
) -> ApiError:
    """403 worded like the RBAC authorizer's denial."""
    group, _, plural = resource
    full = f"{plural}/{subresource}" if subresource else plural
    subject = f'{qualified(resource)} "{name}"' if name else qualified(resource)
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    message = (
        f'{subject} is forbidden: User "{user}" cannot {verb} resource "{full}" '
        f'in API group "{group}" {scope}'
    )
    details = {"group": group, "kind": plural}
    if name:
        details["name"] = name
    return ApiError(403, "Forbidden", message, details)


def access_review(body: dict, user: str, permissions: set[str]) -> dict:
    """Answer a SelfSubjectAccessReview (authorization.k8s.io/v1) for the caller."""
    spec = body.get("spec") if isinstance(body, dict) else None
    if not isinstance(spec, dict):
        raise ApiError(400, "BadRequest", "spec: Required value")
    attrs = spec.get("resourceAttributes")
    if isinstance(attrs, dict):
        verb = attrs.get("verb") or ""
        resource = attrs.get("resource") or ""
        if attrs.get("subresource"):
            resource = f"{resource}/{attrs['subresource']}"
        allowed = bool(verb and resource) and allows(permissions, verb, resource)
    elif isinstance(spec.get("nonResourceAttributes"), dict):
        path = spec["nonResourceAttributes"].get("path") or ""
        allowed = "*" in permissions or path in ("/api", "/apis", "/version", "/healthz")
    else:
        raise ApiError(
            422,
            "Invalid",
            'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
            "spec.resourceAttributes: Invalid value: exactly one of nonResourceAttributes "
            "or resourceAttributes must be specified",
        )
    status: dict[str, object] = {"allowed": allowed}
    if allowed:
        status["reason"] = f'RBAC: allowed for User "{user}" by the simulator\'s token table'
    return {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": spec,
        "status": status,
    }
