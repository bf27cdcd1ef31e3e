"""The notifications app's permission strings, named once for its page, API and services
(console/roles.py gives them to commanders and admins)."""

VIEW = "notifications.view_delivery"
RETRY = "notifications.retry_delivery"
