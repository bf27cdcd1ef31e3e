"""REST API routes of the runbooks app, mounted under /api/v1/."""

from django.urls import path

from runbooks import api

app_name = "runbooks_api"

urlpatterns = [
    path("incidents/<int:pk>/triage/", api.IncidentTriageApi.as_view(), name="incident-triage"),
]
