from django.urls import path

app_name = "incidents"
urlpatterns: list = []
