"""The calendar feeds (included by pager/urls.py under the "pager" namespace)."""

from django.urls import path

from pager.schedules import feeds

urlpatterns = [
    path("feeds/schedule/<str:key>.ics", feeds.schedule_feed, name="schedule-feed"),
    path("feeds/person/<str:key>.ics", feeds.person_feed, name="person-feed"),
]
