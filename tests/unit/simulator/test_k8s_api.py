"""The simulator's Kubernetes API, driven by the OFFICIAL `kubernetes` client over real HTTP.

A ThreadingHTTPServer on a free port dispatches every request to KubeApi.handle (the
production server is another module's job); clients load a kubeconfig written by
write_kubeconfig into their own Configuration, never the global one. No database.
"""

import json
import os
import stat
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from simulator import objects
from simulator.k8s_api import KubeApi, default_tokens
from simulator.k8s_auth import ADMIN_USER, READ_ONLY_USER, WORKER_USER, token_for
from simulator.k8s_patch import PatchError, json_patch, merge_patch
from simulator.kubeconfig import write_kubeconfig
from simulator.store import CONFIGMAPS, LWS, NODES, PODS

T = 5  # every client call: _request_timeout=T
NS, ROUTER, GATEWAY = objects.NAMESPACE, objects.ROUTER_CONFIGMAP, objects.GATEWAY_CONFIGMAP
GROUP, VERSION, PLURAL = LWS
JSON_PATCH, MERGE = "application/json-patch+json", "application/merge-patch+json"


class _Handler(BaseHTTPRequestHandler):
    api: KubeApi
    seen: list
    protocol_version = "HTTP/1.1"

    def _dispatch(self):
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((self.command, parts.path, self.headers.get("Content-Type")))
        query = parse_qs(parts.query, keep_blank_values=True)
        response = self.api.handle(self.command, parts.path, query, dict(self.headers), body)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

    def log_message(self, *args):
        pass


@pytest.fixture
def store():
    store, node = objects.new_cluster(), 0
    for name, (groups, size, _) in objects.POOLS.items():
        lws = store.get(LWS, NS, name)
        for group in range(groups):
            for worker in range(size):
                store.create(PODS, objects.pod(lws, group, worker, f"gpu-node-{node}"))
                node += 1
    return store


@pytest.fixture
def tokens():
    return default_tokens()


@pytest.fixture
def server(store, tokens):
    seen: list = []
    handler = type("Handler", (_Handler,), {"api": KubeApi(store, tokens), "seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    httpd.url, httpd.seen = f"http://127.0.0.1:{httpd.server_address[1]}", seen
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(T)


@pytest.fixture
def connect(server, tokens, tmp_path):
    def _connect(user: str | None) -> client.ApiClient:
        cfg = client.Configuration()
        if user is None:
            cfg.host = server.url
        else:
            path = tmp_path / f"kubeconfig-{user}"
            write_kubeconfig(path, server=server.url, token=token_for(tokens, user))
            config.load_kube_config(config_file=str(path), client_configuration=cfg)
        return client.ApiClient(cfg)

    return _connect


@pytest.fixture
def worker(connect):
    return connect("console-worker")


@pytest.fixture
def reader(connect):
    return connect("read-only")


@pytest.fixture
def admin(connect):
    """For verbs the least-privilege worker lacks (list LWS, PUT), which the API serves."""
    return connect("kubernetes-admin")


def lws(api_client, verb, name, *body, scale=False, **kw):
    """CustomObjectsApi.<verb>_namespaced_custom_object[_scale] on an LWS in llm-serving."""
    method = f"{verb}_namespaced_custom_object{'_scale' if scale else ''}"
    call = getattr(client.CustomObjectsApi(api_client), method)
    kw.setdefault("_request_timeout", T)
    return call(GROUP, VERSION, NS, PLURAL, name, *body, **kw)


def fails(code: int, call, *args, **kw) -> dict:
    """Call, expect ApiException with HTTP `code`, return the Status body."""
    with pytest.raises(ApiException) as exc:
        call(*args, _request_timeout=T, **kw)
    assert exc.value.status == code, exc.value.body
    status = json.loads(exc.value.body)
    assert (status["kind"], status["status"], status["code"]) == ("Status", "Failure", code)
    return status


# --- kubeconfig, tokens, discovery ------------------------------------------------------
def test_kubeconfig_is_real_and_private(server, tokens, tmp_path):
    path, token = tmp_path / "sub" / "kubeconfig", token_for(tokens, "console-worker")
    write_kubeconfig(path, server=server.url, token=token)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    _, current = config.list_kube_config_contexts(config_file=str(path))
    assert (current["name"], current["context"]["namespace"]) == ("vllm-sim", NS)
    cfg = client.Configuration()
    config.load_kube_config(config_file=str(path), client_configuration=cfg)
    assert (cfg.host, cfg.api_key["BearerToken"]) == (server.url, f"Bearer {token}")
    assert client.Configuration.get_default_copy().host != server.url  # global untouched
    # For kubectl (which sends tokens only over TLS) the server may serve https.
    write_kubeconfig(path, server="https://127.0.0.1:1", token=token, insecure_skip_tls_verify=True)
    config.load_kube_config(
        config_file=str(path), client_configuration=(tls := client.Configuration())
    )
    assert tls.verify_ssl is False


def test_default_tokens_are_random_and_scoped():
    first, second = default_tokens(), default_tokens()
    assert len(first) == 3
    assert not set(first) & set(second)
    perms = first[token_for(first, "console-worker")]
    assert {"patch leaderworkersets/scale", "delete pods", "patch nodes"} <= perms
    assert "delete configmaps" not in perms
    assert "*" in first[token_for(first, "kubernetes-admin")]
    read_only = first[token_for(first, "read-only")] - {f"user:{READ_ONLY_USER}"}
    assert {p.split()[0] for p in read_only} == {"get", "list"}


def test_discovery(worker):
    assert client.CoreApi(worker).get_api_versions(_request_timeout=T).versions == ["v1"]
    core = client.CoreV1Api(worker).get_api_resources(_request_timeout=T)
    assert {"pods", "configmaps", "nodes"} <= {r.name for r in core.resources}
    groups = client.ApisApi(worker).get_api_versions(_request_timeout=T).groups
    lws_group = next(g for g in groups if g.name == GROUP)
    assert lws_group.preferred_version.group_version == "leaderworkerset.x-k8s.io/v1"
    resources = worker.call_api(
        f"/apis/{GROUP}/v1", "GET", response_types_map={200: "object"},
        auth_settings=["BearerToken"], _return_http_data_only=True, _request_timeout=T,
    )  # fmt: skip
    by_name = {r["name"]: r for r in resources["resources"]}
    assert {"leaderworkersets", "leaderworkersets/scale", "leaderworkersets/status"} <= set(by_name)
    scale = by_name["leaderworkersets/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


# --- LeaderWorkerSets ---------------------------------------------------------------------
def test_get_and_list_lws(worker, admin):
    chat = lws(worker, "get", "vllm-chat")
    assert (chat["kind"], chat["spec"]["replicas"]) == ("LeaderWorkerSet", 4)
    api = client.CustomObjectsApi(admin)
    listed = api.list_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, _request_timeout=T)
    assert listed["kind"] == "LeaderWorkerSetList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["vllm-chat", "vllm-long"]
    assert (
        len(api.list_cluster_custom_object(GROUP, VERSION, PLURAL, _request_timeout=T)["items"])
        == 2
    )


def test_merge_patch_lws_records_actor(worker, server, store):
    before = store.get(LWS, NS, "vllm-chat")
    patched = lws(worker, "patch", "vllm-chat", {"metadata": {"annotations": {"run": "42"}}})
    # The python client sends merge-patch for custom objects whatever the body.
    assert server.seen[-1][2] == MERGE
    assert patched["metadata"]["annotations"] == {"run": "42"}
    assert patched["spec"] == before["spec"]
    assert int(patched["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert store.changes(LWS, "vllm-chat")[-1].actor == WORKER_USER


def test_json_patch_lws_toggles_enforce_eager(worker, server, store):
    path = "/spec/leaderWorkerTemplate/leaderTemplate/spec/containers/0/command/2"
    cmd = json_patch(store.get(LWS, NS, "vllm-chat"), [])
    for key in path.split("/")[1:]:
        cmd = cmd[int(key)] if isinstance(cmd, list) else cmd[key]
    ops = [
        {"op": "test", "path": path, "value": cmd},
        {"op": "replace", "path": path, "value": cmd + " --enforce-eager"},
    ]
    # Without _content_type the client sends the list as a merge patch: refused with a hint.
    status = fails(400, lws, worker, "patch", "vllm-chat", ops)
    assert JSON_PATCH in status["message"]
    patched = lws(worker, "patch", "vllm-chat", ops, _content_type=JSON_PATCH)
    assert server.seen[-1][2] == JSON_PATCH
    leader = patched["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    assert leader["command"][2].endswith("--enforce-eager")
    assert patched["metadata"]["generation"] == 2


def test_json_patch_failed_test_op_is_422_and_changes_nothing(worker, store):
    before = store.get(LWS, NS, "vllm-chat")
    ops = [
        {"op": "test", "path": "/spec/replicas", "value": 7},
        {"op": "replace", "path": "/spec/replicas", "value": 8},
    ]
    status = fails(422, lws, worker, "patch", "vllm-chat", ops, _content_type=JSON_PATCH)
    assert status["reason"] == "Invalid"
    assert "testing value /spec/replicas failed" in status["message"]
    assert store.get(LWS, NS, "vllm-chat") == before


def test_scale_subresource(worker, admin, server, store):
    scale = lws(worker, "get", "vllm-chat", scale=True)
    assert (scale["apiVersion"], scale["kind"], scale["spec"]["replicas"]) == (
        "autoscaling/v1", "Scale", 4,
    )  # fmt: skip
    assert scale["status"] == {
        "replicas": 4,
        "selector": f"{objects.LWS_NAME_LABEL}=vllm-chat,{objects.WORKER_INDEX_LABEL}=0",
    }
    patched = lws(worker, "patch", "vllm-chat", {"spec": {"replicas": 6}}, scale=True)
    assert server.seen[-1][2] == MERGE
    assert patched["spec"]["replicas"] == store.get(LWS, NS, "vllm-chat")["spec"]["replicas"] == 6
    assert patched["metadata"]["resourceVersion"] != scale["metadata"]["resourceVersion"]
    stale = {**scale, "spec": {"replicas": 5}}  # a Scale naming the old resourceVersion
    assert fails(409, lws, admin, "replace", "vllm-chat", stale, scale=True)["reason"] == "Conflict"
    fresh = {**patched, "spec": {"replicas": 5}}
    assert lws(admin, "replace", "vllm-chat", fresh, scale=True)["spec"]["replicas"] == 5


def test_invalid_replicas_is_422(worker, store):
    for scale in (True, False):
        body = {"spec": {"replicas": -1}}
        status = fails(422, lws, worker, "patch", "vllm-chat", body, scale=scale)
        assert "spec.replicas: Invalid value: -1" in status["message"]
    assert store.get(LWS, NS, "vllm-chat")["spec"]["replicas"] == 4


def test_unknown_lws_is_404(worker):
    status = fails(404, lws, worker, "get", "nope")
    assert status["reason"] == "NotFound"
    assert status["message"] == 'leaderworkersets.leaderworkerset.x-k8s.io "nope" not found'
    assert status["details"] == {"name": "nope", "group": GROUP, "kind": PLURAL}


def test_lws_put_needs_current_resource_version_and_keeps_status(admin, store):
    old = lws(admin, "get", "vllm-long")
    store.mutate(LWS, NS, "vllm-long", lambda o: o["metadata"]["labels"].update(x="y"))
    fails(409, lws, admin, "replace", "vllm-long", old)
    new = lws(admin, "get", "vllm-long")
    new["spec"]["replicas"], new["status"] = 3, {"replicas": 99}
    replaced = lws(admin, "replace", "vllm-long", new)
    assert replaced["spec"]["replicas"] == 3
    assert replaced["status"]["replicas"] == 2  # status is a subresource: kept
    del new["metadata"]["resourceVersion"]  # CRDs do not allow unconditional updates
    fails(422, lws, admin, "replace", "vllm-long", new)


def test_lws_strategic_merge_patch_is_415(worker):
    status = fails(
        415, worker.call_api, f"/apis/{GROUP}/{VERSION}/namespaces/{NS}/{PLURAL}/vllm-chat",
        "PATCH", body={"spec": {"replicas": 5}}, auth_settings=["BearerToken"],
        header_params={"Content-Type": "application/strategic-merge-patch+json"},
    )  # fmt: skip
    assert status["reason"] == "UnsupportedMediaType"


def test_stale_resource_version_in_merge_patch_is_409(worker, store):
    rv = store.get(LWS, NS, "vllm-chat")["metadata"]["resourceVersion"]
    store.mutate(LWS, NS, "vllm-chat", lambda o: o["status"].update(readyReplicas=3))
    body = {"metadata": {"resourceVersion": rv}, "spec": {"replicas": 5}}
    assert fails(409, lws, worker, "patch", "vllm-chat", body)["reason"] == "Conflict"


# --- ConfigMaps, Pods, Nodes ----------------------------------------------------------------
def test_configmap_read_replace_patch_and_stale_replace(worker, admin, store):
    core = client.CoreV1Api(admin)  # PUT: the worker only patches
    cm = core.read_namespaced_config_map(ROUTER, NS, _request_timeout=T)
    old_rv = cm.metadata.resource_version
    dynamic = json.loads(cm.data["dynamic_config.json"])
    cm.data["dynamic_config.json"] = json.dumps({**dynamic, "routing_logic": "roundrobin"})
    replaced = core.replace_namespaced_config_map(ROUTER, NS, cm, _request_timeout=T)
    assert replaced.metadata.resource_version != old_rv
    assert json.loads(replaced.data["dynamic_config.json"])["routing_logic"] == "roundrobin"
    cm.metadata.resource_version = old_rv  # stale
    status = fails(409, core.replace_namespaced_config_map, ROUTER, NS, cm)
    assert status["message"].startswith(f'Operation cannot be fulfilled on configmaps "{ROUTER}"')
    assert store.changes(CONFIGMAPS, ROUTER)[-1].actor == ADMIN_USER
    # A dict body is sent as a strategic merge patch; for a core type it merges.
    patched = client.CoreV1Api(worker).patch_namespaced_config_map(
        GATEWAY, NS, {"data": {"x": "1"}}, _request_timeout=T
    )
    assert set(patched.data) == {"config.json", "x"}
    assert store.changes(CONFIGMAPS, GATEWAY)[-1].actor == WORKER_USER


def test_configmap_create_and_delete(connect):
    core = client.CoreV1Api(connect("kubernetes-admin"))
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="scratch"), data={"a": "b"})
    assert core.create_namespaced_config_map(NS, body, _request_timeout=T).metadata.namespace == NS
    assert fails(409, core.create_namespaced_config_map, NS, body)["reason"] == "AlreadyExists"
    assert core.delete_namespaced_config_map("scratch", NS, _request_timeout=T).status == "Success"
    fails(404, core.read_namespaced_config_map, "scratch", NS)


def test_list_pods_with_label_and_field_selectors(worker):
    core = client.CoreV1Api(worker)
    name, group, index = (
        objects.LWS_NAME_LABEL,
        objects.GROUP_INDEX_LABEL,
        objects.WORKER_INDEX_LABEL,
    )
    pods = core.list_namespaced_pod(
        NS, label_selector=f"{name}=vllm-chat,{group}=1", _request_timeout=T
    )
    assert sorted(p.metadata.name for p in pods.items) == ["vllm-chat-1", "vllm-chat-1-1"]
    selector = f"{index}=0,{name} in (vllm-long)"
    leaders = core.list_namespaced_pod(NS, label_selector=selector, _request_timeout=T)
    assert [p.metadata.name for p in leaders.items] == ["vllm-long-0", "vllm-long-1"]
    on_node = core.list_pod_for_all_namespaces(
        field_selector="spec.nodeName=gpu-node-3", _request_timeout=T
    )
    assert [p.metadata.name for p in on_node.items] == ["vllm-chat-1-1"]


def test_delete_pod_and_dry_run_delete(worker, store):
    core = client.CoreV1Api(worker)
    kept = core.delete_namespaced_pod("vllm-chat-0", NS, dry_run="All", _request_timeout=T)
    assert kept.metadata.name == "vllm-chat-0"
    assert store.get(PODS, NS, "vllm-chat-0")
    deleted = core.delete_namespaced_pod("vllm-chat-0", NS, _request_timeout=T)
    assert deleted.metadata.name == "vllm-chat-0"
    assert deleted.metadata.deletion_timestamp is not None
    fails(404, core.read_namespaced_pod, "vllm-chat-0", NS)
    assert store.changes(PODS, "vllm-chat-0")[-1].actor == WORKER_USER


def test_patch_node_cordon_and_uncordon(worker, server, store):
    core = client.CoreV1Api(worker)
    taint = {"key": "nvidia.com/gpu-ecc", "value": "double-bit", "effect": "NoSchedule"}
    body = {"spec": {"unschedulable": True, "taints": [taint]}}
    node = core.patch_node("gpu-node-2", body, _request_timeout=T)
    assert server.seen[-1][2] == "application/strategic-merge-patch+json"
    assert node.spec.unschedulable is True
    assert {t.key for t in node.spec.taints} == {taint["key"], "node.kubernetes.io/unschedulable"}
    assert store.get(NODES, None, "gpu-node-2")["spec"]["unschedulable"] is True
    uncordon = [  # a list body makes the client send application/json-patch+json
        {"op": "replace", "path": "/spec/unschedulable", "value": False},
        {"op": "replace", "path": "/spec/taints", "value": []},
    ]
    node = core.patch_node("gpu-node-2", uncordon, _request_timeout=T)
    assert server.seen[-1][2] == JSON_PATCH
    assert node.spec.unschedulable is False
    assert not node.spec.taints


def test_dry_run_changes_nothing(worker, admin, store):
    core = client.CoreV1Api(worker)
    before = [store.get(LWS, NS, "vllm-chat"), store.get(CONFIGMAPS, NS, GATEWAY)]
    before.append(store.get(NODES, None, "gpu-node-1"))
    history = len(store.history)
    scale = lws(worker, "patch", "vllm-chat", {"spec": {"replicas": 9}}, scale=True, dry_run="All")
    assert scale["spec"]["replicas"] == 9  # answered as if done
    patched = lws(worker, "patch", "vllm-chat", {"spec": {"replicas": 8}}, dry_run="All")
    assert patched["spec"]["replicas"] == 8
    assert patched["metadata"]["resourceVersion"] == before[0]["metadata"]["resourceVersion"]
    cm = core.read_namespaced_config_map(GATEWAY, NS, _request_timeout=T)
    cm.data["config.json"] = "{}"
    replaced = client.CoreV1Api(admin).replace_namespaced_config_map(
        GATEWAY, NS, cm, dry_run="All", _request_timeout=T
    )
    assert replaced.data["config.json"] == "{}"
    core.patch_node(
        "gpu-node-1", {"spec": {"unschedulable": True}}, dry_run="All", _request_timeout=T
    )
    body = {"spec": {"replicas": -1}}  # a dry run still validates
    fails(422, lws, worker, "patch", "vllm-chat", body, scale=True, dry_run="All")
    after = [store.get(LWS, NS, "vllm-chat"), store.get(CONFIGMAPS, NS, GATEWAY)]
    assert [*after, store.get(NODES, None, "gpu-node-1")] == before
    assert len(store.history) == history


# --- authentication and authorization -----------------------------------------------------
def test_read_only_token_is_forbidden_to_patch(reader, store):
    assert lws(reader, "get", "vllm-chat", scale=True)["spec"]["replicas"] == 4
    status = fails(403, lws, reader, "patch", "vllm-chat", {"spec": {"replicas": 5}}, scale=True)
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        f'leaderworkersets.leaderworkerset.x-k8s.io "vllm-chat" is forbidden: User '
        f'"{READ_ONLY_USER}" cannot patch resource "leaderworkersets/scale" in API group '
        f'"leaderworkerset.x-k8s.io" in the namespace "llm-serving"'
    )
    body = {"spec": {"unschedulable": True}}
    status = fails(403, client.CoreV1Api(reader).patch_node, "gpu-node-0", body)
    assert status["message"].endswith('in API group "" at the cluster scope')
    assert store.get(LWS, NS, "vllm-chat")["spec"]["replicas"] == 4


def test_worker_cannot_delete_configmaps(worker):
    fails(403, client.CoreV1Api(worker).delete_namespaced_config_map, ROUTER, NS)


def test_missing_or_unknown_token_is_401(connect, server):
    status = fails(401, client.CoreV1Api(connect(None)).list_namespaced_pod, NS)
    assert status["reason"] == "Unauthorized"
    assert _raw(server, "not-a-token", "GET", "/api/v1/nodes")[0] == 401


def test_self_subject_access_review(worker, reader):
    def allowed(api_client, verb, resource, subresource=""):
        attributes = client.V1ResourceAttributes(
            verb=verb, resource=resource, subresource=subresource, group=GROUP, namespace=NS
        )
        spec = client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)
        review = client.V1SelfSubjectAccessReview(spec=spec)
        api = client.AuthorizationV1Api(api_client)
        return api.create_self_subject_access_review(review, _request_timeout=T).status.allowed

    assert allowed(worker, "patch", "leaderworkersets", "scale") is True
    assert allowed(worker, "delete", "pods") is True
    assert allowed(worker, "delete", "nodes") is False
    assert allowed(reader, "patch", "leaderworkersets", "scale") is False
    assert allowed(reader, "get", "leaderworkersets") is True


# --- raw HTTP edge cases ------------------------------------------------------------------
def _raw(server, token, method, path, body=None, content_type="application/json"):
    headers = {"Authorization": f"Bearer {token}", "Content-Type": content_type}
    request = urllib.request.Request(server.url + path, body, headers, method=method)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=T) as response:  # noqa: S310 (local http)
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_raw_errors(server, tokens):
    admin = token_for(tokens, "kubernetes-admin")
    cm = f"/api/v1/namespaces/{NS}/configmaps/{GATEWAY}"
    code, status = _raw(server, admin, "PUT", cm, b"{not json")
    assert (code, status["reason"], status["kind"]) == (400, "BadRequest", "Status")
    assert _raw(server, admin, "GET", f"/api/v1/namespaces/{NS}/widgets")[0] == 404
    assert _raw(server, admin, "GET", "/nope")[0] == 404
    code, status = _raw(server, admin, "POST", f"/api/v1/namespaces/{NS}/pods", b"{}")
    assert (code, status["reason"]) == (405, "MethodNotAllowed")
    assert _raw(server, admin, "PATCH", cm, b"{}", "application/json")[0] == 415
    assert _raw(server, admin, "GET", f"/api/v1/namespaces/{NS}/configmaps?dryRun=x")[0] == 200
    assert _raw(server, admin, "PATCH", cm + "?dryRun=x", b"{}", MERGE)[0] == 400
    assert _raw(server, admin, "GET", "/version") == (200, _raw(server, "", "GET", "/version")[1])


# --- the patch algorithms themselves ------------------------------------------------------
def test_json_patch_rfc6902_operations():
    doc = {"a/b": {"~c": [1, 2]}, "list": ["x"], "n": 1}
    out = json_patch(doc, [
        {"op": "add", "path": "/a~1b/~0c/-", "value": 3},
        {"op": "add", "path": "/list/0", "value": "w"},
        {"op": "copy", "from": "/list", "path": "/copied"},
        {"op": "move", "from": "/n", "path": "/m"},
        {"op": "remove", "path": "/list/1"},
        {"op": "replace", "path": "/copied/1", "value": "y"},
        {"op": "test", "path": "/m", "value": 1.0},
    ])  # fmt: skip
    assert out == {"a/b": {"~c": [1, 2, 3]}, "list": ["w"], "copied": ["w", "y"], "m": 1}
    assert doc["list"] == ["x"]  # the input is not modified
    for bad in (
        {"op": "test", "path": "/n", "value": True},  # true is not 1
        {"op": "remove", "path": "/missing"},
        {"op": "replace", "path": "/list/5", "value": 0},
        {"op": "add", "path": "/list/01", "value": 0},
        {"op": "move", "from": "/a~1b", "path": "/a~1b/x"},
        {"op": "frobnicate", "path": "/n"},
        {"op": "add", "path": "no-slash", "value": 0},
    ):
        with pytest.raises(PatchError):
            json_patch(doc, [bad])


def test_merge_patch_rfc7386():
    target = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    patch = {"a": "z", "c": {"f": None}, "l": [3], "n": {"x": None}}
    assert merge_patch(target, patch) == {"a": "z", "c": {"d": "e"}, "l": [3], "n": {}}
    assert merge_patch(target, ["replaced"]) == ["replaced"]
