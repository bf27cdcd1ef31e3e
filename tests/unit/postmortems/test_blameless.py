import pkgutil

import pytest

from postmortems.blameless import (
    LANGUAGES,
    Finding,
    blameless_check,
    blameless_check_fields,
    languages,
)

PEOPLE = ["alice", "Bob", "carol", "dave", "@erin", "Frank Long", "gus.ops"]

# (sentence, rule expected, flagged phrase). One row per way a postmortem can read as blame.
FLAGGED = [
    ("alice broke the router config", "person-as-cause", "alice broke"),
    ("Bob forgot to renew the certificate.", "person-as-cause", "Bob forgot"),
    ("The outage was caused by carol.", "person-as-cause", "caused by carol"),
    ("It was dave's mistake.", "person-as-cause", "dave's mistake"),
    # Typographic apostrophe, as pasted from chat.
    ("It was Dave\u2019s bad config.", "person-as-cause", "Dave\u2019s bad config"),
    ("@erin pushed a bad config to prod", "person-as-cause", "@erin pushed a bad config"),
    ("erin deployed an untested image", "person-as-cause", "erin deployed an untested image"),
    (
        "Frank Long accidentally deleted the pod",
        "person-as-cause",
        "Frank Long accidentally deleted",
    ),
    ("carol had forgotten to scale up", "person-as-cause", "carol had forgotten"),
    ("dave's config change broke routing", "person-as-cause", "dave's config change broke"),
    ("gus.ops didn't check the dashboard", "person-as-cause", "gus.ops didn't check"),
    ("alice restarted the wrong group", "person-as-cause", "alice restarted the wrong group"),
    ("Alice's fault, plainly.", "person-as-cause", "Alice's fault"),
    ("Root cause: human error.", "human-error", "human error"),
    ("Classic operator-error.", "human-error", "operator-error"),
    ("The change was made carelessly.", "careless", "carelessly"),
    ("Someone should have known better.", "should-have-known", "should have known"),
    ("The on-call should've checked the canary.", "should-have-known", "should've checked"),
    ("We should have noticed the queue growing.", "should-have-known", "should have noticed"),
    ("The flag was forgotten.", "forgot", "forgotten"),
    ("Somebody forgot the flag.", "forgot", "forgot"),
    ("That was negligent.", "negligent", "negligent"),
    ("Gross negligence on deploy day.", "negligent", "negligence"),
    ("Sloppy rollout.", "sloppy", "Sloppy"),
    ("An incompetent review.", "incompetent", "incompetent"),
    ("The reviewer didn't bother to read the runbook.", "didnt-bother", "didn't bother"),
    ("The reviewer did not bother.", "didnt-bother", "did not bother"),
    ("It was the fault of the night shift.", "fault", "fault of"),
    ("The team was at fault.", "fault", "at fault"),
    ("Nobody wants to take the blame.", "blame", "blame"),
    ("A stupid mistake in the YAML.", "stupid-mistake", "stupid mistake"),
    ("The responder was not paying attention.", "not-paying-attention", "not paying attention"),
    ("We shouldn't have deployed on a Friday.", "should-not-have", "shouldn't have"),
    ("The job should not have run twice.", "should-not-have", "should not have"),
]

# Neutral roles, neutral words, and look-alikes inside other words.
NOT_FLAGGED = [
    "alice restarted the group and the queue drained.",
    "bob was paged at 02:14 and acknowledged within a minute.",
    "The rollback was approved by carol.",
    "dave's quick restart brought the replicas back.",
    "Thanks to erin the runbook now has a dry-run step.",
    "An unforgettable night for the router.",
    "We run blameless reviews; this one was blamelessly written.",
    "A blame-free culture helps.",
    "The fault domain is one rack; fault tolerance held.",
    "A faulty NIC dropped packets.",
    "The alert should have fired at 02:10 but the threshold was too high.",
    "alicea broke the build",  # not alice: a different word
    "The palice broke nothing",
    "Carolina caused nothing",
    "The human operator acknowledged the page.",
    "Careful rollouts: the canary caught the error.",
    "Non-negligent handling.",
]


@pytest.mark.parametrize(("text", "rule", "phrase"), FLAGGED)
def test_flags_wording_that_blames_people(text, rule, phrase):
    findings = blameless_check(text, field="summary", people=PEOPLE)
    assert [(f.rule, f.phrase) for f in findings] == [(rule, phrase)]
    (finding,) = findings
    assert text[finding.start : finding.end] == phrase
    assert finding.field == "summary"
    assert finding.message
    assert finding.suggestion


@pytest.mark.parametrize("text", NOT_FLAGGED)
def test_leaves_neutral_wording_alone(text):
    assert blameless_check(text, people=PEOPLE) == []


def test_people_match_case_insensitively_and_only_on_word_boundaries():
    assert [f.phrase for f in blameless_check("ALICE BROKE IT", people=["alice"])] == [
        "ALICE BROKE"
    ]
    assert [f.phrase for f in blameless_check("caused by @Alice", people=["alice"])] == [
        "caused by @Alice"
    ]
    for text in ("malice broke it", "alice-bot broke it", "jim-alice broke it"):
        assert blameless_check(text, people=["alice"]) == [], text
    # A full name split across a line break is still the person.
    assert blameless_check("Frank\nLong broke it", people=["Frank Long"])[0].rule == (
        "person-as-cause"
    )


def test_a_name_is_only_a_person_when_listed():
    # Without `people` the check cannot know "alice" is someone; the phrase rules still work.
    assert blameless_check("alice broke the router config") == []
    assert [f.rule for f in blameless_check("alice forgot the flag")] == ["forgot"]
    # Blank entries and regex metacharacters in names are harmless.
    assert blameless_check("x broke it", people=["", "  ", "a.*", "(b"]) == []
    assert blameless_check("a.* broke it", people=["a.*"])[0].phrase == "a.* broke"


def test_multiple_findings_come_back_in_reading_order_with_correct_offsets():
    text = (
        "Root cause: human error. Bob forgot to renew the cert, which was careless, and "
        "the on-call should have noticed. It was not carol's fault."
    )
    findings = blameless_check(text, field="root_cause", people=PEOPLE)
    assert [(f.rule, f.phrase) for f in findings] == [
        ("human-error", "human error"),
        ("person-as-cause", "Bob forgot"),
        ("careless", "careless"),
        ("should-have-known", "should have noticed"),
        ("person-as-cause", "carol's fault"),
    ]
    for f in findings:
        assert text[f.start : f.end] == f.phrase
        assert f.field == "root_cause"
    # "forgot" inside "Bob forgot" and "fault" inside "carol's fault" are one warning each.
    assert len({(f.start, f.end) for f in findings}) == len(findings)


def test_each_rule_has_its_own_suggestion_phrased_around_the_system():
    (finding,) = blameless_check("human error")
    assert finding == Finding(
        field="",
        start=0,
        end=11,
        phrase="human error",
        rule="human-error",
        message=finding.message,
        suggestion="Describe the condition that let the mistake through: which check, "
        "guardrail or review was missing?",
    )
    rules = languages.load("en").rules
    assert len({r.suggestion for r in rules}) == len(rules)


def test_checks_several_fields_and_names_the_field():
    fields = {
        "summary": "Routing broke at 02:00.",
        "root_cause": "dave's mistake in the config",
        "timeline:42": "erin forgot the canary",
    }
    findings = blameless_check_fields(fields, people=iter(["dave", "erin"]))
    assert [(f.field, f.phrase) for f in findings] == [
        ("root_cause", "dave's mistake"),
        ("timeline:42", "erin forgot"),
    ]
    assert blameless_check_fields({}) == []


def test_unknown_language_is_an_error_that_names_the_supported_ones():
    with pytest.raises(ValueError, match=r"'xx'.*supported: en"):
        blameless_check("human error", language="xx")
    with pytest.raises(ValueError, match="supported: en"):
        blameless_check("", language="xx")
    with pytest.raises(ValueError, match="supported: en"):
        blameless_check_fields({}, language="xx")
    assert LANGUAGES == ("en", "zh_hans")


def test_every_language_module_is_registered_and_has_the_same_shape():
    modules = {m.name for m in pkgutil.iter_modules(languages.__path__)}
    assert modules == set(LANGUAGES)
    for code in LANGUAGES:
        language = languages.load(code)
        assert language.code == code
        assert language.rules
        assert language.failure_verbs
        assert language.by_patterns
        assert len({r.id for r in language.rules}) == len(language.rules)


def test_empty_text_has_no_findings():
    assert blameless_check("", people=PEOPLE) == []
