"""A real OpenID Connect provider for the sign-in tests: a tiny Django project running
django-oauth-toolkit in its OIDC provider mode, started by the tests as its own process
(`python -m tests.oidc_provider`, see __main__.py; the fixtures are in fixtures.py)."""
