"""The pager's texts (console/texts/): what the escalation engine, the pages and the
maintenance windows write on an incident's timeline, registered as "pager.<key>".

TEMPLATES keeps its short keys: timeline lines written before the core existed hold them
in payload["text"] and are worded from this table (pager/escalation/timeline.py reword).
Imported by PagerConfig.ready() and by every module that builds a pager text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext_noop, pgettext_lazy

from console.texts import Msg, msg, texts_register

# Why a team owns an incident (pager.routing.Route.reason), in words.
WHY = {
    "route.named": gettext_noop("the alert's label team=%(slug)s names it"),
    # A declared incident has no alert: the label is the one it was declared with.
    "route.named_declared": gettext_noop("the incident's label team=%(slug)s names it"),
    "route.owns": gettext_noop("it owns %(labels)s"),
    "route.default_team": gettext_noop("no team owns these labels; the default team"),
    "route.nobody": gettext_noop("no team owns these labels"),
    "route.default_policy": gettext_noop("%(why)s; the team has no policy, so the default one"),
}

# The errors the pager itself writes on a delivery (the rest are the services' own).
UNKNOWN_ERROR = gettext_noop(
    "The worker stopped while sending through this method; it may have gone out, so the "
    "page went on to the next method instead of sending it twice."
)
REMOVED_ERROR = gettext_noop("The contact method was removed or disabled after the page was made.")
_DELIVERY_ERRORS = {UNKNOWN_ERROR: "delivery.unknown", REMOVED_ERROR: "delivery.removed"}

TEMPLATES: dict[str, str] = {
    **WHY,
    # A team paged by hand (pager/paging/services/manual.py).
    "paged_manual": gettext_noop(
        "Paged %(user)s (on call in schedule %(schedule)s of team %(team)s), at %(by)s's request."
    ),
    "manual_message": gettext_noop("Message: %(message)s"),
    "maintenance_over": gettext_noop(
        "Maintenance window %(window)s is over and the incident is still firing, "
        "unacknowledged: paging starts now."
    ),
    # Written by pager/maintenance/ when a window's occurrence ends.
    "maintenance_ended": gettext_noop(
        "Maintenance window %(window)s ended; this incident opened inside it and nobody was paged."
    ),
    "started": gettext_noop("Escalation started: policy %(policy)s, team %(team)s (%(why)s)."),
    "started_no_team": gettext_noop("Escalation started: policy %(policy)s, no team (%(why)s)."),
    "no_policy_team": gettext_noop(
        "Nobody paged: no escalation policy covers this incident (%(why)s). To page, set an "
        "escalation policy on team %(team)s or mark a policy as the default."
    ),
    "no_policy": gettext_noop(
        "Nobody paged: no escalation policy covers this incident (%(why)s). To page, mark an "
        "escalation policy as the default (or give a team these labels)."
    ),
    "drill": gettext_noop("Nobody paged: this is a drill incident (PAGER_PAGE_DRILLS is off)."),
    "maintenance": gettext_noop("Opened inside maintenance window %(window)s: nobody paged."),
    "before_ack": gettext_noop(
        "Nobody paged: %(user)s acknowledged the incident before paging began."
    ),
    "before_ack_nobody": gettext_noop(
        "Nobody paged: the incident was acknowledged before paging began."
    ),
    "before_mitigated": gettext_noop(
        "Nobody paged: the incident was mitigated before paging began."
    ),
    "before_resolved": gettext_noop("Nobody paged: the incident was resolved before paging began."),
    "fired_again": gettext_noop(
        "Alerts fire again after mitigation: paging again from the first step."
    ),
    "fired_again_ack": gettext_noop(
        "Alerts fire again after mitigation; the incident is still acknowledged, so nobody is "
        "paged now."
    ),
    "expiry": gettext_noop(
        "If it is neither mitigated nor resolved by %(time)s, paging starts again."
    ),
    "paged_named": gettext_noop("Paged %(user)s (step %(step)s: named in the policy)."),
    "paged_oncall": gettext_noop(
        "Paged %(user)s (step %(step)s: on call in schedule %(schedule)s)."
    ),
    "paged_channel": gettext_noop("Paged team %(team)s's channel %(channel)s (step %(step)s)."),
    "late": gettext_noop("Sent %(seconds)ss late (the escalation was not run on time)."),
    "no_contact": gettext_noop(
        "%(user)s has no contact method: the page could not be sent. Add one on the pager's "
        "contact methods page."
    ),
    "gap": gettext_noop(
        "Nobody paged by step %(step)s: schedule %(schedule)s has nobody on call at %(time)s "
        "(a gap in the schedule)."
    ),
    "no_schedule": gettext_noop(
        "Nobody paged by step %(step)s: it pages who is on call, but neither the step nor the "
        "owning team has a schedule."
    ),
    "no_person": gettext_noop(
        "Nobody paged by step %(step)s: it pages a person, but none is set or the account is "
        "disabled."
    ),
    "no_channel_team": gettext_noop(
        "Nothing posted by step %(step)s: team %(team)s has no enabled channel (set its "
        "channel to a notification target)."
    ),
    "no_channel": gettext_noop(
        "Nothing posted by step %(step)s: neither the step nor the policy names a team."
    ),
    "skip_severity": gettext_noop(
        "Skipped step %(step)s: it is only for %(severities)s, and this incident is %(severity)s."
    ),
    "skip_hours": gettext_noop(
        "Skipped step %(step)s: it runs only from %(start)s to %(end)s (%(zone)s), and it is "
        "%(now)s there."
    ),
    "wait": gettext_noop("Waiting %(minutes)s min before the next step (due at %(time)s)."),
    "repeat": gettext_noop(
        "Reached the last step; repeating the policy (repeat %(loop)s of %(times)s)."
    ),
    "exhausted": gettext_noop("Reached the last step; nobody acknowledged."),
    "nothing_applies": gettext_noop(
        "Reached the last step; no step paged anyone for this incident."
    ),
    "no_steps": gettext_noop("Nobody paged: the escalation policy has no steps."),
    "acknowledged": gettext_noop("Escalation stopped: acknowledged by %(user)s."),
    "acknowledged_nobody": gettext_noop("Escalation stopped: acknowledged."),
    "ack_expired": gettext_noop(
        "Acknowledgement expired without progress after %(minutes)s min: paging again from "
        "the first step (re-page %(round)s)."
    ),
    "ack_expired_plain": gettext_noop(
        "Acknowledgement expired without progress: paging again from the first step "
        "(re-page %(round)s)."
    ),
    "stopped": gettext_noop("Escalation stopped: %(reason)s."),
    # The reasons the engine stops for (Escalation.stop_reason holds the English).
    "reason.mitigated": gettext_noop("incident mitigated"),
    "reason.resolved": gettext_noop("incident resolved"),
    "reason.policy_gone": gettext_noop("its escalation policy was deleted"),
    "reason.no_policy": gettext_noop("no escalation policy"),
    "reason.drill": gettext_noop("drill incident: not paged"),
    "reason.demo": gettext_noop("demo incident: not paged"),
}

# Written only through the core (payload["msg"]): a page's outcome, the one-tap link,
# the fixed errors the pager writes on a delivery and a contact method's test.
_NEW: dict[str, Any] = {
    "page.delivered": gettext_noop("Paged %(who)s by %(how)s."),
    "page.delivered_after": gettext_noop("Paged %(who)s by %(how)s after %(failed)s failed."),
    "page.sent_late": gettext_noop("It went out %(seconds)ss after it was due."),
    "page.failed_every": gettext_noop("Page to %(who)s failed through every method: %(reasons)s"),
    "page.failed_no_method": gettext_noop(
        "Page to %(who)s failed: they have no enabled contact method."
    ),
    "page.reason": gettext_noop("%(method)s: %(error)s"),
    "page.who_channel": gettext_noop("the channel %(channel)s"),
    "page.who_nobody": gettext_noop("nobody"),
    "page.ack_link": gettext_noop(
        "%(user)s acknowledged the incident with the one-tap link of page #%(page)s."
    ),
    "page.ack_link_repage": gettext_noop(
        "%(user)s acknowledged the re-page with the one-tap link of page #%(page)s."
    ),
    # A list of phrases: "a, b, c" and "a; b; c" (nested, so each language puts its marks).
    "list.comma": gettext_noop("%(first)s, %(rest)s"),
    "list.semicolon": gettext_noop("%(first)s; %(rest)s"),
    # PageDelivery.error keeps the English (no parts column): worded when shown.
    "delivery.unknown": UNKNOWN_ERROR,
    "delivery.removed": REMOVED_ERROR,
    "test.failed": gettext_noop("Failed: %(detail)s"),
    "test.sent": gettext_noop(
        "Sent through %(method)s (%(address)s) at %(time)s UTC; check that it arrived."
    ),
    # pager.paging.methods.KIND_WORDS, inside a sentence.
    "method.ntfy": pgettext_lazy("contact method in a sentence", "ntfy"),
    "method.pushover": pgettext_lazy("contact method in a sentence", "Pushover"),
    "method.gotify": pgettext_lazy("contact method in a sentence", "Gotify"),
    "method.sms": pgettext_lazy("contact method in a sentence", "SMS"),
    "method.voice": pgettext_lazy("contact method in a sentence", "voice call"),
    "method.telegram": pgettext_lazy("contact method in a sentence", "Telegram"),
    "method.email": pgettext_lazy("contact method in a sentence", "email"),
    "method.slack_dm": pgettext_lazy("contact method in a sentence", "Slack direct message"),
    "method.webhook": pgettext_lazy("contact method in a sentence", "webhook"),
    # A delivery's state when it failed without an error (pager.models.DeliveryState).
    "state.pending": pgettext_lazy("delivery state", "waiting"),
    "state.sending": pgettext_lazy("delivery state", "sending"),
    "state.sent": pgettext_lazy("delivery state", "sent"),
    "state.failed": pgettext_lazy("delivery state", "failed"),
    "state.unknown": pgettext_lazy("delivery state", "outcome unknown"),
    "state.skipped": pgettext_lazy("delivery state", "not needed"),
}

PREFIX = "pager."
texts_register({PREFIX + key: template for key, template in {**TEMPLATES, **_NEW}.items()})


def pager_msg(key: str, **params: Any) -> Msg:
    """A pager text by its short key ("started" is "pager.started")."""
    return msg(PREFIX + key, **params)


def listed(items: Sequence[Msg | str], key: str = "list.comma") -> Msg | str:
    """Phrases as one list ("a, b, c"); one item as itself."""
    if len(items) == 1:
        return items[0]
    return pager_msg(key, first=items[0], rest=listed(items[1:], key))


def method_words(kind: str) -> Msg | str:
    """A contact method's kind inside a sentence (an unknown kind as its id)."""
    return pager_msg(f"method.{kind}") if PREFIX + f"method.{kind}" in _KNOWN else kind


_KNOWN = {PREFIX + key for key in {**TEMPLATES, **_NEW}}


def delivery_error(error: str) -> Msg | str:
    """A delivery's stored error: the pager's own as a text, a service's as written."""
    key = _DELIVERY_ERRORS.get(error)
    return pager_msg(key) if key else error
