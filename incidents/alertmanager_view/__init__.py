"""The console's alerts reconciled with Alertmanager's own view (`GET /api/v2/alerts`):
client.py (every replica, through the silences client), decide.py (pure: what the view
says of one alert, and whether that ends it), services.py (the reconcile and the page's
rate-limited request for one), selectors.py (what the pages show). The task is
incidents.tasks.alertmanager_reconcile, run by beat every ALERTMANAGER_RECONCILE_SECONDS.
"""
