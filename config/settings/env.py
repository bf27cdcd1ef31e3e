"""What every settings module shares: the project root, the environment (and a .env
file beside manage.py, which never overrides a variable already set), and whether this is
embedded mode (no DATABASE_URL: the single-machine `make run` demo on SQLite)."""

import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

EMBEDDED = not os.environ.get("DATABASE_URL")
