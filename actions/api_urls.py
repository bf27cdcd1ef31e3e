"""REST API routes of the actions app, mounted under /api/v1/."""

from django.urls import path

from actions import api

app_name = "actions_api"
urlpatterns = [
    path("incidents/<int:pk>/actions/", api.IncidentActionsApi.as_view(), name="incident-actions"),
    path(
        "incidents/<int:pk>/actions/preview/",
        api.IncidentActionPreviewApi.as_view(),
        name="incident-action-preview",
    ),
    path("actions/", api.ActionRunListApi.as_view(), name="action-list"),
    path("actions/<int:pk>/", api.ActionRunDetailApi.as_view(), name="action-detail"),
    path("actions/<int:pk>/approve/", api.ActionRunApproveApi.as_view(), name="action-approve"),
    path("actions/<int:pk>/reject/", api.ActionRunRejectApi.as_view(), name="action-reject"),
    path("actions/<int:pk>/cancel/", api.ActionRunCancelApi.as_view(), name="action-cancel"),
    path("actions/<int:pk>/undo/", api.ActionRunUndoApi.as_view(), name="action-undo"),
]
