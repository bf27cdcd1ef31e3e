"""What the console says when Prometheus cannot answer a check or a chart (runbooks/
prometheus.py), as message ids (console/texts/).

The client's errors travel as English strings (the exception's message, the answer cache,
the triage's `down` list, the auto-triage payload that decides whether Prometheus being
down is news), so they are worded again where they are shown: `prometheus_said(text)`
recognises the shapes below and gives the parts back, Prometheus' own text (its error,
the connection's) staying a parameter. A string of no known shape is shown as it is.
The triage's own notes (no data, a missing label, no runbook) are recognised the same way.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from console.texts import Msg, as_api, msg, render, texts_register
from console.texts.recognise import recognise
from runbooks import texts  # noqa: F401  (registry: the triage's notes, "runbooks.triage.*")

texts_register(
    {
        "runbooks.prometheus.timeout": gettext_noop(
            "Prometheus at %(url)s did not answer in %(seconds)s s"
        ),
        "runbooks.prometheus.refused": gettext_noop("Prometheus at %(url)s refused the connection"),
        "runbooks.prometheus.unreachable": gettext_noop(
            "Prometheus at %(url)s could not be reached: %(detail)s"
        ),
        "runbooks.prometheus.failed": gettext_noop(
            "Prometheus at %(url)s could not be queried: %(detail)s"
        ),
        "runbooks.prometheus.not_json": gettext_noop(
            "Prometheus at %(url)s answered %(status)s with a body that is not Prometheus JSON"
        ),
        "runbooks.prometheus.answered": gettext_noop(
            "Prometheus at %(url)s answered %(status)s: %(error)s"
        ),
        "runbooks.prometheus.no_error": gettext_noop("no error message"),
        # Notes on an answer (prometheus.single_value), shown under a check.
        "runbooks.prometheus.series": gettext_noop("%(count)s series; took the largest"),
        "runbooks.prometheus.result_type": gettext_noop("unexpected result type %(kind)s"),
    }
)

# Most specific first: "answered 200 with a body ..." before "answered 500: ...".
_SHAPES = (
    "runbooks.prometheus.timeout",
    "runbooks.prometheus.refused",
    "runbooks.prometheus.unreachable",
    "runbooks.prometheus.failed",
    "runbooks.prometheus.not_json",
    "runbooks.prometheus.answered",
    "runbooks.prometheus.series",
    "runbooks.prometheus.result_type",
    # The triage's own notes on a check, and on an incident no runbook matches.
    "runbooks.triage.no_data",
    "runbooks.triage.needs_label",
    "runbooks.triage.no_runbook",
)


def prometheus_said(text: str) -> Msg | None:
    """The parts of an error or note the client wrote; None for another text."""
    said = recognise(text, _SHAPES)
    if said is None:
        return None
    ((key, params),) = said.parts
    if params.get("error") == "no error message":
        return msg(key, **{**params, "error": msg("runbooks.prometheus.no_error")})
    return said


def prometheus_text(text: str) -> str:
    """`text` in the active language (as it is when it has no known shape)."""
    said = prometheus_said(text)
    return render(said.stored, fallback=text) if said is not None else (text or "")


def prometheus_text_api(text: str) -> tuple[str, list[dict[str, Any]] | None]:
    """For the API: the words in the request's language and their ids and parameters."""
    said = prometheus_said(text)
    if said is None:
        return text or "", None
    return render(said.stored, fallback=text), as_api(said.stored)
