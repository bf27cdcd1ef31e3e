"""The catalogue in Simplified Chinese: every text field translated, nothing else changed,
and a broken translation fails to load (and `manage.py check`) naming file and field."""

import dataclasses
import re
import shutil
from io import StringIO

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.utils import translation

from runbooks.catalog import DEFAULT_DIR, load_catalog, runbook_for_labels
from runbooks.checks import runbook_catalog_check
from runbooks.schema import CatalogError
from runbooks.translations import directory_name

SLUGS = sorted(p.stem for p in DEFAULT_DIR.glob("*.yaml") if not p.name.startswith("_"))
# The text fields of the dataclasses in runbooks.schema; everything else is shared.
TEXT_FIELDS = {
    "title", "symptom", "question", "diagnosis", "why", "root_cause", "description",
    "examples", "defences",
}  # fmt: skip
# Right to stay the same in Chinese: product and metric names only.
SAME_IN_CHINESE = {"TTFT p99"}
CJK = re.compile(r"[\u4e00-\u9fff]")
# Names a translation keeps as written: flags, metric and parameter names, runbook slugs.
VERBATIM = re.compile(rf"--[a-z][a-z-]+|\b[a-z]+(?:_[a-z]+)+\b|\b(?:{'|'.join(SLUGS)})\b")


def _texts(obj, path=""):
    """(path, text) for every text field of a schema object, nested ones included."""
    if isinstance(obj, tuple):
        for i, item in enumerate(obj):
            yield from _texts(item, f"{path}[{i}]")
    elif dataclasses.is_dataclass(obj):
        for field in dataclasses.fields(obj):
            value = getattr(obj, field.name)
            sub = f"{path}.{field.name}" if path else field.name
            if field.name not in TEXT_FIELDS:
                yield from _texts(value, sub)
            elif isinstance(value, tuple):  # examples, defences
                yield from ((f"{sub}[{i}]", v) for i, v in enumerate(value))
            else:
                yield sub, value


def _shared(obj):
    """`obj` with every text field blanked: what both languages must have in common."""
    if isinstance(obj, tuple):
        return tuple(_shared(x) for x in obj)
    if not dataclasses.is_dataclass(obj):
        return obj
    changes = {
        f.name: "" if f.name in TEXT_FIELDS else _shared(getattr(obj, f.name))
        for f in dataclasses.fields(obj)
    }
    return dataclasses.replace(obj, **changes)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(DEFAULT_DIR)


def _pairs(english, chinese):
    en, zh = list(_texts(english)), list(_texts(chinese))
    assert [p for p, _ in en] == [p for p, _ in zh]
    return [(p, e, z) for (p, e), (_, z) in zip(en, zh, strict=True)]


def _assert_translated(pairs):
    for path, en, zh in pairs:
        assert zh.strip(), path
        if zh not in SAME_IN_CHINESE:
            assert zh != en, f"{path}: not translated"
            assert CJK.search(zh), f"{path}: no Chinese in {zh!r}"
        kept = [name for name in VERBATIM.findall(en) if name not in zh]
        assert not kept, f"{path}: {kept} must appear as written"


@pytest.mark.parametrize("slug", SLUGS)
def test_every_runbook_is_translated_and_shares_the_rest(catalog, slug):
    english, chinese = catalog.edition("en").get(slug), catalog.edition("zh-hans").get(slug)
    _assert_translated(_pairs(english, chinese))
    assert _shared(chinese) == _shared(english)
    # Spelled out, the fields the tools run: ids, kinds, params and PromQL.
    assert [c.promql for c in chinese.triage] == [c.promql for c in english.triage]
    assert [(a.kind, a.params) for a in chinese.emergency_actions] == [
        (a.kind, a.params) for a in english.emergency_actions
    ]
    assert [b.id for b in chinese.decision_tree] == [b.id for b in english.decision_tree]


def test_eight_runbooks_and_the_categories_are_translated(catalog):
    assert len(SLUGS) == 8
    english, chinese = catalog.edition("en"), catalog.edition("zh-hans")
    assert sorted(chinese.runbooks) == SLUGS
    assert list(chinese.categories) == list(english.categories)
    for name, category in english.categories.items():
        _assert_translated(_pairs(category, chinese.categories[name]))
        assert _shared(chinese.categories[name]) == _shared(category)


def test_the_active_language_picks_the_edition():
    with translation.override("zh-hans"):
        runbook = load_catalog().get("ttft-spike")
        assert CJK.search(runbook.title)
        assert runbook_for_labels({"alertname": "VLLMHighTTFT"}) is runbook
        assert load_catalog().categories["resource"].title == "硬件与资源"
    assert load_catalog().get("ttft-spike").title.startswith("Time to first token")
    with translation.override("fr"):  # no translation: English
        assert load_catalog().get("ttft-spike").title.startswith("Time to first token")


def test_directory_names():
    assert directory_name("zh-hans") == "zh-Hans"
    assert directory_name("pt-br") == "pt-BR"
    assert directory_name("de") == "de"


class ZhCopy:
    """A writable copy of the catalogue, with helpers for its zh-Hans files."""

    def __init__(self, catalog_copy):
        self.dir = catalog_copy.dir
        self.zh = catalog_copy.dir / "zh-Hans"

    def file(self, slug):
        return self.zh / f"{slug}.yaml"

    def edit(self, slug, change):
        path = self.file(slug)
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(doc)
        path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), "utf-8")


@pytest.fixture
def zh(catalog_copy):
    return ZhCopy(catalog_copy)


def _pop(*keys):
    def change(doc):
        for key in keys[:-1]:
            doc = doc[key]
        doc.pop(keys[-1])

    return change


def _put(value, *keys):
    def change(doc):
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value

    return change


CASES = [
    ("ttft-spike", _pop("decision_tree", "capacity", "diagnosis"),
     "ttft-spike.yaml: decision_tree.capacity.diagnosis: missing"),
    ("ttft-spike", _pop("decision_tree", "capacity"),
     "ttft-spike.yaml: decision_tree.capacity: missing"),
    ("ttft-spike", _pop("root_cause"), "ttft-spike.yaml: root_cause: missing"),
    ("nccl-hang", _pop("guard"), "nccl-hang.yaml: guard: missing"),
    ("ttft-spike", _put("sre", "owner"), "ttft-spike.yaml: owner: unknown key"),
    ("ttft-spike", _put("max(x)", "triage", "kv_usage", "promql"),
     "ttft-spike.yaml: triage.kv_usage.promql: unknown key; allowed: question"),
    ("retry-storm", _put({"question": "文本"}, "triage", "retry_rate"),
     "retry-storm.yaml: triage.retry_rate: unknown check id 'retry_rate'; known: retry_ratio"),
    ("ecc-errors", _put({"diagnosis": "文本"}, "decision_tree", "bad_gpu"),
     "ecc-errors.yaml: decision_tree.bad_gpu: unknown branch id 'bad_gpu'"),
    ("ecc-errors", _put({"title": "文本"}, "guard", "signals", "latency"),
     "ecc-errors.yaml: guard.signals.latency: unknown signal id 'latency'"),
    ("ttft-spike", _pop("emergency_actions", 1),
     "ttft-spike.yaml: emergency_actions: expected 2 items, as in the English file; got 1"),
    ("nccl-hang", _put([{"title": "文本"}], "diagnostic_commands"),
     "nccl-hang.yaml: diagnostic_commands: expected 6 items"),
    ("retry-storm", _put("", "long_term", 0, "title"),
     "retry-storm.yaml: long_term[0].title: expected non-empty text"),
    ("retry-storm", _pop("long_term", 0, "description"),
     "retry-storm.yaml: long_term[0].description: missing"),
    ("_categories", _put(["一"], "categories", "model", "examples"),
     "_categories.yaml: categories.model.examples: expected 3 items"),
    ("_categories", _pop("categories", "upstream"),
     "_categories.yaml: categories.upstream: missing"),
]  # fmt: skip


@pytest.mark.parametrize(("slug", "change", "message"), CASES)
def test_a_broken_translation_names_file_and_field(zh, slug, change, message):
    zh.edit(slug, change)
    with pytest.raises(CatalogError) as err:
        load_catalog(zh.dir)
    assert message in str(err.value)
    assert str(zh.file(slug)) in str(err.value)


def test_missing_and_extra_translation_files(zh):
    zh.file("nccl-hang").unlink()
    with pytest.raises(CatalogError, match=r"zh-Hans/nccl-hang\.yaml: missing"):
        load_catalog(zh.dir)
    shutil.copy(zh.file("ttft-spike"), zh.file("nccl-hang"))
    with pytest.raises(CatalogError, match=r"nccl-hang\.yaml: triage\.\w+: unknown check id"):
        load_catalog(zh.dir)
    zh.file("nccl-hang").unlink()
    shutil.copy(zh.file("ttft-spike"), zh.file("nccl-stall"))
    with pytest.raises(CatalogError, match=r"nccl-stall\.yaml: no runbook nccl-stall\.yaml"):
        load_catalog(zh.dir)
    shutil.rmtree(zh.zh)
    with pytest.raises(CatalogError, match=r"zh-Hans: missing \(settings.LANGUAGES has 'zh-hans'"):
        load_catalog(zh.dir)


def test_every_configured_language_needs_its_directory(settings, zh):
    settings.LANGUAGES = [("en", "English")]
    assert list(load_catalog(zh.dir).editions) == ["en"]
    settings.LANGUAGES = [("en", "English"), ("zh-hans", "简体中文"), ("pt-br", "Português")]
    with pytest.raises(CatalogError, match=r"pt-BR: missing"):
        load_catalog(zh.dir)


def test_an_edited_translation_is_reloaded(zh):
    assert load_catalog(zh.dir).edition("zh-hans").get("ttft-spike").title != "改过的标题"
    zh.edit("ttft-spike", _put("改过的标题", "title"))
    assert load_catalog(zh.dir).edition("zh-hans").get("ttft-spike").title == "改过的标题"


def test_check_reports_a_broken_translation(settings, zh):
    zh.edit("ttft-spike", _pop("decision_tree", "capacity", "diagnosis"))
    settings.RUNBOOKS_CATALOG_DIR = zh.dir
    [error] = runbook_catalog_check()
    assert error.id == "runbooks.E001"
    assert "zh-Hans/ttft-spike.yaml: decision_tree.capacity.diagnosis: missing" in error.msg
    with pytest.raises(SystemCheckError, match=r"runbooks\.E001"):
        call_command("check", stdout=StringIO(), stderr=StringIO())
