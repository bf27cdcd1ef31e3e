"""Fixtures for the sign-in tests: the test identity provider as its own process, and the
console's settings pointing at it. A test module imports them:
`from tests.oidc_provider.fixtures import idp_fixture, sso_fixture  # noqa: F401`, and
its tests ask for `idp` (the provider) or `sso` (the provider and the console set up)."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.helpers import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "incident-console"
CALLBACK = "/oidc/callback/"
# Group names as a company's directory would have them; the console maps them to roles.
ROLE_GROUPS = {
    "viewer": ["staff"],
    "responder": ["sre-oncall"],
    "commander": ["sre-leads"],
    "admin": ["console-admins"],
}


class RunningProvider:
    """The running provider: its issuer, and the control calls (control.py)."""

    def __init__(self, *, port: int, client_secret: str, control_token: str, log: Path):
        self.port = port
        self.issuer = f"http://127.0.0.1:{port}/o"
        self.client_secret = client_secret
        self.control_token = control_token
        self.log_path = log

    def _control(self, what: str, body: dict) -> dict:
        response = requests.post(
            f"http://127.0.0.1:{self.port}/control/{what}",
            json=body,
            headers={"X-Control-Token": self.control_token, "Connection": "close"},
            timeout=10,
        )
        assert response.ok, response.text
        return response.json()

    def user(self, username: str, *, groups: list[str]) -> str:
        """Create or update a provider account (password "idp-<username>"); its groups
        become exactly `groups`. Returns its subject (sub)."""
        body = {"username": username, "password": self.password(username), "groups": groups}
        return self._control("user", body)["sub"]

    @staticmethod
    def password(username: str) -> str:
        return f"idp-{username}"

    def tamper(self, mode: str) -> None:
        """ "audience" or "signature": the next ID tokens are bad that way; "" ends it."""
        self._control("tamper", {"mode": mode})

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _start(folder: Path, redirect_uri: str) -> tuple[subprocess.Popen, RunningProvider] | None:
    """Start the provider on a free port; None if that port was taken meanwhile."""
    port = free_port()
    provider = RunningProvider(
        port=port,
        client_secret=secrets.token_urlsafe(24),
        control_token=secrets.token_urlsafe(24),
        log=folder / f"provider-{port}.log",
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    with open(provider.log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.oidc_provider", "--port", str(port),
             "--dir", str(folder / str(port)), "--redirect-uri", redirect_uri,
             # "=": a random token may start with "-", which argparse takes for a flag.
             "--client-id", CLIENT_ID, f"--client-secret={provider.client_secret}",
             f"--control-token={provider.control_token}"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def state() -> str | None:
        if proc.poll() is not None:
            return "exited"
        try:
            url = provider.issuer + "/.well-known/openid-configuration"
            return "up" if requests.get(url, timeout=2).ok else None
        except requests.RequestException:
            return None  # not listening yet

    if wait_for(state, timeout=90, what="the test identity provider to start") == "up":
        return proc, provider
    if "already in use" in provider.log():
        return None
    raise AssertionError(f"the test identity provider exited:\n{provider.log()[-3000:]}")


@pytest.fixture(scope="module", name="idp")
def idp_fixture(live_server, tmp_path_factory):
    """The provider, registered with the live server's callback as redirect URI."""
    folder = tmp_path_factory.mktemp("oidc-provider")
    for _ in range(3):  # another process may take the free port before the provider binds it
        if started := _start(folder, live_server.url + CALLBACK):
            break
    else:
        raise AssertionError("the test identity provider found no free port in 3 tries")
    proc, provider = started
    try:
        yield provider
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        print(provider.log()[-4000:])  # shown only when a test fails


@pytest.fixture(name="sso")
def sso_fixture(idp, settings):
    """The console configured for the provider, as the README's environment would."""
    settings.OIDC_ENABLED = True
    settings.OIDC_ISSUER = idp.issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = idp.client_secret
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.OIDC_PROVIDER_NAME = "the test provider"
    settings.OIDC_ROLE_GROUPS = ROLE_GROUPS
    idp.tamper("")
    return idp
