"""The incident's state message: ONE message at the top of its chat thread, edited in
place whenever what it says changes (chatops/threads/services.py compares digests).

It says what the incident page says at a glance: status, severity, commander, the firing
alerts, the triage branch auto-triage last posted (the stored result, as the runbook
panel shows it: building this never asks Prometheus or the cluster), the recommended
action and whether it needs a second person, the runs waiting for approval, the guard's
verdict of the latest change, and the drill/demo marks; and it carries the buttons that
fit the state. A fixed number of queries (tests/unit/chatops/test_state.py counts them).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext, ngettext

from actions import policy
from actions.guard.models import GuardWatch
from actions.kinds import KINDS, ActionError, kind_for
from actions.models import ActionRun, ActionRunStatus
from chatops.messages import Button, Message
from console.errors import NotFound
from console.texts import render
from incidents.models import Alert, AlertStatus, Incident, IncidentStatus
from notifications.links import console_url
from runbooks.auto_triage.evaluation import auto_triage_last
from runbooks.catalog import load_catalog
from runbooks.recommendations import RecommendedAction, recommended_actions
from runbooks.timeline_text import first_sentence
from runbooks.triage import TriageResult

S = IncidentStatus
FIRING_NAMED = 5  # as incidents/services/lifecycle.py names them; the rest are counted
ALERTS_READ = 200  # the alerts read for the recommended action's labels (bounded)
APPROVALS_SHOWN = 5  # pending runs listed (each with two buttons)
SILENCE_MINUTES = (60, 240)
_NAMING_LABELS = ("pod", "node", "lws", "namespace")  # the first one present tells alerts apart
# The console's badge colours (static/css/console.css): red, orange, yellow, grey.
SEVERITY_COLORS = {"SEV1": "#c62828", "SEV2": "#b45309", "SEV3": "#8a6d00", "SEV4": "#4b5565"}
RESOLVED_COLOR = "#1b7a3d"  # green: a resolved incident's thread reads as done at a glance


def incident_state(*, incident_id: int, language: str) -> Message:
    """The state message of incident `incident_id` in `language`."""
    incident = Incident.objects.select_related("commander").filter(pk=incident_id).first()
    if incident is None:
        raise NotFound(f"Incident #{incident_id} does not exist.")
    with translation.override(language):
        return _build(incident)


def state_digest(message: Message) -> str:
    """What the message says, as a digest: an unchanged state is not edited again."""
    data = json.dumps(message.as_dict(), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def _build(incident: Incident) -> Message:
    is_open = incident.status != S.RESOLVED
    alerts = list(
        Alert.objects.filter(incident_id=incident.pk).order_by("-starts_at", "-id")[:ALERTS_READ]
    )
    alerts.sort(key=lambda a: a.status != AlertStatus.FIRING)  # firing first, as triage reads
    firing_count = Alert.objects.filter(incident_id=incident.pk, status=AlertStatus.FIRING).count()
    firing_words = [_alert_words(a) for a in alerts if a.status == AlertStatus.FIRING]
    firing_words = firing_words[:FIRING_NAMED]
    triage_text, recommended = (
        _triage(incident, alerts) if is_open else (_triage_only(incident), None)
    )
    approval = _approval(incident, recommended) if recommended is not None else None
    pending = (
        list(
            ActionRun.objects.select_related("requested_by")
            .filter(incident_id=incident.pk, status=ActionRunStatus.AWAITING_APPROVAL)
            .order_by("requested_at", "id")[:APPROVALS_SHOWN]
        )
        if is_open
        else []
    )
    guard = (
        GuardWatch.objects.filter(incident_id=incident.pk).order_by("-changed_at", "-id").first()
    )

    title = f"#{incident.pk} {incident.title}"
    marks = [
        m
        for m, on in ((gettext("Drill"), incident.is_drill), (gettext("demo"), incident.is_demo))
        if on
    ]
    if marks:
        title = f"{title} [{', '.join(marks)}]"
    commander = incident.commander.get_username() if incident.commander else gettext("nobody")
    fields: list[tuple[str, str]] = [
        (gettext("Status"), str(incident.get_status_display())),
        (gettext("Severity"), str(incident.get_severity_display())),
        (gettext("Commander"), commander),
        (gettext("Firing alerts"), _firing_text(firing_words, firing_count)),
        (gettext("Triage"), triage_text),
    ]
    if recommended is not None and approval is not None:
        fields.append((gettext("Recommended action"), _recommended_text(recommended, *approval)))
    if pending:
        fields.append((gettext("Waiting for approval"), "; ".join(_run_text(r) for r in pending)))
    if guard is not None:
        fields.append((gettext("Guard"), _guard_text(guard)))
    link = console_url() + reverse("incidents:detail", args=[incident.pk])
    buttons = _buttons(incident, firing_count, recommended, pending) if is_open else ()
    text = "\n".join([title, *(f"{label}: {value}" for label, value in fields), link])
    return Message(
        text=text,
        title=title,
        fields=tuple(fields),
        buttons=buttons,
        color=RESOLVED_COLOR if not is_open else SEVERITY_COLORS.get(incident.severity, ""),
        link=link,
    )


def _alert_words(alert: Alert) -> str:
    labels = alert.labels or {}
    for name in _NAMING_LABELS:
        if labels.get(name):
            return f"{alert.alertname} ({name}={labels[name]})"
    return alert.alertname


def _firing_text(names: list[str], count: int) -> str:
    if not count:
        return gettext("none")
    params = {"count": count, "names": ", ".join(names), "more": count - len(names)}
    if count > len(names):
        return (
            ngettext(
                "%(count)s: %(names)s and %(more)s more",
                "%(count)s: %(names)s and %(more)s more",
                count,
            )
            % params
        )
    return gettext("%(count)s: %(names)s") % params


def _triage_only(incident: Incident) -> str:
    """A resolved incident: the last branch, without asking for recommendations."""
    return _triage_words(incident, auto_triage_last(incident_id=incident.pk))


def _triage(incident: Incident, alerts: list[Alert]) -> tuple[str, RecommendedAction | None]:
    """The branch auto-triage last posted, and its first recommended action (approval
    decided by the actions app's policy: one query for a complete action)."""
    last = auto_triage_last(incident_id=incident.pk)
    text = _triage_words(incident, last)
    payload = (last.payload or {}) if last is not None else {}
    kinds = [str(r.get("kind", "")) for r in payload.get("recommended", []) if r.get("kind")]
    if last is None or payload.get("prometheus_error") or not kinds:
        return text, None
    # Only the first kind: the message offers one action (the chat's "Request" dialog
    # shows its preview); the page lists the rest.
    result = TriageResult(
        incident_id=incident.pk, runbook_slug=str(payload.get("runbook", "")), runbook_title="",
        checks=(), branch_id=str(payload.get("branch", "")),
        diagnosis=str(payload.get("diagnosis", "")), recommended_actions=(kinds[0],),
        because=(), prometheus_url="", prometheus_error="", evaluated_at=last.occurred_at,
    )  # fmt: skip
    # Without the policy: it is asked for the first one only, by _approval, for the parts
    # of its reason (recommended_actions keeps the reason's English only).
    found = recommended_actions(incident=incident, result=result, alerts=alerts, approval=False)
    return text, (found[0] if found else None)


def _triage_words(incident: Incident, last: Any) -> str:
    """ "<runbook title>: <branch> — <first sentence of its diagnosis>", in the active
    language (the catalogue's edition), from the stored auto-triage result."""
    slug = incident.runbook
    payload = (last.payload or {}) if last is not None else {}
    slug = str(payload.get("runbook") or slug)
    if not slug:
        return gettext("no runbook")
    runbook = load_catalog().get(slug)
    name = runbook.title if runbook is not None else slug
    if last is None:
        return gettext("%(runbook)s: not evaluated yet") % {"runbook": name}
    if payload.get("prometheus_error"):
        return gettext("%(runbook)s: Prometheus did not answer") % {"runbook": name}
    branch_id = str(payload.get("branch", ""))
    diagnosis = str(payload.get("diagnosis", ""))
    if runbook is not None:  # the diagnosis in the catalogue's language
        diagnosis = next(
            (b.diagnosis for b in runbook.decision_tree if b.id == branch_id), diagnosis
        )
    said = first_sentence(diagnosis)
    return f"{name}: {branch_id}" + (f" — {said}" if said else "")


def _approval(incident: Incident, action: RecommendedAction) -> tuple[bool | None, str]:
    """(needed, why) in the active language: None when the action is not ready (a label
    missing, parameters the kind refuses), why then saying what is missing. The actions
    app's policy decides, as actions/recommended.py asks it (one query)."""
    if action.needs_labels:
        return None, gettext("needs label %(labels)s") % {"labels": ", ".join(action.needs_labels)}
    try:
        kind = kind_for(action.kind)
        clean = kind.clean(dict(action.params))
    except ActionError as exc:
        return None, render(exc.said.stored, fallback=exc.message)
    # current/plan None: the policy's answer before the cluster is read (as the page's).
    needed, why = policy.approval_required(
        kind=kind, kinds=KINDS, incident=incident, params=clean, current=None, plan=None
    )
    return needed, (render(why.stored, fallback=why.english) if why is not None else "")


def _recommended_text(action: RecommendedAction, needed: bool | None, why: str) -> str:
    params = ", ".join(f"{k}={v}" for k, v in action.params.items())
    what = f"{action.title} [{action.kind}{' ' + params if params else ''}]"
    if needed is None:
        return gettext("%(action)s (not ready: %(reason)s)") % {"action": what, "reason": why}
    if needed:
        return gettext("%(action)s (needs a second person's approval: %(reason)s)") % {
            "action": what,
            "reason": why,
        }
    return gettext("%(action)s (no approval needed)") % {"action": what}


def _run_text(run: ActionRun) -> str:
    who = run.requested_by.get_username() if run.requested_by else gettext("nobody")
    words = {"run": run.pk, "kind": run.kind, "target": run.target, "user": who}
    # Why it waits, as the run's page says it (its stored parts, in the thread's language).
    reason = render((run.texts or {}).get("approval_reason"), fallback=run.approval_reason)
    if reason:
        return gettext("#%(run)s %(kind)s %(target)s, requested by %(user)s — %(reason)s") % {
            **words,
            "reason": reason,
        }
    return gettext("#%(run)s %(kind)s %(target)s, requested by %(user)s") % words


def _guard_text(guard: GuardWatch) -> str:
    run = f"#{guard.run_id} " if guard.run_id else ""
    text = f"{run}{guard.subject}: {guard.get_verdict_display()}"
    # The verdict's reason as the guard stored it (parts), in the thread's language.
    reason = render((guard.texts or {}).get("verdict_reason"), fallback=guard.verdict_reason)
    return f"{text} — {reason}" if reason else text


def _buttons(
    incident: Incident,
    firing: int,
    recommended: RecommendedAction | None,
    pending: list[ActionRun],
) -> tuple[Button, ...]:
    one = {"incident": incident.pk}
    buttons: list[Button] = []
    if incident.status == S.TRIGGERED:
        buttons.append(Button("ack", gettext("Acknowledge"), one, style="primary"))
    if incident.commander_id is None:
        buttons.append(Button("command", gettext("Take command"), one))
    for minutes in SILENCE_MINUTES:
        label = gettext("Silence %(hours)s h") % {"hours": minutes // 60}
        buttons.append(Button("silence", label, {**one, "minutes": minutes}))
    ask = (
        ngettext(
            "%(count)s alert still fires. You will be asked for a reason.",
            "%(count)s alerts still fire. You will be asked for a reason.",
            firing,
        )
        % {"count": firing}
        if firing
        else ""
    )
    if incident.status in (S.TRIGGERED, S.ACKNOWLEDGED):
        buttons.append(Button("mitigate", gettext("Mitigate"), one, confirm=ask))
    buttons.append(Button("resolve", gettext("Resolve"), one, confirm=ask))
    if recommended is not None:
        label = gettext("Request %(kind)s") % {"kind": recommended.kind}
        value = {**one, "kind": recommended.kind, "index": recommended.index}
        buttons.append(Button("request", label, value))
    for run in pending:
        buttons.append(
            Button("approve", gettext("Approve #%(run)s") % {"run": run.pk}, {"run": run.pk},
                   style="primary")
        )  # fmt: skip
        buttons.append(
            Button("reject", gettext("Reject #%(run)s") % {"run": run.pk}, {"run": run.pk},
                   style="danger")
        )  # fmt: skip
    return tuple(buttons)
