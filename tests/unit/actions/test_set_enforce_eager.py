import copy

import pytest

from actions.kinds import ActionError, Conflict, Context, ParamError, kind_for
from actions.kinds.eager_flag import flag_on, list_toggle, script_toggle
from simulator.fleet_cluster import enforce_eager
from simulator.store import LWS
from tests.unit.conftest import NS

KIND = kind_for("set_enforce_eager")
SERVER = "python3 -m vllm.entrypoints.openai.api_server"


def lws(sim, name="vllm-chat") -> dict:
    return sim.store.get(LWS, NS, name)


def containers(obj: dict, template: str) -> dict:
    return obj["spec"]["leaderWorkerTemplate"][template]["spec"]["containers"][0]


def set_invocation(sim, name, **templates) -> None:
    """Give the vllm container of each named template the command/args given."""

    def change(obj):
        for template, fields in templates.items():
            tpl = obj["spec"]["leaderWorkerTemplate"]
            if fields is None:
                tpl.pop(template, None)
                continue
            container = tpl[template]["spec"]["containers"][0]
            container.pop("command", None)
            container.pop("args", None)
            container.update(fields)

    sim.store.mutate(LWS, NS, name, change)


def run(api, params):
    params = KIND.clean(params)
    current = KIND.read(api, params)
    plan = KIND.plan(current, params, Context())
    return params, current, plan, KIND.apply(api, params, current, plan)


E = "--enforce-eager"


@pytest.mark.parametrize(
    ("script", "enabled", "expected"),
    [
        (f"setup.sh; {SERVER} --port 8080", True, f"setup.sh; {SERVER} --port 8080 {E}"),
        (f"{SERVER} --port 8080; echo done", True, f"{SERVER} --port 8080 {E}; echo done"),
        ("vllm serve m --tp 8 && sleep 1", True, f"vllm serve m --tp 8 {E} && sleep 1"),
        ("vllm serve m --x 'a;b'; echo", True, f"vllm serve m --x 'a;b' {E}; echo"),
        ("exec vllm serve m \\\n  --tp 8\necho", True, f"exec vllm serve m \\\n  --tp 8 {E}\necho"),
        ("vllm serve m --no-enforce-eager --tp 8", True, f"vllm serve m --tp 8 {E}"),
        ("vllm serve m --enforce_eager --tp 8 --enforce-eager=true", False, "vllm serve m --tp 8"),
        (f"vllm serve m {E}", True, f"vllm serve m {E}"),
        ("bash worker.sh --ray_address=x", True, None),  # no vLLM server in this script
    ],
)  # fmt: skip
def test_script_toggle(script, enabled, expected):
    assert script_toggle(script, enabled) == expected
    if expected is not None:
        assert flag_on(expected) is enabled


def test_list_toggle():
    assert list_toggle(["--model", "m", "--no-enforce-eager"], True) == [
        "--model",
        "m",
        "--enforce-eager",
    ]
    assert list_toggle(["--enforce-eager", "--model", "m", "--enforce_eager"], False) == [
        "--model",
        "m",
    ]


def test_clean():
    assert KIND.clean({"lws": "vllm-chat", "enabled": "false"})["enabled"] is False
    assert KIND.clean({"lws": "vllm-chat"})["enabled"] is True
    with pytest.raises(ParamError) as exc:
        KIND.clean({"lws": "vllm-chat", "enabled": "maybe"})
    assert exc.value.field == "enabled"
    assert KIND.risky


def test_shell_string_enable_dry_run_apply_verify_undo(sim, api):
    original = copy.deepcopy(lws(sim))
    params = KIND.clean({"lws": "vllm-chat", "enabled": True})
    current = KIND.read(api, params)
    assert current.state["enabled"] is False
    assert current.state["invocations"]["workerTemplate"] is None  # Ray workers: no vLLM
    plan = KIND.plan(current, params, Context())
    assert "+  --enable-prefix-caching \\\n" in plan.diff
    assert "+  --enforce-eager\n" in plan.diff
    assert any("rolls every group" in w for w in plan.warnings)

    assert KIND.dry_run(api, params, current, plan).english == "server dry run accepted"
    assert lws(sim) == original

    after = KIND.apply(api, params, current, plan)
    assert after.state == plan.desired
    assert after.resource_version != current.resource_version
    command = containers(lws(sim), "leaderTemplate")["command"][2]
    assert command == containers(original, "leaderTemplate")["command"][2] + " --enforce-eager"
    assert enforce_eager(lws(sim))  # the simulator's fleet sees it: the crash loop ends
    assert containers(lws(sim), "workerTemplate") == containers(original, "workerTemplate")
    ok, detail = KIND.verify(api, params, plan)
    assert ok, detail
    assert KIND.already_applied(KIND.read(api, params), current, plan)

    undo = KIND.clean(KIND.undo_params(params, current))
    assert undo["enabled"] is False
    run(api, undo)
    assert lws(sim)["spec"] == original["spec"]


def test_args_lists_in_both_templates(sim, api):
    set_invocation(
        sim,
        "vllm-long",
        leaderTemplate={"args": ["--model", "m", "--port", "8080"]},
        workerTemplate={"command": ["vllm", "serve", "m"], "args": ["--no-enforce-eager"]},
    )
    _, current, _, _ = run(api, {"lws": "vllm-long", "enabled": True})
    assert set(current.state["invocations"]) == {"leaderTemplate", "workerTemplate"}
    obj = lws(sim, "vllm-long")
    leader_args = ["--model", "m", "--port", "8080"]
    assert containers(obj, "leaderTemplate")["args"] == [*leader_args, "--enforce-eager"]
    assert containers(obj, "workerTemplate")["args"] == ["--enforce-eager"]
    assert containers(obj, "workerTemplate")["command"] == ["vllm", "serve", "m"]
    run(api, {"lws": "vllm-long", "enabled": False})
    obj = lws(sim, "vllm-long")
    assert containers(obj, "leaderTemplate")["args"] == leader_args
    assert containers(obj, "workerTemplate")["args"] == []


def test_worker_template_only_with_a_multiline_script_in_args(sim, api):
    script = "set -e\nexec vllm serve m \\\n  --port 8000 \\\n  --data-parallel-size 8\n"
    set_invocation(
        sim,
        "vllm-long",
        leaderTemplate=None,
        workerTemplate={"command": ["/bin/bash", "-c"], "args": [script]},
    )
    _, current, _, _ = run(api, {"lws": "vllm-long", "enabled": True})
    assert current.state["invocations"]["leaderTemplate"] is None
    new = containers(lws(sim, "vllm-long"), "workerTemplate")["args"][0]
    assert new == script.replace("size 8\n", "size 8 --enforce-eager\n")
    assert enforce_eager(lws(sim, "vllm-long"))


def test_no_vllm_invocation_is_refused(sim, api):
    # A launcher we do not know: the flag's place cannot be known, so refuse, do not guess.
    unknown = {"command": ["/run.sh"]}
    set_invocation(sim, "vllm-long", leaderTemplate=unknown, workerTemplate=unknown)
    with pytest.raises(ActionError, match="no vLLM invocation found"):
        run(api, {"lws": "vllm-long"})


def test_stale_resource_version_is_a_conflict(sim, api):
    params = KIND.clean({"lws": "vllm-chat", "enabled": True})
    current = KIND.read(api, params)
    plan = KIND.plan(current, params, Context())
    sim.store.mutate(LWS, NS, "vllm-chat", lambda o: o["status"].update(readyReplicas=3))
    with pytest.raises(Conflict):
        KIND.apply(api, params, current, plan)
    assert not enforce_eager(lws(sim))
