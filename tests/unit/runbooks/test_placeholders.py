import shlex
import subprocess

import pytest

from runbooks.placeholders import (
    MissingLabel,
    escape_promql,
    fill,
    fill_command,
    fill_params,
    fill_promql,
    missing,
    names_in,
)

LABELS = {"namespace": "llm-serving", "lws": "vllm-chat", "pod": "vllm-chat-1"}


def test_fill_substitutes_the_four_placeholders_and_leaves_promql_braces():
    template = 'sum(rate(x{namespace="{namespace}", lws="{lws}", pod="{pod}"}[1m])) > 0 and {}'
    assert fill_promql(template, LABELS) == (
        'sum(rate(x{namespace="llm-serving", lws="vllm-chat", pod="vllm-chat-1"}[1m])) > 0 and {}'
    )
    assert fill("{lws} in {namespace}", LABELS) == "vllm-chat in llm-serving"
    assert names_in('x{lws="{lws}"} / y{lws="{lws}", node="{node}"}') == ("lws", "node")


def test_promql_values_are_escaped_as_string_literals():
    hostile = {"lws": 'a"} or vector(1) or x{y="\\'}
    promql = fill_promql('up{lws="{lws}"}', hostile)
    assert promql == 'up{lws="a\\"} or vector(1) or x{y=\\"\\\\"}'
    assert escape_promql("line\nbreak") == "line\\nbreak"


def test_commands_quote_values_for_the_shell():
    hostile = {"namespace": "x; rm -rf /", "pod": "$(reboot)"}
    cmd = fill_command("kubectl -n {namespace} logs {pod} -c vllm", hostile)
    assert cmd == "kubectl -n 'x; rm -rf /' logs '$(reboot)' -c vllm"
    assert shlex.split(cmd) == ["kubectl", "-n", "x; rm -rf /", "logs", "$(reboot)", "-c", "vllm"]
    # A real shell sees one word per value.
    out = subprocess.run(
        ["sh", "-c", fill_command("printf '%s|' {namespace} {pod}", hostile)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == "x; rm -rf /|$(reboot)|"
    assert fill_command("kubectl -n {namespace} get pods", LABELS) == (
        "kubectl -n llm-serving get pods"
    )


@pytest.mark.parametrize("filler", [fill, fill_promql, fill_command])
def test_a_missing_label_is_named(filler):
    with pytest.raises(MissingLabel) as err:
        filler('x{node="{node}"}', LABELS)
    assert err.value.name == "node"
    assert str(err.value) == "needs label node"
    with pytest.raises(MissingLabel, match="needs label pod"):
        filler("{pod}", {**LABELS, "pod": ""})
    assert missing('x{node="{node}", pod="{pod}"}', LABELS) == ["node"]


def test_params_are_filled_recursively_and_keep_other_types():
    params = {"lws": "{lws}", "replicas_delta": 2, "nested": {"ns": "{namespace}"}, "on": True}
    assert fill_params(params, LABELS) == {
        "lws": "vllm-chat",
        "replicas_delta": 2,
        "nested": {"ns": "llm-serving"},
        "on": True,
    }
