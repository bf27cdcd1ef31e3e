"""REST API routes of the postmortems app, mounted under /api/v1/."""

from django.urls import path

from postmortems import api
from postmortems.similar import api as similar_api

app_name = "postmortems_api"
urlpatterns = [
    path("incidents/<int:pk>/postmortem/", api.IncidentPostmortemApi.as_view(), name="draft"),
    path("incidents/<int:pk>/similar/", similar_api.IncidentSimilarApi.as_view(), name="similar"),
    path("postmortems/<int:pk>/", api.PostmortemDetailApi.as_view(), name="detail"),
    path("postmortems/<int:pk>/export.md", api.PostmortemExportApi.as_view(), name="export"),
    path("action-items/", api.ActionItemListApi.as_view(), name="items"),
    path("action-items/<int:pk>/", api.ActionItemDetailApi.as_view(), name="item"),
]
