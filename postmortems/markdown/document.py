"""A postmortem as one Markdown document, sections in the fixed order (summary, impact,
timeline, root cause, contributing factors, action items, lessons learned). The same text
the API's export.md answers and the print page is built from.

A draft whose author chose its language (Postmortem.draft_language) is exported with its
headings in that language, so the document does not mix two; older drafts are exported
in the reader's language."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from postmortems.models import Postmortem

# Written in the reader's language (the active one); the stored text is exported as written.
DURATIONS = (
    ("detect", gettext_lazy("Time to detect")),
    ("acknowledge", gettext_lazy("Time to acknowledge")),
    ("mitigate", gettext_lazy("Time to mitigate")),
    ("resolve", gettext_lazy("Time to resolve")),
)

# Fixed order: PostgreSQL's jsonb does not keep key order.
TIMES = (
    ("start", pgettext_lazy("impact time", "Start")),
    ("detected", pgettext_lazy("impact time", "Detected")),
    ("acknowledged", pgettext_lazy("impact time", "Acknowledged")),
    ("mitigated", pgettext_lazy("impact time", "Mitigated")),
    ("resolved", pgettext_lazy("impact time", "Resolved")),
)


def duration(seconds: int | None) -> str:
    if seconds is None:
        return "—"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    parts = {"h": hours, "m": minutes, "s": f"{secs:02d}", "mm": f"{minutes:02d}"}
    if hours:
        return _("%(h)sh %(mm)sm %(s)ss") % parts
    return _("%(m)sm %(s)ss") % parts


def _utc(iso: str | None) -> str:
    if not iso:
        return "—"
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _head(pm: Postmortem) -> str:
    incident = pm.incident
    line = _("Incident #%(id)s · %(severity)s · status: %(status)s") % {
        "id": incident.pk,
        "severity": incident.severity,
        "status": pm.get_status_display(),
    }
    if incident.is_drill:
        line = _("**DRILL** · %(line)s") % {"line": line}
    if pm.runbook:
        line += _(" · runbook `%(runbook)s` (%(category)s)") % {
            "runbook": pm.runbook,
            "category": pm.category,
        }
    return line


def postmortem_markdown(pm: Postmortem) -> str:
    if pm.draft_language:
        with translation.override(pm.draft_language):
            return _markdown(pm)
    return _markdown(pm)


def _markdown(pm: Postmortem) -> str:
    data = pm.impact_data or {}
    empty = _("_(empty)_")
    out = [
        f"# {pm.title}",
        "",
        _head(pm),
        "",
        "## " + _("Summary"),
        "",
        pm.summary or empty,
        "",
        "## " + _("Impact"),
        "",
        "| | |",
        "|---|---|",
    ]
    for key, label in DURATIONS:
        out.append(f"| {label} | {duration((data.get('durations') or {}).get(key))} |")
    times = data.get("times") or {}
    for key, label in TIMES:
        out.append(f"| {label} | {_utc(times.get(key))} |")
    out += [
        "",
        pm.impact or "",
        "",
        "## " + _("Timeline"),
        "",
        "| {} | {} |".format(_("Time (UTC)"), _("What happened")),
        "|---|---|",
    ]
    for entry in pm.entries.all():
        if entry.included:
            when = entry.occurred_at.astimezone(UTC)
            out.append(f"| {when:%Y-%m-%d %H:%M:%S} | {_cell(entry.text)} |")
    out += ["", "## " + _("Root cause"), "", pm.root_cause or empty, ""]
    out += ["## " + _("Contributing factors"), "", pm.contributing_factors or empty, ""]
    out += ["## " + _("Action items"), ""]
    items = list(pm.action_items.all())
    if items:
        heads = (_("Item"), _("Owner"), _("Due"), _("Priority"), _("Category"), _("Status"))
        out += ["| " + " | ".join(heads) + " |", "|---|---|---|---|---|---|"]
        for item in items:
            owner = item.owner.username if item.owner else "—"
            out.append(
                f"| {_cell(item.title)} | {owner} | {item.due_date} | {item.priority} | "
                f"{item.category} | {item.get_status_display()} |"
            )
    else:
        out.append(_("_(none yet)_"))
    out += ["", "## " + _("Lessons learned"), "", pm.lessons_learned or empty, ""]
    return "\n".join(out)
