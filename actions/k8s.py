"""The Kubernetes client the actions use: the official `kubernetes` package, configured from
settings KUBECONFIG (or in-cluster), with an overall deadline on every call (its own
timeout bounds each read only; console/outgoing bounds the call) and the API's failures
translated into the action errors of `kinds.base`.

`kube_api()` caches the underlying ApiClient per (kubeconfig path, mtime, process): a
rewritten kubeconfig (the simulator writes a fresh token on every start) is picked up, and
a Celery prefork child never shares its parent's sockets.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import urllib3
from django.conf import settings
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException

from actions import texts  # noqa: F401  (registry: the ids below)
from actions.kinds.base import (
    ActionError,
    Conflict,
    Forbidden,
    Invalid,
    NotConfigured,
    TargetNotFound,
    Transient,
)
from console.outgoing import DeadlineExceeded, deadline
from console.texts import msg

LWS_GROUP, LWS_VERSION, LWS_PLURAL = "leaderworkerset.x-k8s.io", "v1", "leaderworkersets"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"

_cache: dict[tuple, tuple[tuple, client.ApiClient]] = {}
_lock = threading.Lock()


def _status_message(exc: ApiException) -> str:
    try:
        return json.loads(exc.body or "")["message"]
    except (ValueError, KeyError, TypeError):
        return f"{exc.status} {exc.reason}".strip()


def translate(exc: ApiException, verb: str, resource: str, what: str) -> ActionError:
    """An ApiException as the action error a human (and the retry policy) understands."""
    message = _status_message(exc)
    status = exc.status or 0
    # Kubernetes' own words (`detail`) stay as it said them; ours are worded for the reader.
    said = {"verb": verb, "resource": resource, "what": what, "detail": message}
    if status == 403:
        return Forbidden(msg("actions.k8s.forbidden", **said))
    if status == 404:
        return TargetNotFound(msg("actions.k8s.not_found", what=what, detail=message))
    if status == 409:
        return Conflict(msg("actions.k8s.conflict", what=what, detail=message))
    if status == 422 and ("test failed" in message or "testing value" in message):
        # A JSON patch whose leading `test` op (resourceVersion, old value) did not hold:
        # the object moved under us, which is a conflict, not a bad request.
        return Conflict(msg("actions.k8s.conflict", what=what, detail=message))
    if status == 422:
        return Invalid(msg("actions.k8s.invalid", what=what, detail=message))
    if status == 401:
        return ActionError(msg("actions.k8s.unauthorized", verb=verb, resource=resource))
    if status == 429 or status >= 500:
        return Transient(msg("actions.k8s.answered", status=status, **said))
    if status == 0:  # the client's own failures, e.g. TLS
        return ActionError(msg("actions.k8s.no_talk", verb=verb, resource=resource, detail=message))
    return ActionError(msg("actions.k8s.answered", status=status, **said))


class KubeApi:
    """The handful of calls the six kinds make; each with a timeout and error mapping.

    Objects come back as plain dicts in the API's own JSON shape (camelCase).
    """

    def __init__(self, api_client: client.ApiClient, timeout: float) -> None:
        self.api_client = api_client
        self.host = api_client.configuration.host
        self.timeout = (timeout, timeout)  # (connect, read)
        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.authz = client.AuthorizationV1Api(api_client)

    def call(self, verb: str, resource: str, what: str, fn, *args, **kw):
        kw.setdefault("_request_timeout", self.timeout)
        # The raw JSON, not the client's models: their client-side validation rejects
        # objects a server may legally send (e.g. a containerStatus without `image`), and
        # the kinds want the API's own shapes anyway.
        kw["_preload_content"] = False
        try:
            with deadline(self.timeout[1]):  # connect and answer together
                response = fn(*args, **kw)
                try:
                    body = response.data
                finally:
                    response.release_conn()
        except DeadlineExceeded:
            raise Transient(self._said("actions.k8s.deadline", verb, resource)) from None
        except ApiException as exc:
            raise translate(exc, verb, resource, what) from None
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise self._network_error(exc, verb, resource) from None
        try:
            return json.loads(body) if body else {}
        except ValueError:
            raise Transient(self._said("actions.k8s.not_json", verb, resource)) from None

    def _said(self, key: str, verb: str, resource: str, **more: str):
        seconds = f"{self.timeout[1]:g}"
        return msg(key, host=self.host, seconds=seconds, verb=verb, resource=resource, **more)

    def _network_error(self, exc: Exception, verb: str, resource: str) -> Transient:
        reason = getattr(exc, "reason", None) or exc
        # NewConnectionError subclasses ConnectTimeoutError in urllib3: test it first.
        if isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionError):
            detail = str(reason).split(": ", 1)[-1]  # drop urllib3's connection repr
            return Transient(self._said("actions.k8s.unreachable", verb, resource, detail=detail))
        if isinstance(reason, urllib3.exceptions.TimeoutError | TimeoutError):
            return Transient(self._said("actions.k8s.deadline", verb, resource))
        detail = f"{type(reason).__name__}: {reason}"
        return Transient(self._said("actions.k8s.failed", verb, resource, detail=detail))

    # --- LeaderWorkerSets -------------------------------------------------------------
    def get_lws(self, namespace: str, name: str) -> dict:
        return self.call(
            "get", "leaderworkersets", f"leaderworkerset {namespace}/{name}",
            self.custom.get_namespaced_custom_object,
            LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name,
        )  # fmt: skip

    def patch_lws(self, namespace: str, name: str, ops: list, *, dry_run: bool = False) -> dict:
        extra = {"dry_run": "All"} if dry_run else {}
        return self.call(
            "patch", "leaderworkersets", f"leaderworkerset {namespace}/{name}",
            self.custom.patch_namespaced_custom_object,
            LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name, ops,
            _content_type=JSON_PATCH, **extra,
        )  # fmt: skip

    def get_scale(self, namespace: str, name: str) -> dict:
        return self.call(
            "get", "leaderworkersets/scale", f"leaderworkerset {namespace}/{name}",
            self.custom.get_namespaced_custom_object_scale,
            LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name,
        )  # fmt: skip

    def patch_scale(self, namespace: str, name: str, body: dict, *, dry_run=False) -> dict:
        extra = {"dry_run": "All"} if dry_run else {}
        return self.call(
            "patch", "leaderworkersets/scale", f"leaderworkerset {namespace}/{name}",
            self.custom.patch_namespaced_custom_object_scale,
            LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name, body,
            _content_type=MERGE_PATCH, **extra,
        )  # fmt: skip

    # --- ConfigMaps -------------------------------------------------------------------
    def get_configmap(self, namespace: str, name: str) -> dict:
        return self.call(
            "get", "configmaps", f"configmap {namespace}/{name}",
            self.core.read_namespaced_config_map, name, namespace,
        )  # fmt: skip

    def patch_configmap(self, namespace: str, name: str, ops: list, *, dry_run=False) -> dict:
        extra = {"dry_run": "All"} if dry_run else {}
        return self.call(
            "patch", "configmaps", f"configmap {namespace}/{name}",
            self.core.patch_namespaced_config_map, name, namespace, ops,
            _content_type=JSON_PATCH, **extra,
        )  # fmt: skip

    # --- Pods -------------------------------------------------------------------------
    def get_pod(self, namespace: str, name: str) -> dict:
        return self.call(
            "get", "pods", f"pod {namespace}/{name}",
            self.core.read_namespaced_pod, name, namespace,
        )  # fmt: skip

    def list_pods(self, namespace: str, *, label_selector="", field_selector="") -> list[dict]:
        listed = self.call(
            "list", "pods", f"pods in {namespace}",
            self.core.list_namespaced_pod, namespace,
            label_selector=label_selector, field_selector=field_selector,
        )  # fmt: skip
        return listed.get("items") or []

    def delete_pod(self, namespace: str, name: str, uid: str, *, dry_run=False) -> dict:
        # Preconditions uid: delete exactly the pod we previewed, never its replacement.
        options = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=uid))
        if dry_run:
            options.dry_run = ["All"]
        return self.call(
            "delete", "pods", f"pod {namespace}/{name}",
            self.core.delete_namespaced_pod, name, namespace, body=options,
        )  # fmt: skip

    # --- Nodes ------------------------------------------------------------------------
    def get_node(self, name: str) -> dict:
        return self.call("get", "nodes", f"node {name}", self.core.read_node, name)

    def list_nodes(self) -> list[dict]:
        return self.call("list", "nodes", "nodes", self.core.list_node).get("items") or []

    def patch_node(self, name: str, ops: list, *, dry_run: bool = False) -> dict:
        extra = {"dry_run": "All"} if dry_run else {}
        return self.call(
            "patch", "nodes", f"node {name}", self.core.patch_node, name, ops,
            _content_type=JSON_PATCH, **extra,
        )  # fmt: skip

    # --- authorization ----------------------------------------------------------------
    def can_i(self, verb: str, group: str, resource: str, subresource="", namespace="") -> bool:
        attributes = client.V1ResourceAttributes(
            verb=verb, group=group, resource=resource,
            subresource=subresource or None, namespace=namespace or None,
        )  # fmt: skip
        spec = client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)
        review = self.call(
            "create", "selfsubjectaccessreviews", "access review",
            self.authz.create_self_subject_access_review,
            client.V1SelfSubjectAccessReview(spec=spec),
        )  # fmt: skip
        return bool((review.get("status") or {}).get("allowed"))


def kube_api(kubeconfig: str | os.PathLike | None = None) -> KubeApi:
    """A KubeApi for settings KUBECONFIG (or `kubeconfig`), or the in-cluster config."""
    path = str(kubeconfig) if kubeconfig is not None else str(settings.KUBECONFIG or "")
    timeout = float(settings.ACTIONS_K8S_TIMEOUT_SECONDS)
    if path:
        file = Path(path).expanduser()
        if not file.is_absolute():
            file = Path(settings.BASE_DIR) / file
        try:
            version: tuple[int, ...] = (file.stat().st_mtime_ns, os.getpid())
        except OSError:
            raise NotConfigured(msg("actions.k8s.no_file", file=str(file))) from None
        key: tuple[str, ...] = ("file", str(file))

        def load(cfg):
            config.load_kube_config(config_file=str(file), client_configuration=cfg)
    elif os.environ.get("KUBERNETES_SERVICE_HOST"):
        key, version = ("in-cluster",), (os.getpid(),)

        def load(cfg):
            config.load_incluster_config(client_configuration=cfg)
    else:
        raise NotConfigured(msg("actions.k8s.not_configured"))
    with _lock:
        cached = _cache.get(key)
        if cached is None or cached[0] != version:
            cfg = client.Configuration()
            try:
                load(cfg)
            except (ConfigException, OSError, ValueError, TypeError) as exc:
                where = key[-1]
                said = msg("actions.k8s.bad_config", where=where, detail=str(exc))
                raise ActionError(said) from exc
            # No urllib3 retries: a retried PATCH after a read timeout could apply twice;
            # the run's task owns retries (with re-read and guardrails).
            cfg.retries = False
            cached = (version, client.ApiClient(cfg))
            _cache[key] = cached
    return KubeApi(cached[1], timeout)
