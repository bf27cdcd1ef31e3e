"""Sign-in settings (config/settings/__init__.py imports them all): the password validators,
the login lockout (django-axes), single sign-on (OpenID Connect) and local passwords."""

from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

from config.settings.env import env

# --- Auth -----------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "incidents:list"
LOGOUT_REDIRECT_URL = "login"

# Login lockout (django-axes): failures are counted per username + client IP in the
# database (AccessAttempt; every failure is also kept in AccessFailureLog). Reaching the
# limit locks that pair out for the cool-off; each further failure restarts it.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out pair before any check
    # Refuses the password logins PASSWORD_LOGIN turns off.
    "console.oidc.backends.PasswordLoginPolicy",
    "django.contrib.auth.backends.ModelBackend",
    # Answers only the sign-in callback, and only when configured.
    "console.oidc.backends.OIDCBackend",
]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_LOCKOUT_CALLABLE = "console.login_lockout.lockout_response"
AXES_CLIENT_IP_CALLABLE = "console.login_lockout.client_ip"
# Behind proxies that append to X-Forwarded-For, the client is this many entries from the
# right; 0 trusts only the socket address (a client could forge the header otherwise).
LOGIN_TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# Axes counts password guesses only: a sign-in callback carries a one-time code bound to
# the browser's session (state, PKCE), and failed ones from a shared office address must
# not lock everyone there out of single sign-on. The identity provider throttles its own.
AXES_WHITELIST_CALLABLE = "console.oidc.backends.axes_skips"

# --- Sign-in: single sign-on (OpenID Connect) and local passwords ------------------------
# Off unless OIDC_ISSUER, OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET are all set. The
# endpoints come from the issuer's discovery document (<issuer>/.well-known/
# openid-configuration) unless set one by one. docs/access.md has the details.
OIDC_ISSUER = env.str("OIDC_ISSUER", default="").rstrip("/")
OIDC_RP_CLIENT_ID = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_RP_CLIENT_SECRET = env.str("OIDC_RP_CLIENT_SECRET", default="")
_oidc_given = {
    "OIDC_ISSUER": OIDC_ISSUER,
    "OIDC_RP_CLIENT_ID": OIDC_RP_CLIENT_ID,
    "OIDC_RP_CLIENT_SECRET": OIDC_RP_CLIENT_SECRET,
}
OIDC_ENABLED = all(_oidc_given.values())
if any(_oidc_given.values()) and not OIDC_ENABLED:
    _missing = ", ".join(name for name, value in _oidc_given.items() if not value)
    raise ImproperlyConfigured(f"Single sign-on is half configured: {_missing} not set.")
OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
OIDC_OP_TOKEN_ENDPOINT = env.str("OIDC_OP_TOKEN_ENDPOINT", default="")
OIDC_OP_USER_ENDPOINT = env.str("OIDC_OP_USER_ENDPOINT", default="")
OIDC_OP_JWKS_ENDPOINT = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
OIDC_RP_SCOPES = env.str("OIDC_RP_SCOPES", default="openid email profile")
OIDC_RP_SIGN_ALGO = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
OIDC_USE_PKCE = True
OIDC_TIMEOUT = env.float("OIDC_TIMEOUT_SECONDS", default=5.0)
# The sign-in button says "Sign in with <this>".
OIDC_PROVIDER_NAME = env.str("OIDC_PROVIDER_NAME", default="single sign-on")
# Claims: the console username (fixed at the first sign-in) and the list of groups.
OIDC_USERNAME_CLAIM = env.str("OIDC_USERNAME_CLAIM", default="preferred_username")
OIDC_GROUPS_CLAIM = env.str("OIDC_GROUPS_CLAIM", default="groups")
# Identity-provider groups that give each console role (console/roles.py), comma-separated;
# the highest role wins, and a sign-in with none of them is refused.
OIDC_ROLE_GROUPS = {
    role: env.list(f"OIDC_{role.upper()}_GROUPS", default=[])
    for role in ("viewer", "responder", "commander", "admin")
}
# A sign-in's session ends after this long, so roles are read again from the provider at
# least once a shift (a password login keeps Django's two-week session).
OIDC_SESSION_SECONDS = env.int("OIDC_SESSION_SECONDS", default=12 * 3600)
# The discovery document is cached this long (one fetch per process and issuer).
OIDC_DISCOVERY_CACHE_SECONDS = env.int("OIDC_DISCOVERY_CACHE_SECONDS", default=3600)
# Local passwords: on for everyone by default (embedded mode has no identity provider).
# With PASSWORD_LOGIN=0 only superusers (break-glass admins) may use one, and only while
# PASSWORD_LOGIN_BREAK_GLASS is on; the login page then offers single sign-on first.
PASSWORD_LOGIN = env.bool("PASSWORD_LOGIN", default=True)
PASSWORD_LOGIN_BREAK_GLASS = env.bool("PASSWORD_LOGIN_BREAK_GLASS", default=True)
if not (PASSWORD_LOGIN or PASSWORD_LOGIN_BREAK_GLASS or OIDC_ENABLED):
    raise ImproperlyConfigured(
        "Nobody could sign in: PASSWORD_LOGIN and PASSWORD_LOGIN_BREAK_GLASS are off and "
        "single sign-on is not configured (OIDC_ISSUER, OIDC_RP_CLIENT_ID, ...)."
    )
