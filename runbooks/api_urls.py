"""REST API routes of the runbooks app, mounted under /api/v1/."""

from django.urls import path

from actions import api as actions
from drills import api as drills
from runbooks import api

app_name = "runbooks_api"

urlpatterns = [
    path("incidents/<int:pk>/triage/", api.IncidentTriageApi.as_view(), name="incident-triage"),
    path(
        "incidents/<int:pk>/actions/", actions.IncidentActionsApi.as_view(), name="incident-actions"
    ),
    path(
        "incidents/<int:pk>/actions/preview/",
        actions.IncidentActionPreviewApi.as_view(),
        name="incident-action-preview",
    ),
    path("actions/", actions.ActionRunListApi.as_view(), name="action-list"),
    path("actions/<int:pk>/", actions.ActionRunDetailApi.as_view(), name="action-detail"),
    path("actions/<int:pk>/approve/", actions.ActionRunApproveApi.as_view(), name="action-approve"),
    path("actions/<int:pk>/reject/", actions.ActionRunRejectApi.as_view(), name="action-reject"),
    path("actions/<int:pk>/cancel/", actions.ActionRunCancelApi.as_view(), name="action-cancel"),
    path("actions/<int:pk>/undo/", actions.ActionRunUndoApi.as_view(), name="action-undo"),
    path("drills/plans/", drills.DrillPlanListApi.as_view(), name="drill-plans"),
    path("drills/plans/<int:pk>/", drills.DrillPlanDetailApi.as_view(), name="drill-plan"),
    path("drills/plans/<int:pk>/start/", drills.DrillPlanStartApi.as_view(), name="drill-start"),
    path("drills/runs/", drills.DrillRunListApi.as_view(), name="drill-runs"),
    path("drills/runs/<int:pk>/", drills.DrillRunDetailApi.as_view(), name="drill-run"),
    path("drills/runs/<int:pk>/stop/", drills.DrillRunStopApi.as_view(), name="drill-stop"),
]
