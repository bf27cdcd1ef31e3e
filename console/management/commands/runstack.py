"""`make run`: the whole console on one machine with no server to install.

Migrates, loads the demo data, then supervises three real processes: gunicorn (web),
a Celery worker with embedded beat, both sharing the SQLite file (WAL) and kombu's
filesystem broker under VAR_DIR. Ctrl-C stops them all; if one dies, all stop.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

BIN = Path(sys.executable).parent


class Command(BaseCommand):
    help = "Run web + worker + beat on embedded defaults (SQLite, filesystem broker)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="skip demo data")

    def handle(self, *args, host: str, port: int, no_demo: bool, **options):
        var = Path(settings.VAR_DIR)
        for sub in ("broker/queue", "broker/processed", "broker/control", "logs"):
            (var / sub).mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        creds = None
        if not no_demo:
            from io import StringIO

            out = StringIO()
            call_command("seed_demo", stdout=out)
            seeded = json.loads(out.getvalue())
            creds = f"{seeded['username']} / {seeded['password']}"
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings"}
        children = self._start(env, host, port, var)
        self._banner(host, port, creds)
        self._supervise(children)

    def _start(self, env, host, port, var) -> dict[str, subprocess.Popen]:
        web = [
            str(BIN / "gunicorn"), "console.wsgi:application",
            "--bind", f"{host}:{port}", "--workers", "2", "--threads", "4",
            "--timeout", "30", "--access-logfile", "-", "--no-control-socket",
        ]  # fmt: skip
        worker = [
            str(BIN / "celery"), "-A", "console", "worker", "-Q", "default,actions",
            "--concurrency", "1", "--loglevel", "INFO", "--beat",
            "--schedule", str(var / "celerybeat-schedule"),
        ]  # fmt: skip
        children = {}
        for name, cmd in (("web", web), ("worker", worker)):
            # Own process group, so stopping one stops its children (gunicorn workers).
            children[name] = subprocess.Popen(cmd, env=env, start_new_session=True)  # noqa: S603
        return children

    def _banner(self, host, port, creds) -> None:
        lines = [
            "",
            f"  vLLM Incident Console: http://{host}:{port}/",
            f"  database: {settings.DATABASES['default']['NAME']}",
            f"  broker:   {settings.CELERY_BROKER_URL} ({settings.BROKER_DIR})",
            f"  webhook:  POST http://{host}:{port}/api/v1/alerts/alertmanager",
            f"            Authorization: Bearer {settings.ALERTMANAGER_TOKEN}",
        ]
        if creds:
            lines.append(f"  demo login: {creds}")
        lines += ["  Ctrl-C stops web and worker.", ""]
        self.stdout.write("\n".join(lines))
        self.stdout.flush()

    def _supervise(self, children: dict[str, subprocess.Popen]) -> None:
        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        code = 0
        while not stopping:
            for name, proc in children.items():
                if proc.poll() is not None:
                    self.stderr.write(f"{name} exited with {proc.returncode}; stopping.")
                    stopping, code = True, 1
                    break
            time.sleep(0.5)
        for proc in children.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for proc in children.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        sys.exit(code)
