"""python -m tests.oidc_provider --port N --dir DIR --redirect-uri URI --client-id ID
    --client-secret SECRET --control-token TOKEN

Generates an RSA signing key (cryptography), migrates a fresh SQLite database in DIR,
registers the console as a confidential client (authorization code + PKCE, RS256, no
consent page) and serves the provider on 127.0.0.1:N until killed. The issuer is
http://127.0.0.1:N/o.
"""

import argparse
import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa


def _write_key(path: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.write_bytes(pem)
    path.chmod(0o600)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.oidc_provider")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--redirect-uri", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--control-token", required=True)
    args = parser.parse_args()

    args.dir.mkdir(parents=True, exist_ok=True)
    _write_key(args.dir / "key.pem")  # before settings are read: they load it
    os.environ.update(
        DJANGO_SETTINGS_MODULE="tests.oidc_provider.settings",
        OIDC_PROVIDER_DIR=str(args.dir),
        OIDC_PROVIDER_ISSUER=f"http://127.0.0.1:{args.port}/o",
        OIDC_PROVIDER_CONTROL_TOKEN=args.control_token,
    )

    import django
    from django.core.management import call_command

    django.setup()
    from oauth2_provider.models import Application

    call_command("migrate", verbosity=0, interactive=False)
    Application.objects.create(
        name="incident console",
        client_id=args.client_id,
        client_secret=args.client_secret,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=args.redirect_uri,
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    call_command(
        "runserver",
        f"127.0.0.1:{args.port}",
        use_reloader=False,
        use_threading=True,
        skip_checks=True,
    )


if __name__ == "__main__":
    main()
