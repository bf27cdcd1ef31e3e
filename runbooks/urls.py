from django.urls import path

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
    # Last: the slug would swallow "actions/" and "drills/", which config/urls.py mounts
    # (actions.urls, drills.urls) before this URLconf.
    path("<slug:slug>/", views.runbook_detail, name="runbook"),
]
