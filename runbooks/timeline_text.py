"""Auto-triage and confirmed-diagnosis lines in the viewer's language.

They are stored in English (the worker and the services write English); their payload
holds the runbook, branch, checks and recommended actions, so a page in another language
words them again from the catalogue in that language (incidents/timeline_text.py shows
any line that does not fit as stored).
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, pgettext

from incidents.timeline_text import timeline_text_register
from runbooks.catalog import load_catalog
from runbooks.schema import Runbook
from runbooks.timeline_kinds import AUTO_TRIAGE, DIAGNOSIS_CONFIRMED
from runbooks.units import with_unit


def first_sentence(text: str) -> str:
    """Up to the first full stop, English (". ") or Chinese ("。")."""
    text = " ".join((text or "").split())
    cut = [i for i in (text.find(". "), text.find("。")) if i != -1]
    if not cut:
        return text
    end = min(cut)
    return text[:end] + ("。" if text[end] == "。" else ".")


def _state(state: str) -> str:
    words = {
        "firing": pgettext("triage check state", "firing"),
        "ok": pgettext("triage check state", "ok"),
        "no_data": pgettext("triage check state", "no data"),
        "error": pgettext("triage check state", "error"),
    }
    return words.get(state, state)


def _number(value: Any, unit: str) -> str:
    if not isinstance(value, int | float):
        return gettext("no value")
    return with_unit(value, unit)  # the unit in words too (ratio -> 比例; bool: 是/否)


def _branch(payload: dict[str, Any], stored_first_line: str, english_head: str) -> Runbook | None:
    """The runbook in the active language, if the stored line is the one the console
    wrote for this payload (else None: show it as stored)."""
    slug, branch = str(payload.get("runbook", "")), str(payload.get("branch", ""))
    if not slug or not branch or payload.get("prometheus_error"):
        return None
    if not stored_first_line.startswith(english_head.format(runbook=slug, branch=branch)):
        return None
    runbook = load_catalog().get(slug)
    try:
        return runbook if runbook is not None and runbook.branch(branch) else None
    except KeyError:
        return None


def _auto_triage(message: str, payload: dict[str, Any]) -> str | None:
    runbook = _branch(payload, message.split("\n", 1)[0], "Auto-triage ({runbook}): {branch} — ")
    if runbook is None:
        return None
    branch = str(payload["branch"])
    lines = [
        gettext("Auto-triage (%(runbook)s): %(branch)s — %(diagnosis)s")
        % {
            "runbook": runbook.slug,
            "branch": branch,
            "diagnosis": first_sentence(runbook.branch(branch).diagnosis),
        }
    ]
    units = {c.id: c.unit for c in runbook.triage}
    because = [
        f"{b.get('check')} {_state(str(b.get('state')))} "
        f"({_number(b.get('value'), units.get(str(b.get('check')), ''))})"
        for b in payload.get("because", [])
    ]
    if because:
        lines.append(gettext("Because: %(checks)s") % {"checks": "; ".join(because)})
    titles = {i: a.title for i, a in enumerate(runbook.emergency_actions)}
    recommended = [
        f"{titles.get(r.get('index'), r.get('title', ''))} [{r.get('kind')} "
        + ", ".join(f"{k}={v}" for k, v in (r.get("params") or {}).items())
        + "]"
        for r in payload.get("recommended", [])
    ]
    if recommended:
        lines.append(gettext("Recommended: %(actions)s") % {"actions": "; ".join(recommended)})
    else:
        lines.append(gettext("No action recommended for this branch."))
    return "\n".join(lines)


def _diagnosis_confirmed(message: str, payload: dict[str, Any]) -> str | None:
    runbook = _branch(payload, message, "Diagnosis confirmed: {branch} — ")
    if runbook is None:
        return None
    branch = str(payload["branch"])
    return gettext("Diagnosis confirmed: %(branch)s — %(diagnosis)s") % {
        "branch": branch,
        "diagnosis": first_sentence(runbook.branch(branch).diagnosis),
    }


def register() -> None:
    """Called once from RunbooksConfig.ready."""
    timeline_text_register(AUTO_TRIAGE, _auto_triage)
    timeline_text_register(DIAGNOSIS_CONFIRMED, _diagnosis_confirmed)
