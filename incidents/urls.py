from django.urls import path

from incidents import views
from incidents.archive import views as archive_views
from incidents.related import views as related_views
from incidents.silences import views as silences_views

app_name = "incidents"
urlpatterns = [
    path("", views.incident_list, name="list"),
    path("incidents/declare/", views.incident_declare, name="declare"),
    path("incidents/<int:pk>/", views.incident_detail, name="detail"),
    path("incidents/<int:pk>/header/", views.incident_header, name="header"),
    path("incidents/<int:pk>/alerts/", views.incident_alerts, name="alerts"),
    path("incidents/<int:pk>/timeline/", views.incident_timeline, name="timeline"),
    path("incidents/<int:pk>/acknowledge/", views.incident_acknowledge, name="acknowledge"),
    path("incidents/<int:pk>/mitigate/", views.incident_mitigate, name="mitigate"),
    path("incidents/<int:pk>/resolve/", views.incident_resolve, name="resolve"),
    path("incidents/<int:pk>/reopen/", views.incident_reopen, name="reopen"),
    path("incidents/<int:pk>/commander/", views.incident_commander, name="commander"),
    path("incidents/<int:pk>/notes/", views.incident_note, name="notes"),
    path("incidents/<int:pk>/silences/", silences_views.incident_silence_list, name="silences"),
    path(
        "incidents/<int:pk>/silences/new/",
        silences_views.incident_silence_create,
        name="silence-create",
    ),
    path(
        "incidents/<int:pk>/silences/<uuid:silence_id>/expire/",
        silences_views.incident_silence_expire,
        name="silence-expire",
    ),
    path("incidents/<int:pk>/related/", related_views.incident_related_panel, name="related"),
    path(
        "incidents/<int:pk>/related/merge/",
        related_views.incident_related_merge_view,
        name="related-merge",
    ),
    path(
        "incidents/<int:pk>/related/unlink/",
        related_views.incident_related_unlink_view,
        name="related-unlink",
    ),
    path("incidents/<int:pk>/restore/", archive_views.incident_restore, name="restore"),
    path("archive/", archive_views.archive_page, name="archive"),
    path("archive/run/", archive_views.archive_run, name="archive-run"),
    path("archive/restore/", archive_views.archive_restore, name="archive-restore"),
    path(
        "archive/batches/<int:batch_id>/restore/",
        archive_views.archive_batch_restore,
        name="archive-batch-restore",
    ),
    path("receipts/", views.receipt_list, name="receipts"),
    path("receipts/<int:pk>/", views.receipt_detail, name="receipt-detail"),
    path("receipts/<int:pk>/body/", views.receipt_body, name="receipt-body"),
    path("receipts/<int:pk>/replay/", views.receipt_replay, name="receipt-replay"),
]
