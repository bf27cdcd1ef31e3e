"""The lines postmortems writes on the incident timeline (console/texts/): a postmortem's
and an action item's changes, stored as parts and worded in each reader's language.

The draft itself (its sections and the timeline lines copied from the incident) is
written once, in the language its author chose (Postmortem.draft_language), and is not
stored as parts: people edit it afterwards as text."""

from django.utils.translation import gettext_noop, ngettext_lazy, pgettext_lazy

from console.texts import texts_register
from postmortems.models import ItemCategory, ItemStatus

# A field named in a change: the words the edit refusals use (services/documents.py).
POSTMORTEM_FIELDS = ("title", "summary", "impact", "root_cause", "contributing_factors",
                     "lessons_learned")  # fmt: skip
ITEM_FIELDS = ("title", "description", "owner", "due_date", "priority", "category",
               "external_url")  # fmt: skip

texts_register(
    {
        # The line on the incident timeline: which document or item, then what happened.
        "postmortems.timeline.postmortem": gettext_noop("Postmortem #%(id)s: %(what)s"),
        "postmortems.timeline.item": gettext_noop("Action item #%(id)s “%(title)s”: %(what)s"),
        # What happened to a postmortem.
        "postmortems.what.drafted": gettext_noop("drafted"),
        "postmortems.what.review_requested": gettext_noop("review requested from %(names)s"),
        "postmortems.what.approved": gettext_noop("approved"),
        "postmortems.what.changes_requested": gettext_noop("changes requested"),
        "postmortems.what.published": gettext_noop("published"),
        "postmortems.what.edited_after_publication": gettext_noop(
            "edited after publication by %(who)s (%(what)s); revision %(revision)s, "
            "published as revision %(published)s"
        ),
        "postmortems.what.edited_after_approval": gettext_noop(
            "edited after approval by %(who)s (%(what)s); needs approval again from %(names)s"
        ),
        "postmortems.what.edited_after_approval_in_review": gettext_noop(
            "edited after approval by %(who)s (%(what)s); back in review; needs approval "
            "again from %(names)s"
        ),
        "postmortems.what.refreshed_after_approval": gettext_noop(
            "refreshed from the incident after approval by %(who)s (%(what)s); needs "
            "approval again from %(names)s"
        ),
        "postmortems.what.refreshed_after_approval_in_review": gettext_noop(
            "refreshed from the incident after approval by %(who)s (%(what)s); back in "
            "review; needs approval again from %(names)s"
        ),
        "postmortems.who.worker": gettext_noop("the worker"),
        "postmortems.nobody": gettext_noop("nobody"),
        # What changed in the content (a list of these, joined).
        "postmortems.change.list": pgettext_lazy("list of changes", "%(first)s, %(rest)s"),
        "postmortems.change.both": pgettext_lazy("two changes", "%(first)s and %(rest)s"),
        "postmortems.change.line": gettext_noop("timeline line #%(id)s %(how)s"),
        "postmortems.change.reworded": gettext_noop("reworded"),
        "postmortems.change.included": gettext_noop("included"),
        "postmortems.change.left_out": gettext_noop("left out"),
        "postmortems.change.line_added": gettext_noop("timeline line #%(id)s added"),
        "postmortems.change.item_added": gettext_noop("action item #%(id)s added"),
        "postmortems.change.impact_figures": gettext_noop("impact figures"),
        "postmortems.change.new_lines": ngettext_lazy(
            "%(count)s new timeline line", "%(count)s new timeline lines", "count"
        ),
        # The edit history's refresh row (its stored English is read back: views/history.py).
        "postmortems.history.refreshed": gettext_noop(
            "facts refreshed from incident #%(id)s; %(lines)s"
        ),
        "postmortems.change.updated_lines": ngettext_lazy(
            "%(count)s timeline line updated", "%(count)s timeline lines updated", "count"
        ),
        # What happened to an action item.
        "postmortems.item.added": gettext_noop(
            "added (%(priority)s, %(category)s, owner %(owner)s, due %(due)s)"
        ),
        "postmortems.item.changed": gettext_noop("%(field)s → %(value)s"),
        "postmortems.item.changes": pgettext_lazy("list of changes", "%(first)s; %(rest)s"),
        "postmortems.item.status": gettext_noop("%(old)s → %(new)s"),
        "postmortems.item.status_reason": gettext_noop("%(old)s → %(new)s (%(reason)s)"),
        # Names of fields and states, the words the pages use.
        "postmortems.field.title": pgettext_lazy("postmortem field", "title"),
        "postmortems.field.summary": pgettext_lazy("postmortem field", "summary"),
        "postmortems.field.impact": pgettext_lazy("postmortem field", "impact"),
        "postmortems.field.root_cause": pgettext_lazy("postmortem field", "root cause"),
        "postmortems.field.contributing_factors": pgettext_lazy(
            "postmortem field", "contributing factors"
        ),
        "postmortems.field.lessons_learned": pgettext_lazy("postmortem field", "lessons learned"),
        "postmortems.item_field.title": pgettext_lazy("action item field", "title"),
        "postmortems.item_field.description": pgettext_lazy("action item field", "description"),
        "postmortems.item_field.owner": pgettext_lazy("action item field", "owner"),
        "postmortems.item_field.due_date": pgettext_lazy("action item field", "due date"),
        "postmortems.item_field.priority": pgettext_lazy("action item field", "priority"),
        "postmortems.item_field.category": pgettext_lazy("action item field", "category"),
        "postmortems.item_field.external_url": pgettext_lazy("action item field", "external URL"),
        **{f"postmortems.item_status.{value}": label for value, label in ItemStatus.choices},
        **{f"postmortems.item_category.{value}": label for value, label in ItemCategory.choices},
    }
)
