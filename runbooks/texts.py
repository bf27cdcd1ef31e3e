"""The lines runbooks writes on the timeline, as message ids (console/texts/).

Auto-triage's findings and a confirmed diagnosis are not here: their words come from
the runbook catalogue, and runbooks/timeline_text.py words them again from the
catalogue in the reader's language (their payload holds the runbook and branch).
Imported by RunbooksConfig.ready() and by the modules that build these texts.
"""

from django.utils.translation import gettext_noop

from console.texts import texts_register

texts_register(
    {
        "runbooks.step.done": gettext_noop("Runbook step done: %(step)s"),
        # The stepper's steps (runbooks/services.RUNBOOK_STEPS), as pages name them.
        "runbooks.step.symptom": gettext_noop("Symptom"),
        "runbooks.step.triage": gettext_noop("Triage"),
        "runbooks.step.root_cause": gettext_noop("Root cause"),
        "runbooks.step.fix": gettext_noop("Fix"),
        "runbooks.step.long_term": gettext_noop("Long-term"),
        # A triage check's note (runbooks/triage.py writes it in English; the page and the
        # API word it again: runbooks/prometheus_texts.py recognises these shapes too).
        "runbooks.triage.no_data": gettext_noop("the query returned no data"),
        "runbooks.triage.needs_label": gettext_noop("needs label %(labels)s"),
        "runbooks.triage.no_runbook": gettext_noop(
            "No runbook in the catalogue matches this incident's alerts."
        ),
        "runbooks.auto_triage.prometheus_error": gettext_noop(
            "Auto-triage (%(runbook)s) could not ask Prometheus: %(error)s. It tries again "
            "every minute and posts when it answers; the runbook's steps still apply."
        ),
    }
)
