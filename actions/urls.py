"""The action pages, mounted by config/urls.py under /runbooks/ (their URLs predate the
app): the audit list and a run's page, and the partials the incident page composes."""

from django.urls import path

from actions import views

app_name = "actions"
urlpatterns = [
    path("actions/", views.action_list, name="actions"),
    path("actions/<int:run_id>/", views.action_run_page, name="action-run"),
    path("actions/<int:run_id>/card/", views.run_card, name="action-card"),
    path("actions/<int:run_id>/approve/", views.run_approve, name="action-approve"),
    path("actions/<int:run_id>/reject/", views.run_reject, name="action-reject"),
    path("actions/<int:run_id>/cancel/", views.run_cancel, name="action-cancel"),
    path("actions/<int:run_id>/undo/", views.run_undo, name="action-undo"),
    path("incidents/<int:pk>/actions/", views.incident_actions_partial, name="incident-actions"),
    path("incidents/<int:pk>/actions/confirm/", views.action_confirm, name="action-confirm"),
    path("incidents/<int:pk>/actions/preview/", views.action_confirm_update, name="action-preview"),
    path("incidents/<int:pk>/actions/request/", views.action_request, name="action-request"),
]
