from django.urls import path

from readiness import views

app_name = "readiness"
urlpatterns = [
    path("", views.deployment_list, name="list"),
    path("<int:pk>/", views.deployment_detail, name="deployment"),
    path("<int:pk>/verification/", views.verification_banner, name="verification"),
    path("<int:pk>/verify/", views.deployment_verify, name="verify"),
    path("<int:pk>/signoff/", views.signoff_record, name="signoff"),
    path("<int:pk>/revoke/", views.signoff_revoke, name="revoke"),
]
