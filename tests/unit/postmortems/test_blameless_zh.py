"""The Chinese list of the blameless-language check, and how a text picks its lists:
Chinese, English or both for a mixed text. The messages follow the viewer's language."""

from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation

from postmortems.blameless import blameless_check, blameless_check_fields, languages

PEOPLE = ["张伟", "李娜", "alice", "Bob"]

# (sentence, rule expected, flagged phrase): the blaming phrasing of a Chinese postmortem.
FLAGGED = [
    ("张伟忘了续期证书。", "person-as-cause", "张伟忘了"),
    ("李娜又改错了路由配置", "person-as-cause", "李娜又改错了"),
    ("这次故障都怪张伟", "person-as-cause", "都怪张伟"),
    ("李娜的配置改动导致路由中断", "person-as-cause", "李娜的配置改动导致"),
    ("张伟不小心删除了 Pod", "person-as-cause", "张伟不小心"),
    ("alice忘了扩容", "person-as-cause", "alice忘了"),  # a Latin name touching Chinese
    ("Bob 直接搞挂了网关", "person-as-cause", "Bob 直接搞挂了"),
    ("根因：人为失误。", "human-error", "人为失误"),
    ("操作失误导致 Pod 被删", "human-error", "操作失误"),
    ("值班同学太粗心了", "careless", "粗心"),
    ("值班本该早就发现队列堆积", "should-have-known", "本该早就发现"),
    ("我们应该早就检查金丝雀", "should-have-known", "应该早就检查"),
    ("当时不该在周五发布", "should-not-have", "当时不该"),
    ("发布时忘记了打开开关", "forgot", "忘记了"),
    ("这是一次严重的疏忽", "negligent", "疏忽"),
    ("变更太草率", "sloppy", "草率"),
    ("新人能力不足", "incompetent", "能力不足"),
    ("评审人懒得看运行手册", "didnt-bother", "懒得"),
    ("这次是值班的错。", "fault", "是值班的错"),
    ("都是运维的锅", "fault", "都是运维的锅"),
    ("每次都是值班背锅", "blame", "背锅"),
    ("开发在甩锅", "blame", "甩锅"),
    ("YAML 里一个低级错误", "stupid-mistake", "低级错误"),
    ("响应人没注意到磁盘告警", "not-paying-attention", "没注意到"),
    ("责任人是值班工程师", "responsible-person", "责任人是"),
    ("要追究变更人的责任", "responsible-person", "追究变更人的责任"),
]

# Neutral sentences, and look-alikes: 错误 of a config, an alert that should have fired.
NOT_FLAGGED = [
    "张伟重启了 Pod，队列恢复。",
    "李娜在 02:14 被呼叫，一分钟内认领。",
    "回滚由张伟批准。",
    "李娜的建议让我们更快止损。",
    "配置的错误在 02:10 被发现。",
    "告警本该在 02:10 触发，但阈值太高。",
    "令人难忘的一夜。",
    "我们坚持免责复盘。",
    "错误率在 02:12 回落。",
    "行动项负责人：张伟，截止日期 12 月 9 日。",
]


@pytest.mark.parametrize(("text", "rule", "phrase"), FLAGGED)
def test_flags_chinese_wording_that_blames_people(text, rule, phrase):
    findings = blameless_check(text, field="summary", people=PEOPLE)
    assert [(f.rule, f.phrase) for f in findings] == [(rule, phrase)]
    (finding,) = findings
    assert text[finding.start : finding.end] == phrase
    assert finding.message
    assert finding.suggestion


@pytest.mark.parametrize("text", NOT_FLAGGED)
def test_leaves_neutral_chinese_alone(text):
    assert blameless_check(text, people=PEOPLE) == []


def test_a_mixed_text_is_checked_against_both_lists():
    text = "rollout 时 alice forgot the flag，张伟又漏掉了金丝雀，根因是 human error。"
    findings = blameless_check(text, people=PEOPLE)
    assert [(f.rule, f.phrase) for f in findings] == [
        ("person-as-cause", "alice forgot"),
        ("person-as-cause", "张伟又漏掉了"),
        ("human-error", "human error"),
    ]


def test_each_text_gets_only_the_lists_of_its_script():
    # One list named: only that one applies, whatever the text.
    assert blameless_check("根因：人为失误", language="en") == []
    assert blameless_check("Root cause: human error", language="zh_hans") == []
    assert [f.rule for f in blameless_check("人为失误", language="zh_hans")] == ["human-error"]
    # Several fields: each one picks its own lists.
    findings = blameless_check_fields(
        {"summary": "Bob forgot the flag.", "root_cause": "Bob 忘了开关。"}, people=["Bob"]
    )
    assert [(f.field, f.phrase) for f in findings] == [
        ("summary", "Bob forgot"),
        ("root_cause", "Bob 忘了"),
    ]


def test_rules_shared_with_english_give_the_same_advice():
    english = {r.id: r for r in languages.load("en").rules}
    chinese = languages.load("zh_hans")
    assert not chinese.spaced
    for rule in chinese.rules:
        if rule.id in english:
            assert (rule.message, rule.suggestion) == (
                english[rule.id].message,
                english[rule.id].suggestion,
            )
    assert len({r.id for r in chinese.rules}) == len(chinese.rules)
    assert len({str(r.suggestion) for r in chinese.rules}) == len(chinese.rules)


def test_messages_are_in_the_viewers_language_not_the_texts():
    with translation.override("en"):
        (finding,) = blameless_check("人为失误")
    assert finding.suggestion.startswith("Describe the condition that let the mistake through")


CATALOGUE = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.mo"


@pytest.mark.skipif(not CATALOGUE.exists(), reason="the zh_Hans catalogue is not compiled yet")
def test_a_chinese_viewer_reads_the_warnings_in_chinese():
    with translation.override("zh-hans"):
        (zh_text,) = blameless_check("人为失误")
        (en_text,) = blameless_check("human error")
    assert zh_text.suggestion == en_text.suggestion
    assert "检查" in zh_text.suggestion
    assert "Describe" not in zh_text.suggestion
