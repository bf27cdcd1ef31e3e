"""The pager's pages (included by pager/urls.py, namespace "pager")."""

from django.urls import path

from pager.views import heartbeats, incident, me, pages, shifts, team_page, teams

urlpatterns = [
    path("", teams.team_list, name="teams"),
    path("teams/<slug:slug>/", teams.team_detail, name="team"),
    path("teams/<slug:slug>/take/", shifts.shift_take, name="take"),
    path("teams/<slug:slug>/overrides/", shifts.override_create, name="override-create"),
    path(
        "teams/<slug:slug>/overrides/<int:override_id>/cancel/",
        shifts.override_cancel,
        name="override-cancel",
    ),
    path("teams/<slug:slug>/swaps/", shifts.swap_request, name="swap-request"),
    path("teams/<slug:slug>/swaps/<int:swap_id>/accept/", shifts.swap_accept, name="swap-accept"),
    path("teams/<slug:slug>/swaps/<int:swap_id>/cancel/", shifts.swap_cancel, name="swap-cancel"),
    path("teams/<slug:slug>/windows/", shifts.window_create, name="window-create"),
    path(
        "teams/<slug:slug>/windows/<int:window_id>/cancel/",
        shifts.window_cancel,
        name="window-cancel",
    ),
    path(
        "teams/<slug:slug>/schedules/<int:schedule_id>/feed/",
        shifts.schedule_feed_rotate,
        name="schedule-feed-rotate",
    ),
    path("me/", me.me, name="me"),
    path("me/methods/", me.method_add, name="method-add"),
    path("me/methods/<int:method_id>/", me.method_update, name="method-update"),
    path("me/methods/<int:method_id>/delete/", me.method_delete, name="method-delete"),
    path("me/methods/<int:method_id>/move/", me.method_move, name="method-move"),
    path("me/methods/<int:method_id>/test/", me.method_test, name="method-test"),
    path("me/feed/", me.feed_rotate, name="feed-rotate"),
    path("me/zone/", me.zone_set, name="zone"),
    path("pages/", pages.page_list, name="pages"),
    path("heartbeats/", heartbeats.heartbeat_list, name="heartbeats"),
    path("incidents/<int:incident_id>/panel/", incident.incident_panel, name="incident-panel"),
    path(
        "incidents/<int:incident_id>/stop-paging/",
        incident.incident_paging_stop,
        name="incident-paging-stop",
    ),
    path(
        "incidents/<int:incident_id>/page-team/",
        team_page.incident_page_form,
        name="incident-page-form",
    ),
    path(
        "incidents/<int:incident_id>/page-team/send/",
        team_page.incident_page_team,
        name="incident-page-team",
    ),
]
