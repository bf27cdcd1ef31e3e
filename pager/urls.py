"""The pager's pages under /pager/ (config/urls.py), one URL module per part."""

from django.urls import include, path

app_name = "pager"

urlpatterns = [
    path("", include("pager.views.urls")),  # teams, calendar, my pager, reports, windows
    path("", include("pager.paging.urls")),  # the one-tap acknowledge page
    path("", include("pager.schedules.urls")),  # iCal feeds
    path("reports/", include("pager.reports.urls")),  # pages, acknowledgements, CSV
]
