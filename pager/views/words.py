"""Escalation policies and escalations in words, for the team page and the incident panel."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from pager.models import EscalationPolicy, EscalationStep, StepAction


def _minutes(n: int) -> str:
    return ngettext("%(n)d minute", "%(n)d minutes", n) % {"n": n}


def step_action_text(step: EscalationStep, policy: EscalationPolicy | None = None) -> str:
    """What a step does: "Page who is on call for Primary" (no conditions, no wait)."""
    if step.action == StepAction.PAGE_SCHEDULE:
        if step.schedule is None:
            return _("Page who is on call (no schedule chosen: the step is skipped)")
        return _("Page who is on call for %(schedule)s") % {"schedule": step.schedule.name}
    if step.action == StepAction.PAGE_USER:
        if step.user is None:
            return _("Page a person (nobody chosen: the step is skipped)")
        return _("Page %(person)s") % {"person": step.user.get_username()}
    if step.action == StepAction.PAGE_CHANNEL:
        team = step.team or (policy.team if policy is not None else None)
        if team is None:
            return _("Post to the team's channel (no team: the step is skipped)")
        return _("Post to the channel of %(team)s") % {"team": team.name}
    return _("Wait %(minutes)s") % {"minutes": _minutes(step.wait_minutes)}


def step_conditions(step: EscalationStep) -> list[str]:
    parts = []
    if step.severities:
        parts.append(_("only for %(severities)s") % {"severities": ", ".join(step.severities)})
    if step.active_from is not None and step.active_until is not None:
        parts.append(
            _("only %(start)s to %(end)s (%(zone)s)")
            % {
                "start": step.active_from.strftime("%H:%M"),
                "end": step.active_until.strftime("%H:%M"),
                "zone": step.time_zone,
            }
        )
    return parts


def step_text(step: EscalationStep, policy: EscalationPolicy | None = None) -> str:
    """A whole step in one sentence, with its conditions and the wait after it."""
    text = step_action_text(step, policy)
    conditions = step_conditions(step)
    if conditions:
        text = f"{text} ({'; '.join(conditions)})"
    if step.action != StepAction.WAIT and step.wait_minutes:
        text = _("%(step)s, then wait %(minutes)s") % {
            "step": text,
            "minutes": _minutes(step.wait_minutes),
        }
    return text


def policy_after_text(policy: EscalationPolicy) -> list[str]:
    """What happens after the last step and after an acknowledgement."""
    lines = []
    if policy.repeat_times:
        lines.append(
            ngettext(
                "After the last step, the steps run once more.",
                "After the last step, the steps run %(n)d more times.",
                policy.repeat_times,
            )
            % {"n": policy.repeat_times}
        )
    else:
        lines.append(_("After the last step, nobody else is paged."))
    if policy.ack_timeout_minutes:
        lines.append(
            _(
                "An acknowledgement expires after %(minutes)s: if the incident is not "
                "mitigated or resolved by then, paging starts again."
            )
            % {"minutes": _minutes(policy.ack_timeout_minutes)}
        )
    return lines
