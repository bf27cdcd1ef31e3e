from celery.signals import worker_ready
from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from actions import timeline_kinds
from actions.kinds import KINDS
from incidents.panels import incident_panel_register
from incidents.timeline_kinds import timeline_kinds_register
from runbooks.action_kinds import action_kinds_register


class ActionsConfig(AppConfig):
    name = "actions"
    verbose_name = _("Actions")

    def ready(self) -> None:
        # registry: models load after apps are ready
        from actions import texts  # noqa: F401  (registry: the "actions.*" message ids)
        from actions.access import log_access_at_worker_start
        from actions.recommended import recommended_actions
        from actions.related import lead_action_runs
        from actions.selectors import action_runs_waiting_count
        from console.liveness.banner import waiting_work_register
        from incidents.related.lead_work import lead_work_register
        from runbooks.recommendations import triage_recommender_register

        worker_ready.connect(log_access_at_worker_start, weak=False)
        # console shows "no worker ... M action runs are waiting" but may not import us.
        waiting_work_register(
            count=action_runs_waiting_count, singular=_("action run"), plural=_("action runs")
        )
        # incidents and runbooks import no higher app: we tell them what we add. The
        # incident page's panel and timeline kind:
        incident_panel_register(key="actions", order=20, template="actions/_incident_section.html")
        timeline_kinds_register(app=self.name, kinds=timeline_kinds.LABELS)
        # the kinds a runbook may name (the catalogue validates against them), and the
        # triage branch's recommended actions, ready to request:
        action_kinds_register(app=self.name, names=KINDS)
        triage_recommender_register(recommended_actions)
        # a related incident's "Part of #N" panel shows what its lead already has under way
        lead_work_register(lead_action_runs)
