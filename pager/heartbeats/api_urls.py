"""The check-in endpoint (under /api/v1/pager/, namespace "pager-api")."""

from django.urls import re_path

from pager.heartbeats import views

urlpatterns = [
    # With or without a trailing slash: a cron line's curl gets it right either way. Any
    # segment reaches the view, so a wrong name gets the endpoint's own documented 404.
    re_path(
        r"^heartbeats/(?P<slug>[^/]+)/beat/?$",
        views.heartbeat_beat_view,
        name="heartbeat-beat",
    ),
]
