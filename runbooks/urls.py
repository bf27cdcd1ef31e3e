from django.urls import path

from actions import views as actions
from drills import views as drills
from runbooks import views

app_name = "runbooks"
urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("categories/", views.categories, name="categories"),
    path("incidents/<int:pk>/triage/", views.incident_triage_partial, name="incident-triage"),
    path("incidents/<int:pk>/runbook/", views.incident_runbook_change, name="incident-runbook"),
    path(
        "incidents/<int:pk>/diagnosis/",
        views.incident_diagnosis_confirm,
        name="incident-diagnosis",
    ),
    path("incidents/<int:pk>/steps/<slug:step>/", views.incident_step_check, name="incident-step"),
    path("incidents/<int:pk>/signals/", views.incident_signals_partial, name="incident-signals"),
    # Actions (before the runbook slug pattern, which would swallow "actions/").
    path("actions/", actions.action_list, name="actions"),
    path("actions/<int:run_id>/", actions.action_run_page, name="action-run"),
    path("actions/<int:run_id>/card/", actions.run_card, name="action-card"),
    path("actions/<int:run_id>/approve/", actions.run_approve, name="action-approve"),
    path("actions/<int:run_id>/reject/", actions.run_reject, name="action-reject"),
    path("actions/<int:run_id>/cancel/", actions.run_cancel, name="action-cancel"),
    path("actions/<int:run_id>/undo/", actions.run_undo, name="action-undo"),
    path("incidents/<int:pk>/actions/", actions.incident_actions_partial, name="incident-actions"),
    path("incidents/<int:pk>/actions/confirm/", actions.action_confirm, name="action-confirm"),
    path(
        "incidents/<int:pk>/actions/preview/",
        actions.action_confirm_update,
        name="action-preview",
    ),
    path("incidents/<int:pk>/actions/request/", actions.action_request, name="action-request"),
    # Drills (also before the runbook slug pattern).
    path("drills/", drills.drill_list, name="drills"),
    path("drills/plans/<int:plan_id>/", drills.drill_plan_page, name="drill-plan"),
    path("drills/plans/<int:plan_id>/start/", drills.drill_plan_start, name="drill-start"),
    path("drills/runs/<int:run_id>/", drills.drill_run_page, name="drill-run"),
    path("drills/runs/<int:run_id>/card/", drills.drill_run_card, name="drill-card"),
    path("drills/runs/<int:run_id>/stop/", drills.drill_run_stop, name="drill-stop"),
    path("<slug:slug>/", views.runbook_detail, name="runbook"),
]
