"""The lines incidents writes on the timeline, as message ids (console/texts/).

Stored as parts in `payload["msg"]` beside the English `message`, so each reader sees
them in their language. Names, label values, ids and what a person typed are
parameters, shown as they are. Imported by IncidentsConfig.ready() and by the modules
that build these texts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.utils.translation import gettext_noop, ngettext_lazy

from console.texts import Msg, texts_register

if TYPE_CHECKING:
    from incidents.models import TimelineEvent

texts_register(
    {
        # Retention (archive/services.py): the one line left while the rest is archived.
        "incidents.archived": gettext_noop(
            "Archived (resolved more than %(days)s days ago): %(alerts)s alerts "
            "and %(events)s timeline entries moved to archive batch %(batch)s."
        ),
        "incidents.restored": gettext_noop(
            "Restored from archive batch %(batch)s: %(alerts)s alerts and %(events)s timeline "
            "entries are back."
        ),
        # Opening, alerts (ingest/decide.py, services/declare.py).
        "incidents.opened": gettext_noop("Incident opened: %(title)s"),
        "incidents.alerts.firing": ngettext_lazy(
            "%(count)s alert firing: %(names)s", "%(count)s alerts firing: %(names)s", "count"
        ),
        "incidents.alerts.resolved": ngettext_lazy(
            "%(count)s alert resolved: %(names)s",
            "%(count)s alerts resolved: %(names)s",
            "count",
        ),
        "incidents.severity.raised": gettext_noop(
            "Severity raised %(from)s → %(to)s by %(alert)s."
        ),
        # Status changes (transitions.py): without a reason, with a person's reason.
        "incidents.status.acknowledged": gettext_noop("Incident acknowledged."),
        "incidents.status.mitigated": gettext_noop("Incident mitigated."),
        "incidents.status.resolved": gettext_noop("Incident resolved."),
        "incidents.status.re-triggered": gettext_noop("Incident re-triggered."),
        "incidents.status.reopened": gettext_noop("Incident reopened."),
        "incidents.status.acknowledged.reason": gettext_noop("Incident acknowledged: %(reason)s"),
        "incidents.status.mitigated.reason": gettext_noop("Incident mitigated: %(reason)s"),
        "incidents.status.resolved.reason": gettext_noop("Incident resolved: %(reason)s"),
        "incidents.status.re-triggered.reason": gettext_noop("Incident re-triggered: %(reason)s"),
        "incidents.status.reopened.reason": gettext_noop("Incident reopened: %(reason)s"),
        # The ingestion's own reasons (ingest/decide.py).
        "incidents.status.all_resolved": gettext_noop(
            "All alerts resolved; mitigated until a person resolves it."
        ),
        "incidents.status.firing_again": gettext_noop("Alerts are firing again."),
        "incidents.status.reopened_by_alert": gettext_noop(
            "Reopened: %(alert)s fired again within %(minutes)s min of resolution."
        ),
        "incidents.word.an_alert": gettext_noop("an alert"),
        # Ending while alerts fire (services/lifecycle.py), nobody in command (command.py).
        "incidents.status.confirmed_firing": ngettext_lazy(
            "(confirmed with %(count)s alert still firing: %(names)s)",
            "(confirmed with %(count)s alerts still firing: %(names)s)",
            "count",
        ),
        "incidents.status.confirmed_firing_more": ngettext_lazy(
            "(confirmed with %(count)s alert still firing: %(names)s and %(more)s more)",
            "(confirmed with %(count)s alerts still firing: %(names)s and %(more)s more)",
            "count",
        ),
        "incidents.status.no_commander": gettext_noop(
            "(resolved with nobody in command, confirmed)"
        ),
        # Command (services/command.py).
        "incidents.commander.took": gettext_noop("%(actor)s took command: %(from)s → %(to)s."),
        "incidents.commander.took_by_ack": gettext_noop(
            "%(actor)s took command by acknowledging: %(from)s → %(to)s."
        ),
        "incidents.commander.set": gettext_noop("%(actor)s set the commander: %(from)s → %(to)s."),
        "incidents.word.nobody": gettext_noop("nobody"),
        # The incident's runbook (services/timeline.py).
        "incidents.runbook.changed": gettext_noop("Runbook changed from %(from)s to %(to)s"),
        "incidents.runbook.changed.reason": gettext_noop(
            "Runbook changed from %(from)s to %(to)s: %(reason)s"
        ),
        "incidents.runbook.matched_by_alert": gettext_noop("(matched by alert)"),
        # Silences (silences/services.py).
        "incidents.silence.created": gettext_noop(
            "Silenced %(scope)s in Alertmanager for %(duration)s, until %(until)s, matching "
            "%(matchers)s. Silence %(id)s."
        ),
        "incidents.silence.scope.group": gettext_noop("the whole group"),
        "incidents.silence.scope.alert": gettext_noop("alert %(name)s"),
        "incidents.silence.scope.part": gettext_noop("%(scope)s (%(n)s of %(total)s)"),
        "incidents.silence.expired": gettext_noop(
            "Expired silence %(id)s early (it ran until %(until)s, created by %(by)s), "
            "matching %(matchers)s."
        ),
        "incidents.silence.nobody_named": gettext_noop("nobody named"),
        "incidents.silence.confirmed": gettext_noop("Confirmed by %(actor)s: %(reason)s."),
        "incidents.silence.confirmed_both": gettext_noop(
            "Confirmed by %(actor)s: %(first)s and %(second)s."
        ),
        "incidents.silence.not_created_here": gettext_noop(
            "it was not created from this incident in the console"
        ),
        "incidents.silence.broader": gettext_noop("it matches alerts outside this incident"),
        # Durations: the same words as silences/services.duration_words.
        "incidents.duration.hm": gettext_noop("%(hours)sh %(minutes)sm"),
        "incidents.duration.h": gettext_noop("%(hours)sh"),
        "incidents.duration.m": gettext_noop("%(minutes)sm"),
        # Alertmanager's own view (alertmanager_view/services.py).
        "incidents.am.resolved": gettext_noop(
            "Alertmanager lists %(what)s as resolved: ended (reconciled)."
        ),
        "incidents.am.gone": gettext_noop(
            "Alertmanager no longer lists %(what)s: ended (reconciled)."
        ),
        "incidents.am.again": gettext_noop(
            "Alertmanager lists %(what)s again: firing (reconciled)."
        ),
        "incidents.am.alerts": ngettext_lazy(
            "%(count)s alert (%(names)s)", "%(count)s alerts (%(names)s)", "count"
        ),
        "incidents.am.names_more": gettext_noop("%(names)s and %(more)s more"),
        "incidents.word.alert": gettext_noop("alert"),
        # Related incidents (related/services.py, related/rules.py).
        "incidents.related.part_of": gettext_noop("Part of #%(lead)s (%(runbook)s): %(why)s."),
        "incidents.related.leads": gettext_noop("Leads #%(id)s (%(runbook)s): %(why)s."),
        "incidents.related.no_runbook": gettext_noop("no runbook"),
        "incidents.related.why.runbook": gettext_noop("runbook %(lead)s leads over %(other)s"),
        "incidents.related.why.severity": gettext_noop("%(higher)s is more severe than %(lower)s"),
        "incidents.related.why.first": gettext_noop("opened first at the same severity"),
        "incidents.related.merged": ngettext_lazy(
            "#%(id)s merged into #%(lead)s by %(actor)s: %(count)s alert moved.",
            "#%(id)s merged into #%(lead)s by %(actor)s: %(count)s alerts moved.",
            "count",
        ),
        "incidents.related.severity": gettext_noop("Severity %(from)s → %(to)s (merged #%(id)s)"),
        "incidents.related.merged_into": gettext_noop("Merged into #%(lead)s"),
        "incidents.related.unlinked": gettext_noop("#%(id)s unlinked from #%(lead)s by %(actor)s."),
        "incidents.related.unlinked_kind": gettext_noop(
            "#%(id)s unlinked from #%(lead)s: a drill or demo is never linked to a real incident."
        ),
        # Webhook replay (services/receipts.py).
        "incidents.receipt.replayed": gettext_noop(
            "Webhook body #%(receipt)s replayed (receipt #%(replay)s)."
        ),
    }
)


def event_say(event: TimelineEvent, text: Msg) -> None:
    """Set an unsaved event's line: English in `message`, parts in `payload["msg"]`
    (for events built as rows rather than through incidents.services.timeline)."""
    event.message = text.english
    event.payload = {**(event.payload or {}), "msg": text.stored}


def event_say_more(event: TimelineEvent, text: Msg) -> None:
    """Add a sentence to an unsaved event's line (a confirmation, a caveat)."""
    stored = (event.payload or {}).get("msg") or []
    event_say(event, Msg(tuple((key, params) for key, params in stored)) + text)
