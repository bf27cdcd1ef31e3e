"""The one-tap acknowledge link (included by pager/urls.py under /pager/)."""

from django.urls import path

from pager.paging import views

urlpatterns = [
    path("ack/<str:token>/", views.page_ack, name="page-ack"),
]
