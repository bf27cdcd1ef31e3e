"""A broken catalogue file fails to load with a message naming the file and the field."""

import pytest

from runbooks.catalog import load_catalog
from runbooks.schema import CatalogError


def _set(path, value):
    def change(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


CASES = [
    (
        "nccl-hang",
        _set(["triage", 2, "comparator"], "=>"),
        "nccl-hang.yaml: triage[2].comparator: expected one of >, >=, <, <=, ==, !=; got '=>'",
    ),
    (
        "ttft-spike",
        _set(["triage", 0, "treshold"], 10),
        "ttft-spike.yaml: triage[0].treshold: unknown key",
    ),
    ("ttft-spike", _set(["owner"], "sre"), "ttft-spike.yaml: owner: unknown key"),
    (
        "ttft-spike",
        _set(["decision_tree", 0, "when"], {"all": ["waiting_queue", "kv_usgae"]}),
        "ttft-spike.yaml: decision_tree[0].when.all[1]: unknown check id 'kv_usgae'",
    ),
    (
        "prefix-cache-drop",
        _set(["emergency_actions", 0, "kind"], "rollback_router"),
        "prefix-cache-drop.yaml: emergency_actions[0].kind: expected one of scale_lws,",
    ),
    (
        "prefix-cache-drop",
        _set(["decision_tree", 0, "recommended_actions"], ["restart_lws_group"]),
        "decision_tree[0].recommended_actions[0]: restart_lws_group has no emergency_actions",
    ),
    (
        "ttft-spike",
        _set(["triage", 1, "promql"], 'max(vllm:kv_cache_usage_perc{cluster="{cluster}"})'),
        "ttft-spike.yaml: triage[1].promql: unknown placeholder {cluster}",
    ),
    (
        "ttft-spike",
        _set(["triage", 1, "promql"], "max(vllm:kv_cache_usage_perc{lws={lws}})"),
        "triage[1].promql: placeholders may only appear inside double-quoted label values",
    ),
    (
        "ttft-spike",
        _set(["triage", 1, "promql"], 'max(vllm:kv_cache_usage_perc{lws=~"{lws}.*"})'),
        "triage[1].promql: placeholders may not appear in regex matchers",
    ),
    (
        "ttft-spike",
        _set(["golden_signals", 0, "promql"], 'sum(rate(x{lws="{lws}"}[2m])'),
        "ttft-spike.yaml: golden_signals[0].promql: unclosed '('",
    ),
    (
        "nccl-hang",
        _set(["diagnostic_commands", 0, "command"], "kubectl -n '{namespace}' get pods"),
        "nccl-hang.yaml: diagnostic_commands[0].command: placeholders may not appear inside",
    ),
    (
        "nccl-hang",
        _set(["emergency_actions", 1, "params"], {"node": "{host}"}),
        "nccl-hang.yaml: emergency_actions[1].params.node: unknown placeholder {host}",
    ),
    ("nccl-hang", _set(["slug"], "nccl-stall"), "nccl-hang.yaml: slug: must equal the file name"),
    ("ecc-errors", _set(["category"], "hardware"), "ecc-errors.yaml: category: expected one of"),
    ("ecc-errors", _set(["default_severity"], "SEV0"), "default_severity: expected one of SEV1"),
    (
        "ecc-errors",
        _set(["triage", 0, "threshold"], "zero"),
        "triage[0].threshold: expected a number",
    ),
    (
        "ecc-errors",
        _set(["triage", 1, "id"], "ecc_new"),
        "ecc-errors.yaml: triage[1].id: duplicate id 'ecc_new'",
    ),
    (
        "ecc-errors",
        _set(["long_term", 0, "category"], "hardware"),
        "long_term[0].category: expected one of monitoring, automation, drill, config",
    ),
    ("ecc-errors", _set(["long_term", 0, "priority"], "P0"), "long_term[0].priority: expected"),
    (
        "retry-storm",
        _set(["decision_tree", 3, "when"], "retry_ratio"),
        "retry-storm.yaml: decision_tree[3].when: the last branch is the catch-all",
    ),
    (
        "retry-storm",
        _set(["decision_tree", 0, "when"], {"either": ["retry_ratio"]}),
        "decision_tree[0].when: expected one of all, any, not; got 'either'",
    ),
    ("retry-storm", _set(["alerts"], []), "retry-storm.yaml: alerts: expected a non-empty list"),
    (
        "ttft-spike",
        _set(["alerts"], ["VLLMRetryStorm"]),
        "ttft-spike.yaml: alerts[0]: VLLMRetryStorm is already answered by retry-storm",
    ),
    (
        "cuda-graph-capture",
        _set(["triage", 0, "requires"], ["namespace"]),
        "cuda-graph-capture.yaml: triage[0].requires: must list pod",
    ),
]


@pytest.mark.parametrize(("slug", "change", "message"), CASES)
def test_broken_file_names_file_and_field(catalog_copy, slug, change, message):
    catalog_copy.edit(slug, change)
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy.dir)
    assert message in str(err.value)
    assert str(catalog_copy.file(f"{slug}.yaml")) in str(err.value)


def test_invalid_yaml_names_the_file(catalog_copy):
    catalog_copy.file("ttft-spike.yaml").write_text("slug: ttft-spike\ntriage: [unclosed\n")
    with pytest.raises(CatalogError, match=r"ttft-spike\.yaml: invalid YAML"):
        load_catalog(catalog_copy.dir)


def test_a_missing_required_field_is_named(catalog_copy):
    catalog_copy.edit("long-context-kv", lambda doc: doc.pop("root_cause"))
    with pytest.raises(CatalogError, match=r"long-context-kv\.yaml: root_cause: required"):
        load_catalog(catalog_copy.dir)


def test_categories_file_is_required_and_complete(catalog_copy):
    categories = catalog_copy.file("_categories.yaml")
    text = categories.read_text()
    categories.write_text(text.replace("name: framework", "name: frameworks"))
    with pytest.raises(CatalogError, match=r"_categories\.yaml: categories\[4\]\.name"):
        load_catalog(catalog_copy.dir)
    categories.unlink()
    with pytest.raises(CatalogError, match=r"_categories\.yaml: missing"):
        load_catalog(catalog_copy.dir)


def test_an_edited_file_is_reloaded(catalog_copy):
    assert load_catalog(catalog_copy.dir).get("ttft-spike").default_severity == "SEV2"
    catalog_copy.edit("ttft-spike", _set(["default_severity"], "SEV1"))
    assert load_catalog(catalog_copy.dir).get("ttft-spike").default_severity == "SEV1"
