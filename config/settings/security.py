"""Secrets, the hosts the console answers to, and browser hardening: HTTPS, HSTS,
cookies, CSRF and the Content-Security-Policy. The login lockout and sign-in are
signin.py; the outgoing-call guard's allowlist is integrations.py."""

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.settings.core import DEBUG
from config.settings.env import EMBEDDED, env, local_secret

# --- Secrets ----------------------------------------------------------------------------
SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not (EMBEDDED or DEBUG):
        raise ImproperlyConfigured("SECRET_KEY must be set (production settings).")
    SECRET_KEY = local_secret("secret_key")
# A changed SECRET_KEY: the old ones, comma-separated, so sessions and the secrets stored
# encrypted (console/encryption.py derives their keys from SECRET_KEY) still read.
SECRET_KEY_FALLBACKS = env.list("SECRET_KEY_FALLBACKS", default=[])
# Secrets at rest (console/encryption.py): comma-separated keys of 32+ random characters;
# the first encrypts, the others only decrypt (rotation: the new key first, then
# `manage.py secrets_rotate`, then drop the old). `check --deploy` requires one.
FIELD_ENCRYPTION_KEYS = [
    k.strip() for k in env.list("FIELD_ENCRYPTION_KEYS", default=[]) if k.strip()
]
if not FIELD_ENCRYPTION_KEYS and EMBEDDED:
    FIELD_ENCRYPTION_KEYS = [local_secret("field_encryption_key")]
SALT_KEY = FIELD_ENCRYPTION_KEYS  # django-fernet-encrypted-fields' name for them

# --- Hosts ------------------------------------------------------------------------------
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
# In Kubernetes, the pod's own IP (downward API): kubelet probes and Prometheus address
# the pod by IP, and Django would refuse that Host header otherwise.
if POD_IP := env.str("POD_IP", default=""):
    ALLOWED_HOSTS.append(POD_IP)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- HTTPS and browser hardening --------------------------------------------------------
# Production (a DATABASE_URL) is HTTPS-only by default; embedded mode serves plain
# http://127.0.0.1, where secure cookies would never come back.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=not EMBEDDED)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not EMBEDDED)
# kubelet probes and Prometheus speak plain HTTP to the pod.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz(/worker)?$", r"^metrics$"]
SECURE_HSTS_SECONDS = env.int("HSTS_SECONDS", default=0 if EMBEDDED else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("HSTS_PRELOAD", default=False)
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_PRELOAD:
    # Preload is a commitment for the whole registered domain, made on hstspreload.org;
    # the operator opts in with HSTS_PRELOAD=1, so its absence is not a defect here.
    SILENCED_SYSTEM_CHECKS.append("security.W021")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
# A TLS-terminating proxy (ingress, load balancer) that sets X-Forwarded-Proto: https.
# Only behind one: a client reaching gunicorn directly could otherwise claim HTTPS.
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy on every response (django-csp). No inline script anywhere: page
# behaviour lives in static/js; htmx's own indicator <style> is off (base.html).
# Styles: the vendored plotly.js (3.7.0) adds two <style> elements when it loads, an
# empty one it fills through CSSOM (allowed) and maplibre's map CSS; these two exact
# bodies are allowed by hash instead of 'unsafe-inline'. A plotly upgrade that changes
# them shows up as a violation in tests/e2e/test_csp_browser.py.
PLOTLY_STYLE_HASHES = [
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",  # "" (plotly.js-style-global)
    "'sha256-V2sIX92Uh6ZaGSFTKMHghsB85b9toJtmazgG09AI2uk='",  # maplibre-gl CSS
]
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, *PLOTLY_STYLE_HASHES],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
