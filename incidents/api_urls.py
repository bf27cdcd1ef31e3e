"""REST API routes of the incidents app, mounted under /api/v1/."""

from django.urls import path

from incidents import api, api_declare
from incidents.archive import api as archive_api
from incidents.related import api as related_api
from incidents.silences import api as silences_api

app_name = "incidents_api"

urlpatterns = [
    path("incidents/", api.IncidentListApi.as_view(), name="incident-list"),
    path("incidents/declare/", api_declare.IncidentDeclareApi.as_view(), name="incident-declare"),
    path("incidents/<int:pk>/", api.IncidentDetailApi.as_view(), name="incident-detail"),
    path(
        "incidents/<int:pk>/timeline/",
        api.IncidentTimelineApi.as_view(),
        name="incident-timeline",
    ),
    path(
        "incidents/<int:pk>/acknowledge/",
        api.IncidentAcknowledgeApi.as_view(),
        name="incident-acknowledge",
    ),
    path(
        "incidents/<int:pk>/mitigate/",
        api.IncidentMitigateApi.as_view(),
        name="incident-mitigate",
    ),
    path(
        "incidents/<int:pk>/resolve/",
        api.IncidentResolveApi.as_view(),
        name="incident-resolve",
    ),
    path("incidents/<int:pk>/reopen/", api.IncidentReopenApi.as_view(), name="incident-reopen"),
    path("incidents/<int:pk>/notes/", api.IncidentNoteApi.as_view(), name="incident-notes"),
    path(
        "incidents/<int:pk>/commander/",
        api.IncidentCommanderApi.as_view(),
        name="incident-commander",
    ),
    path(
        "incidents/<int:pk>/merge/",
        related_api.IncidentMergeApi.as_view(),
        name="incident-merge",
    ),
    path(
        "incidents/<int:pk>/unlink/",
        related_api.IncidentUnlinkApi.as_view(),
        name="incident-unlink",
    ),
    path(
        "incidents/<int:pk>/silences/",
        silences_api.IncidentSilencesApi.as_view(),
        name="incident-silences",
    ),
    path(
        "incidents/<int:pk>/silences/<uuid:silence_id>/",
        silences_api.IncidentSilenceApi.as_view(),
        name="incident-silence",
    ),
    path("archive/", archive_api.ArchiveRunApi.as_view(), name="archive-run"),
    path("archive/batches/", archive_api.ArchiveBatchListApi.as_view(), name="archive-batches"),
    path(
        "archive/incidents/",
        archive_api.ArchivedIncidentListApi.as_view(),
        name="archive-incidents",
    ),
    path("archive/restore/", archive_api.ArchiveRestoreApi.as_view(), name="archive-restore"),
]
