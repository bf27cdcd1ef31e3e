"""The deliveries page and its API, mounted at the root by config/urls.py."""

from django.urls import path

from notifications import api, views

app_name = "notifications"
urlpatterns = [
    path("notifications/", views.delivery_list, name="list"),
    path("notifications/<int:pk>/retry/", views.delivery_retry, name="retry"),
    path("api/v1/notifications/deliveries/", api.DeliveryListApi.as_view(), name="api-deliveries"),
]
