"""`/incident`'s grammar (chatops/commands.py): every form, and a refusal that names what
is wrong and shows the usage, in English and in Chinese."""

import pytest
from django.utils import translation

from chatops.commands import USAGE, CommandError, command_parse


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ("help", {})),
        ("   ", ("help", {})),
        ("help", ("help", {})),
        ("HELP", ("help", {})),
        (
            "declare SEV2 Checkout is down",
            ("declare", {"severity": "SEV2", "title": "Checkout is down"}),
        ),
        (
            "declare sev1   GPU nodes  lost ",
            ("declare", {"severity": "SEV1", "title": "GPU nodes  lost"}),
        ),
        ("Declare SEV4 x", ("declare", {"severity": "SEV4", "title": "x"})),
        ("status", ("status", {})),
        ("status #42", ("status", {"incident": 42})),
        ("note #7 restarted the router", ("note", {"incident": 7, "text": "restarted the router"})),
        ("note restarted the router", ("note", {"text": "restarted the router"})),
        ("note #7 line one\nline two", ("note", {"incident": 7, "text": "line one\nline two"})),
        (
            "page inference-sre #12 TTFT is 4s",
            ("page", {"team": "inference-sre", "incident": 12, "message": "TTFT is 4s"}),
        ),
        (
            "page Inference_SRE GPUs are gone",
            ("page", {"team": "inference_sre", "message": "GPUs are gone"}),
        ),
    ],
)
def test_parses(text, expected):
    assert command_parse(text) == expected


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("reboot everything", "Unknown command 'reboot'"),
        ("declare", "declare needs a severity and a title"),
        ("declare SEV9 title", "SEV9 is not a severity"),
        ("declare SEV2", "declare needs a title"),
        ("declare SEV2 " + "x" * 201, "longer than 200 characters"),
        ("status #abc", "#abc is not an incident number"),
        ("status 42", "42 is not an incident number"),
        ("status #0", "#0 is not an incident number"),
        ("status #4 #5", "status takes one incident number at most"),
        ("note", "note needs the text"),
        ("note #3", "note needs the text"),
        ("note #x text", "#x is not an incident number"),
        ("page", "page needs a team and a message"),
        ("page #12 help", "#12 is not a team's slug"),
        ("page sre/ops oops", "sre/ops is not a team's slug"),
        ("page sre", "page needs a message"),
        ("page sre #12", "page needs a message"),
        ("page sre #1x message", "#1x is not an incident number"),
        ("page sre " + "y" * 501, "longer than 500 characters"),
    ],
)
def test_refusals_name_the_problem_and_show_the_usage(text, names):
    with pytest.raises(CommandError) as caught:
        command_parse(text)
    message = str(caught.value)
    assert names in message
    assert "/incident declare SEV1|SEV2|SEV3|SEV4 <title>" in message  # the usage follows
    assert caught.value.code == "invalid_command"


def test_refusal_is_english_in_str_whatever_the_language():
    with translation.override("zh-hans"), pytest.raises(CommandError) as caught:
        command_parse("declare SEV9 x")
    assert str(caught.value).startswith("SEV9 is not a severity")


def test_help_usage_lists_every_command():
    text = str(USAGE)
    for verb in ("declare", "status", "note", "page", "help"):
        assert f"/incident {verb}" in text
