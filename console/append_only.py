"""Rows the application inserts and never updates or deletes (timelines, audit logs, edit
histories, kept revisions). Imports no app, so every app can use it."""

from django.db import models


class AppendOnlyModel(models.Model):
    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None and not kwargs.get("force_insert"):
            raise RuntimeError(f"{type(self).__name__} rows are append-only.")
        return super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} rows are append-only.")
