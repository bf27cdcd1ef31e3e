"""The pager's API routes, under /api/v1/pager/ (pager/api_urls.py, namespace "pager-api")."""

from django.urls import path

from pager.api import contacts, heartbeats, maintenance, pages, reports, schedules, teams

urlpatterns = [
    # teams and who is on call
    path("teams/", teams.TeamListApi.as_view(), name="team-list"),
    path("teams/<slug:slug>/", teams.TeamDetailApi.as_view(), name="team-detail"),
    path("teams/<slug:slug>/oncall/", teams.TeamOnCallApi.as_view(), name="team-oncall"),
    path("incidents/<int:pk>/oncall/", teams.IncidentOnCallApi.as_view(), name="incident-oncall"),
    # schedules
    path("schedules/<slug:slug>/shifts/", schedules.ShiftListApi.as_view(), name="schedule-shifts"),
    path(
        "schedules/<slug:slug>/overrides/",
        schedules.OverrideCreateApi.as_view(),
        name="schedule-overrides",
    ),
    path("overrides/<int:pk>/", schedules.OverrideDetailApi.as_view(), name="override-detail"),
    path("schedules/<slug:slug>/take/", schedules.TakeApi.as_view(), name="schedule-take"),
    path("schedules/<slug:slug>/swaps/", schedules.SwapCreateApi.as_view(), name="schedule-swaps"),
    path("swaps/<int:pk>/accept/", schedules.SwapAcceptApi.as_view(), name="swap-accept"),
    path("swaps/<int:pk>/cancel/", schedules.SwapCancelApi.as_view(), name="swap-cancel"),
    path("schedules/<slug:slug>/ical/", schedules.IcalUploadApi.as_view(), name="schedule-ical"),
    path(
        "schedules/<slug:slug>/ical/refresh/",
        schedules.IcalRefreshApi.as_view(),
        name="schedule-ical-refresh",
    ),
    # my contact methods
    path(
        "me/contact-methods/",
        contacts.ContactMethodListApi.as_view(),
        name="contact-method-list",
    ),
    path(
        "me/contact-methods/<int:pk>/",
        contacts.ContactMethodDetailApi.as_view(),
        name="contact-method-detail",
    ),
    path(
        "me/contact-methods/<int:pk>/test/",
        contacts.ContactMethodTestApi.as_view(),
        name="contact-method-test",
    ),
    path(
        "me/contact-methods/<int:pk>/move/",
        contacts.ContactMethodMoveApi.as_view(),
        name="contact-method-move",
    ),
    # pages
    path("pages/", pages.PageListApi.as_view(), name="page-list"),
    path("pages/<int:pk>/", pages.PageDetailApi.as_view(), name="page-detail"),
    path(
        "pages/<int:pk>/acknowledge/",
        pages.PageAcknowledgeApi.as_view(),
        name="page-acknowledge",
    ),
    # heartbeats (their check-in is pager/heartbeats/api_urls.py) and maintenance windows
    path("heartbeats/", heartbeats.HeartbeatListApi.as_view(), name="heartbeat-list"),
    path(
        "heartbeats/<slug:slug>/",
        heartbeats.HeartbeatDetailApi.as_view(),
        name="heartbeat-detail",
    ),
    path(
        "maintenance-windows/",
        maintenance.WindowListApi.as_view(),
        name="maintenance-window-list",
    ),
    path(
        "maintenance-windows/<int:pk>/cancel/",
        maintenance.WindowCancelApi.as_view(),
        name="maintenance-window-cancel",
    ),
    # reports
    path("reports/", reports.ReportApi.as_view(), name="reports"),
]
