"""Production defaults: `check --deploy` is clean with production settings, HTTPS is on
by default outside embedded mode, and embedded mode (`make run` on http://127.0.0.1)
keeps plain cookies."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# Everything the test settings or the caller's shell may have set that changes security.
_STRIP = (
    "DJANGO_SETTINGS_MODULE", "DATABASE_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS",
    "SECURE_COOKIES", "SECURE_SSL_REDIRECT", "HSTS_SECONDS", "HSTS_INCLUDE_SUBDOMAINS",
    "HSTS_PRELOAD", "BEHIND_TLS_PROXY", "CSRF_TRUSTED_ORIGINS", "DJANGO_ALLOW_ASYNC_UNSAFE",
    "FIELD_ENCRYPTION_KEYS", "SECRET_KEY_FALLBACKS",
)  # fmt: skip
SHOW = (
    "import json; from django.conf import settings as s; print(json.dumps({k: getattr(s, k) "
    "for k in ('SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_SSL_REDIRECT', "
    "'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_REDIRECT_EXEMPT', "
    "'SECURE_PROXY_SSL_HEADER', 'SECURE_CONTENT_TYPE_NOSNIFF', 'X_FRAME_OPTIONS', "
    "'SECURE_REFERRER_POLICY', 'AXES_FAILURE_LIMIT')}, default=str))"
)


def run_manage(tmp_path, *args, **env_vars) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in _STRIP}
    env.update(VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings", **env_vars)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def production(**extra) -> dict:
    return {
        "DATABASE_URL": "postgres://console:secret@db.example.internal:5432/console",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "console.example.internal",
        "FIELD_ENCRYPTION_KEYS": secrets.token_urlsafe(32),
        "NOTIFY_CONSOLE_URL": "https://console.example.internal",
        **extra,
    }


def shown(tmp_path, **env_vars) -> dict:
    done = run_manage(tmp_path, "shell", "-c", SHOW, **env_vars)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    done = run_manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **production())
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNINGS" not in output, output
    assert "System check identified no issues" in output


@pytest.mark.parametrize(
    ("keys", "error"),
    [("", "encryption.E001"), ("too-short", "encryption.E002")],
)
def test_check_deploy_requires_a_field_encryption_key_in_production(tmp_path, keys, error):
    done = run_manage(tmp_path, "check", "--deploy", **production(FIELD_ENCRYPTION_KEYS=keys))
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert error in output, output
    assert "FIELD_ENCRYPTION_KEYS" in output, output


def test_embedded_mode_keeps_a_local_field_encryption_key(tmp_path):
    show = "from django.conf import settings as s; print(s.FIELD_ENCRYPTION_KEYS)"
    first = run_manage(tmp_path, "shell", "-c", show)
    assert first.returncode == 0, first.stderr
    key = (tmp_path / "field_encryption_key").read_text().strip()
    assert len(key) >= 32
    assert key in first.stdout
    assert run_manage(tmp_path, "shell", "-c", show).stdout == first.stdout  # kept


def test_production_is_https_only_by_default(tmp_path):
    s = shown(tmp_path, **production())
    assert s["SESSION_COOKIE_SECURE"] is True
    assert s["CSRF_COOKIE_SECURE"] is True
    assert s["SECURE_SSL_REDIRECT"] is True
    assert s["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert s["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert s["SECURE_CONTENT_TYPE_NOSNIFF"] is True
    assert s["X_FRAME_OPTIONS"] == "DENY"
    assert s["SECURE_REFERRER_POLICY"] == "same-origin"
    # Probes over plain HTTP are not redirected; no proxy header is trusted unless asked.
    assert "^healthz$" in s["SECURE_REDIRECT_EXEMPT"]
    assert s["SECURE_PROXY_SSL_HEADER"] is None
    assert s["AXES_FAILURE_LIMIT"] == 5


def test_a_tls_terminating_proxy_is_trusted_only_when_switched_on(tmp_path):
    s = shown(tmp_path, **production(BEHIND_TLS_PROXY="1"))
    assert s["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_embedded_mode_keeps_plain_http_working(tmp_path):
    s = shown(tmp_path)  # no DATABASE_URL: what `make run` uses
    assert s["SESSION_COOKIE_SECURE"] is False
    assert s["CSRF_COOKIE_SECURE"] is False
    assert s["SECURE_SSL_REDIRECT"] is False
    assert s["SECURE_HSTS_SECONDS"] == 0


@pytest.mark.django_db
def test_http_is_redirected_but_probes_are_not(client, settings):
    settings.SECURE_SSL_REDIRECT = True  # the production default (tests run over HTTP)
    r = client.get("/login/")
    assert r.status_code == 301
    assert r["Location"] == "https://testserver/login/"
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code in (200, 503)  # answered, not redirected
    r = client.get("/login/", secure=True)
    assert r.status_code == 200
    assert "max-age=" in r["Strict-Transport-Security"]
