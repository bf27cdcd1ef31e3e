"""The pager's API under /api/v1/pager/ (config/urls.py)."""

from django.urls import include, path

app_name = "pager-api"

urlpatterns = [
    path("", include("pager.heartbeats.api_urls")),  # check-ins
    path("", include("pager.api.urls")),  # teams, schedules, policies, pages, reports
]
