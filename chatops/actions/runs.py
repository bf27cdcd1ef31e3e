"""Remediation from chat: request the incident's recommended action (after its preview),
and approve or reject a run waiting for a second person. The four-eyes rule, the roles
and the busy check are the actions app's (actions/services.py, actions/policy.py)."""

from __future__ import annotations

import hashlib
from typing import Any

from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy, gettext_noop, pgettext

from actions.forms import recommended_action
from actions.models import ActionRun, ActionRunStatus
from actions.permissions import REQUEST_ACTION
from actions.preview import BUSY, Preview, busy_params
from actions.services import (
    action_run_approve,
    action_run_preview,
    action_run_reject,
    action_run_request,
)
from chatops.actions.base import Context, Result, done
from chatops.messages import Button, Dialog, Message
from chatops.models import InteractionKind, InteractionStatus, PostStatus, Surface
from console.errors import DomainError
from console.permissions import require
from console.texts import render
from incidents.selectors import incident_get
from runbooks.recommendations import recommended_actions
from runbooks.triage import incident_alerts_firing_first, incident_triage

DIFF_LINES = 12  # of the plan's diff, in the dialog (the page shows all of it)
DRY_RUN_CHARS = 300
REQUEST_ACTIONS = gettext_lazy("request actions")


def request_key(ctx: Context) -> str:
    """The idempotency key of the run this dialog asks for, made when it opened: a double
    submit, a retried submission or the button pressed twice is one run."""
    seed = f"{ctx.workspace.pk}:{ctx.interaction.key}".encode()
    return "chat-" + hashlib.sha256(seed).hexdigest()[:32]


def _chosen(ctx: Context, incident_id: int) -> dict[str, Any]:
    """The recommended action the button names (its index in the runbook), else the
    first one the live triage recommends (of `kind`, when the button names one)."""
    incident = incident_get(incident_id=incident_id)
    index = ctx.args.get("index")
    if index is not None and str(index) != "":
        return recommended_action(incident, str(index))
    alerts = incident_alerts_firing_first(incident)
    result = incident_triage(incident=incident, alerts=alerts)
    found = recommended_actions(incident=incident, result=result, alerts=alerts, approval=False)
    kind = str(ctx.args.get("kind", ""))
    found = [a for a in found if not kind or a.kind == kind]
    if not found:
        raise DomainError(
            gettext_noop(
                "Triage recommends no action for incident #%(id)s now; the incident page "
                "lists the runbook's actions."
            ),
            params={"id": incident_id},
        )
    first = found[0]
    return {"kind": first.kind, "title": first.title, "why": first.why, "params": first.params}


def _warnings(plan: dict[str, Any]) -> list[str]:
    """The plan's warnings in the active language (as stored when they have no parts)."""
    english = [str(w) for w in plan.get("warnings") or []]
    parts = plan.get("warnings_msg")
    if not isinstance(parts, list) or len(parts) != len(english):
        return english
    return [render(p, fallback=e) for p, e in zip(parts, english, strict=True)]


def _preview_words(
    preview: Preview, why: str
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The preview in the active language: the console's texts from their parts (the
    plan's `summary_msg`/`warnings_msg`, the preview's `*_msg`), as stored otherwise."""
    plan = preview.plan or {}
    fields: list[tuple[str, str]] = [
        (gettext("Action"), preview.kind),
        (pgettext("action run", "Target"), preview.target),
    ]
    if preview.requires_approval:
        reason = render(preview.approval_reason_msg, fallback=preview.approval_reason)
        fields.append((gettext("Approval"), gettext("needed: %(why)s") % {"why": reason}))
    else:
        fields.append((gettext("Approval"), gettext("not needed")))
    lines: list[str] = []
    if why:
        lines.append(why)
    summary = render(plan.get("summary_msg"), fallback=str(plan.get("summary") or ""))
    if summary:
        lines.append(gettext("Plan: %(summary)s") % {"summary": summary})
    diff = [line for line in str(plan.get("diff") or "").splitlines() if line.strip()]
    if diff:
        shown = diff[:DIFF_LINES]
        if len(diff) > DIFF_LINES:
            shown.append(
                gettext("…%(count)s more lines on the console") % {"count": len(diff) - DIFF_LINES}
            )
        lines.append(gettext("Diff:") + "\n" + "\n".join(shown))
    for warning in _warnings(plan):
        lines.append(gettext("Warning: %(text)s") % {"text": warning})
    if preview.error:
        error = render(preview.error_msg, fallback=preview.error)
        lines.append(gettext("Not previewed: %(error)s") % {"error": error})
    elif preview.dry_run:
        result = render(preview.dry_run_msg, fallback=preview.dry_run)[:DRY_RUN_CHARS]
        lines.append(gettext("Dry run: %(result)s") % {"result": result})
    if preview.busy_with is not None:
        lines.append(gettext(BUSY) % busy_params(preview.busy_with))
    return tuple(lines), tuple(fields)


def _reason(parts: Any, english: str) -> str:
    return render(parts, fallback=english)


# Worded when the answer is (Said keeps lazy params): English under no language.
_reason_worded = lazy(_reason, str)


def request(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    actor = ctx.actor()
    require(actor, REQUEST_ACTION, REQUEST_ACTIONS)  # before a dialog is opened for nothing
    chosen = _chosen(ctx, incident_id)
    value: dict[str, Any] = {
        "incident": incident_id, "kind": chosen["kind"], "params": chosen["params"],
        "key": request_key(ctx),
    }  # fmt: skip
    title = str(chosen.get("title") or chosen["kind"])  # each surface fits it to its limit
    dialog_id = ""
    # Slack's trigger lives 3 s: open the dialog now, fill it once the preview is read.
    # Mattermost cannot update a dialog: the preview is answered as a message instead.
    if (
        ctx.surface == Surface.SLACK
        and ctx.trigger
        and ctx.interaction.kind != InteractionKind.DIALOG
    ):
        loading = Dialog(title=title, action="request_confirm", value=value,
                         lines=(gettext("Checking…"),))  # fmt: skip
        post = ctx.dialog(loading)
        if post is not None and post.status == PostStatus.SENT:
            dialog_id = post.external_id
    try:
        preview = action_run_preview(
            incident_id=incident_id, actor=actor, kind=value["kind"], params=value["params"]
        )
    except DomainError as exc:
        if not dialog_id:
            raise
        ctx.dialog(Dialog(title=title, action="request_confirm", value=value,
                          lines=(exc.translated(),)), dialog_id=dialog_id)  # fmt: skip
        return Result(
            f"preview refused: {exc}", None, InteractionStatus.REFUSED, incident_id=incident_id
        )
    value.update(kind=preview.kind, params=preview.params)
    lines, fields = _preview_words(preview, str(chosen.get("why") or ""))
    can_ask = preview.busy_with is None
    said = f"previewed {preview.kind} on {preview.target}"
    if dialog_id:
        submit = gettext("Request") if can_ask else ""
        ctx.dialog(Dialog(title=title, action="request_confirm", value=value, lines=lines,
                          fields=fields, submit=submit), dialog_id=dialog_id)  # fmt: skip
        return Result(said, None, incident_id=incident_id)
    buttons = (Button("request_confirm", gettext("Request it"), value, style="primary"),)
    heading = str(chosen.get("title") or chosen["kind"])
    message = Message(
        text="\n".join((heading, *(f"{a}: {b}" for a, b in fields), *lines)),
        title=heading, fields=fields, lines=lines, buttons=buttons if can_ask else (),
    )  # fmt: skip
    return Result(said, message, incident_id=incident_id)


def request_confirm(ctx: Context) -> Result:
    incident_id = ctx.incident_id()
    params = ctx.args.get("params") or {}
    if not isinstance(params, dict):
        raise DomainError(gettext_noop("The action's parameters are not readable."), code="invalid")
    incident = incident_get(incident_id=incident_id)
    run, created = action_run_request(
        incident_id=incident_id, actor=ctx.actor(), kind=str(ctx.args.get("kind", "")),
        params=params, idempotency_key=str(ctx.args.get("key", "")),
        runbook=incident.runbook or "",
    )  # fmt: skip
    # The reason: English in the record, the reader's language in the answer (lazy).
    reason = _reason_worded((run.texts or {}).get("approval_reason"), run.approval_reason)
    what = {"run": run.pk, "kind": run.kind, "target": run.target,
            "reason": reason}  # fmt: skip
    if not created:
        message = gettext_noop("Run #%(run)s was already requested by this confirmation.")
    elif run.status == ActionRunStatus.AWAITING_APPROVAL:
        message = gettext_noop(
            "Run #%(run)s (%(kind)s on %(target)s) requested; it waits for approval: %(reason)s"
        )
    else:
        message = gettext_noop("Run #%(run)s (%(kind)s on %(target)s) requested and queued.")
    return done(message, what, incident_id=incident_id, run_id=run.pk)


def _decide(ctx: Context, verdict: str) -> Result:
    run_id = ctx.number("run")
    if run_id is None:
        raise DomainError(gettext_noop("Which run? The button names none."), code="invalid")
    # The run and its incident, for the record and the audit even when it is refused.
    ctx.run_id = run_id
    ctx.interaction.incident_id = (
        ActionRun.objects.filter(pk=run_id).values_list("incident_id", flat=True).first()
    )
    decide = action_run_approve if verdict == "approve" else action_run_reject
    run = decide(run_id=run_id, actor=ctx.actor(), note=str(ctx.args.get("note", "")))
    if verdict == "approve":
        message = gettext_noop("Run #%(run)s approved; it is queued.")
    else:
        message = gettext_noop("Run #%(run)s rejected.")
    return done(message, {"run": run.pk}, incident_id=run.incident_id, run_id=run.pk)


def approve(ctx: Context) -> Result:
    return _decide(ctx, "approve")


def reject(ctx: Context) -> Result:
    return _decide(ctx, "reject")
