"""REST API routes of the drills app, mounted under /api/v1/."""

from django.urls import path

from drills import api

app_name = "drills_api"
urlpatterns = [
    path("drills/plans/", api.DrillPlanListApi.as_view(), name="drill-plans"),
    path("drills/plans/<int:pk>/", api.DrillPlanDetailApi.as_view(), name="drill-plan"),
    path("drills/plans/<int:pk>/start/", api.DrillPlanStartApi.as_view(), name="drill-start"),
    path("drills/runs/", api.DrillRunListApi.as_view(), name="drill-runs"),
    path("drills/runs/<int:pk>/", api.DrillRunDetailApi.as_view(), name="drill-run"),
    path("drills/runs/<int:pk>/stop/", api.DrillRunStopApi.as_view(), name="drill-stop"),
]
