"""The pager's API under /api/v1/pager/ (config/urls.py)."""

from django.urls import include, path

from pager.api import team_page

app_name = "pager-api"

urlpatterns = [
    path("", include("pager.heartbeats.api_urls")),  # check-ins
    path("", include("pager.api.urls")),  # teams, schedules, policies, pages, reports
    path("teams/<slug:slug>/page/", team_page.TeamPageApi.as_view(), name="team-page"),
]
