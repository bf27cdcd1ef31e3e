from django.apps import AppConfig


class PostmortemsConfig(AppConfig):
    name = "postmortems"
    verbose_name = "Postmortems"
