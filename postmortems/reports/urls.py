from django.urls import path

from postmortems.reports import views

# Included under /postmortems/reports/ by postmortems/urls.py (app_name "postmortems").
urlpatterns = [
    path("", views.reports, name="reports"),
    path("csv/<slug:table>/", views.reports_csv, name="reports-csv"),
]
