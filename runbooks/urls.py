from django.urls import path

from runbooks import views

app_name = "runbooks"
urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("categories/", views.categories, name="categories"),
    path("incidents/<int:pk>/triage/", views.incident_triage_partial, name="incident-triage"),
    path("incidents/<int:pk>/signals/", views.incident_signals_partial, name="incident-signals"),
    path("<slug:slug>/", views.runbook_detail, name="runbook"),
]
