"""REST API routes of the checklist, mounted under /api/v1/."""

from django.urls import path

from readiness import api

app_name = "readiness_api"

urlpatterns = [
    path("readiness/deployments/", api.DeploymentListApi.as_view(), name="deployments"),
    path("readiness/deployments/<int:pk>/", api.DeploymentDetailApi.as_view(), name="deployment"),
    path(
        "readiness/deployments/<int:pk>/verify/", api.DeploymentVerifyApi.as_view(), name="verify"
    ),
    path("readiness/deployments/<int:pk>/signoffs/", api.SignOffApi.as_view(), name="signoffs"),
    path(
        "readiness/deployments/<int:pk>/signoffs/revoke/",
        api.SignOffRevokeApi.as_view(),
        name="signoff-revoke",
    ),
    path(
        "readiness/verifications/<int:pk>/",
        api.VerificationDetailApi.as_view(),
        name="verification",
    ),
]
