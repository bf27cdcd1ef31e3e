"""The pager's REST API under /api/v1/pager/ (namespace "pager-api"): one module of views
per part (teams and who is on call, schedules, my contact methods, pages, heartbeats,
maintenance windows, reports), their shapes in serializers/, their reads in selectors.py."""
