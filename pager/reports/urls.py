from django.urls import path

from pager.reports import views

# Included under /pager/reports/ by pager/urls.py (app_name "pager").
urlpatterns = [
    path("", views.reports, name="reports"),
    path("<slug:table>.csv", views.reports_csv, name="reports-csv"),
]
