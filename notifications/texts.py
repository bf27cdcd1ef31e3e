"""The notification texts the console writes (console/texts/): a delivery's summary, worded
in the target's language for sending and kept as parts so the deliveries page and the
API word it in their reader's. The English templates are the ones the catalogue already
translates (they were gettext strings before they had ids)."""

from django.utils.translation import gettext_noop, ngettext_lazy

from console.texts import texts_register

texts_register(
    {
        "notifications.summary.test": gettext_noop(
            "Test notification from the vLLM Incident Console"
        ),
        "notifications.summary.ref": gettext_noop("[%(severity)s] Incident #%(id)s"),
        "notifications.summary.opened": gettext_noop("%(ref)s opened: %(title)s"),
        # Deliveries recorded before INCIDENT_REOPENED existed.
        "notifications.summary.reopened": gettext_noop("%(ref)s reopened: %(title)s"),
        "notifications.summary.fired_again_mitigated": gettext_noop(
            "%(ref)s fired again after it was mitigated: %(title)s"
        ),
        "notifications.summary.reopened_by_hand": gettext_noop(
            "%(ref)s reopened by hand after it was resolved: %(title)s"
        ),
        "notifications.summary.fired_again_resolved": gettext_noop(
            "%(ref)s fired again after it was resolved, so it reopened: %(title)s"
        ),
        "notifications.summary.severity_raised": gettext_noop(
            "%(ref)s severity raised %(old)s → %(new)s: %(title)s"
        ),
        "notifications.summary.commander_changed": gettext_noop(
            "%(ref)s is now commanded by %(who)s (was %(was)s): %(title)s"
        ),
        "notifications.summary.mitigated": gettext_noop("%(ref)s mitigated: %(title)s"),
        "notifications.summary.resolved": gettext_noop("%(ref)s resolved: %(title)s"),
        "notifications.summary.approval_wanted": gettext_noop(
            "%(ref)s: action #%(run)s %(kind)s on %(target)s awaits approval"
        ),
        "notifications.summary.postmortem_in_review": gettext_noop(
            "Postmortem #%(pm)s of incident #%(id)s is in review: %(title)s"
        ),
        "notifications.summary.action_item_overdue": ngettext_lazy(
            "Action item #%(item)s is %(days)s day overdue: %(title)s (incident #%(id)s, "
            "owner %(owner)s)",
            "Action item #%(item)s is %(days)s days overdue: %(title)s (incident #%(id)s, "
            "owner %(owner)s)",
            "days",
        ),
        # An event this version has no sentence for: its id, as stored.
        "notifications.summary.other": gettext_noop("%(ref)s: %(event)s"),
        "notifications.nobody": gettext_noop("nobody"),
    }
)
