"""Why an earlier incident is similar, as message ids (console/texts/).

The selector names each match as an English string ("same runbook ttft-spike", "same LWS
llm-serving/vllm-chat", "same node gpu-3": it is a SQL constant); `reason_said` reads it
back into parts, so the page and the API word it in the reader's language with the name
kept as it is. The templates are the page's old msgids, already translated."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from console.texts import Msg, as_api, msg, render, texts_register

texts_register(
    {
        "postmortems.similar.runbook": gettext_noop("same runbook %(what)s"),
        "postmortems.similar.lws": gettext_noop("same LWS %(what)s"),
        "postmortems.similar.node": gettext_noop("same node %(what)s"),
    }
)

PREFIXES = (
    ("same runbook ", "postmortems.similar.runbook"),
    ("same LWS ", "postmortems.similar.lws"),
    ("same node ", "postmortems.similar.node"),
)


def reason_said(reason: str) -> Msg | None:
    """The parts of a reason the selector wrote; None for another string."""
    for prefix, key in PREFIXES:
        if reason.startswith(prefix):
            return msg(key, what=reason[len(prefix) :])
    return None


def reason_text(reason: str) -> str:
    """`reason` in the active language (as it is when it has no known shape)."""
    said = reason_said(reason)
    return render(said.stored, fallback=reason) if said is not None else reason


def reason_api(reason: str) -> tuple[str, list[dict[str, Any]] | None]:
    said = reason_said(reason)
    if said is None:
        return reason, None
    return render(said.stored, fallback=reason), as_api(said.stored)
