"""The texts inside a run's JSON (its plan, its preview) for the API: each worded in the
request's language, with a sibling `<key>_i18n` holding its ids and parameters (null when
it was stored only as text). The stored `<key>_msg` parts are not repeated."""

from __future__ import annotations

from typing import Any

from console.texts import as_api, render

I18N_HELP = (
    "The ids and parameters of the field beside it ([{id, params}]), for a client that "
    "words it itself; null when it was stored only as text."
)
PLAN_HELP = (
    "desired, diff, summary and warnings (in the request's language), summary_i18n and "
    "warnings_i18n (ids and parameters; null for a run stored only as text)."
)
PREVIEW_HELP = (
    "current, plan (as `plan`), dry_run and error in the request's language, with "
    "dry_run_i18n and error_i18n."
)


def _worded(data: dict[str, Any], key: str) -> tuple[str, Any]:
    parts = data.get(f"{key}_msg")
    return render(parts, fallback=data.get(key) or ""), as_api(parts)


def plan_shown(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    if not plan:
        return plan
    out = {k: v for k, v in plan.items() if k not in ("summary_msg", "warnings_msg")}
    out["summary"], out["summary_i18n"] = _worded(plan, "summary")
    english = list(plan.get("warnings") or [])
    parts = plan.get("warnings_msg")
    if isinstance(parts, list) and len(parts) == len(english):
        out["warnings"] = [render(p, fallback=e) for p, e in zip(parts, english, strict=True)]
        out["warnings_i18n"] = [as_api(p) for p in parts]
    else:
        out["warnings_i18n"] = None
    return out


def preview_shown(preview: dict[str, Any] | None) -> dict[str, Any] | None:
    if not preview:
        return preview
    out = {k: v for k, v in preview.items() if k not in ("dry_run_msg", "error_msg")}
    out["plan"] = plan_shown(preview.get("plan"))
    for key in ("dry_run", "error"):
        out[key], out[f"{key}_i18n"] = _worded(preview, key)
    return out
