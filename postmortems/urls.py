from django.urls import include, path

from postmortems import views
from postmortems.similar import views as similar_views

app_name = "postmortems"
urlpatterns = [
    path("", views.postmortem_list, name="list"),
    path("items/", views.item_list, name="items"),
    path("items/<int:item_id>/", views.item_save, name="item-save"),
    path("notifications/", views.notification_list, name="notifications"),
    path(
        "notifications/<int:notification_id>/read/",
        views.notification_read,
        name="notification-read",
    ),
    path("incidents/<int:incident_id>/panel/", views.incident_panel, name="incident-panel"),
    path("incidents/<int:incident_id>/draft/", views.postmortem_draft, name="draft"),
    path(
        "incidents/<int:incident_id>/similar/",
        similar_views.incident_similar_partial,
        name="incident-similar",
    ),
    path("timeline/<int:entry_id>/", views.timeline_entry, name="timeline-entry"),
    path("<int:pk>/", views.postmortem_detail, name="detail"),
    path("<int:pk>/drafting/", views.postmortem_drafting, name="drafting"),
    path("<int:pk>/sections/<str:section>/", views.section_save, name="section-save"),
    path("<int:pk>/timeline/", views.timeline_add, name="timeline-add"),
    path("<int:pk>/suggestions/accept/", views.suggestion_accept, name="suggestion-accept"),
    path("<int:pk>/items/", views.item_add, name="item-add"),
    path("<int:pk>/review/request/", views.review_request, name="review-request"),
    path("<int:pk>/review/", views.review_decide, name="review-decide"),
    path("<int:pk>/comments/", views.comment_add, name="comment-add"),
    path("<int:pk>/publish/", views.publish, name="publish"),
    path("<int:pk>/refresh/", views.refresh, name="refresh"),
    path("<int:pk>/history/", views.postmortem_history, name="history"),
    path("<int:pk>/export.md", views.postmortem_export, name="export"),
    path("<int:pk>/print/", views.postmortem_print, name="print"),
    path("reports/", include("postmortems.reports.urls")),
]
