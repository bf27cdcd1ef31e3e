"""What every settings module shares: the project root, the environment (and a .env
file beside manage.py, which never overrides a variable already set), whether this is
embedded mode (no DATABASE_URL: the single-machine `make run` demo on SQLite), VAR_DIR
(the embedded database, broker, secrets and collected static files) and the secrets
embedded mode makes for itself there."""

import os
import secrets
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

EMBEDDED = not os.environ.get("DATABASE_URL")

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var"))).resolve()


def local_secret(name: str) -> str:
    """A random secret kept in VAR_DIR (0600), made on first use. Embedded mode only:
    production must pass secrets in the environment."""
    path = VAR_DIR / name
    if not path.exists():
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32))
    return path.read_text().strip()
