"""A postmortem as one Markdown document, sections in the fixed order (summary, impact,
timeline, root cause, contributing factors, action items, lessons learned). The same text
the API's export.md answers and the print page is built from."""

from __future__ import annotations

from datetime import UTC, datetime

from postmortems.models import Postmortem

DURATIONS = (
    ("detect", "Time to detect"),
    ("acknowledge", "Time to acknowledge"),
    ("mitigate", "Time to mitigate"),
    ("resolve", "Time to resolve"),
)

TIME_ORDER = ("start", "detected", "acknowledged", "mitigated", "resolved")


def duration(seconds: int | None) -> str:
    if seconds is None:
        return "—"
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m {secs:02d}s" if hours else f"{minutes}m {secs:02d}s"


def _utc(iso: str | None) -> str:
    if not iso:
        return "—"
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def postmortem_markdown(pm: Postmortem) -> str:
    incident = pm.incident
    data = pm.impact_data or {}
    out = [
        f"# {pm.title}",
        "",
        ("**DRILL** · " if incident.is_drill else "")
        + f"Incident #{incident.pk} · {incident.severity} · status: {pm.get_status_display()}"
        + (f" · runbook `{pm.runbook}` ({pm.category})" if pm.runbook else ""),
        "",
        "## Summary",
        "",
        pm.summary or "_(empty)_",
        "",
        "## Impact",
        "",
        "| | |",
        "|---|---|",
    ]
    for key, label in DURATIONS:
        out.append(f"| {label} | {duration((data.get('durations') or {}).get(key))} |")
    times = data.get("times") or {}
    for key in TIME_ORDER:  # fixed: PostgreSQL's jsonb does not keep key order
        out.append(f"| {key.capitalize()} | {_utc(times.get(key))} |")
    out += [
        "",
        pm.impact or "",
        "",
        "## Timeline",
        "",
        "| Time (UTC) | What happened |",
        "|---|---|",
    ]
    for entry in pm.entries.all():
        if entry.included:
            when = entry.occurred_at.astimezone(UTC)
            out.append(f"| {when:%Y-%m-%d %H:%M:%S} | {_cell(entry.text)} |")
    out += ["", "## Root cause", "", pm.root_cause or "_(empty)_", ""]
    out += ["## Contributing factors", "", pm.contributing_factors or "_(empty)_", ""]
    out += ["## Action items", ""]
    items = list(pm.action_items.all())
    if items:
        out += [
            "| Item | Owner | Due | Priority | Category | Status |",
            "|---|---|---|---|---|---|",
        ]
        for item in items:
            owner = item.owner.username if item.owner else "—"
            out.append(
                f"| {_cell(item.title)} | {owner} | {item.due_date} | {item.priority} | "
                f"{item.category} | {item.get_status_display()} |"
            )
    else:
        out.append("_(none yet)_")
    out += ["", "## Lessons learned", "", pm.lessons_learned or "_(empty)_", ""]
    return "\n".join(out)
