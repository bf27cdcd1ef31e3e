"""`make run`: the whole loop on one machine with no server to install.

Migrates, loads the demo data, then supervises the processes: gunicorn (web), a Celery
worker with embedded beat for actions and the rest, a second one for outgoing
notifications (sharing the SQLite file in WAL mode and kombu's filesystem
broker under VAR_DIR), the vLLM fleet simulator (a test double for the cluster),
Prometheus and Alertmanager (the real programs, when installed). Ctrl-C stops them all;
if one dies, all stop, with every process they started (console/localstack/supervisor.py).
"""

import json
import os
import sys
from io import StringIO
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from console.localstack.monitoring import RULES_DIR, Ports, monitoring_commands
from console.localstack.records import simulator_url_record
from console.localstack.supervisor import Supervisor

BIN = Path(sys.executable).parent


# Listening on every address says nothing about the one people use: the console then
# takes it from their requests (notifications/links.py) rather than from a guess.
WILDCARD_HOSTS = {"0.0.0.0", "::", "[::]", ""}  # noqa: S104 (compared, never bound)


def console_url_env(host: str, port: int) -> dict[str, str]:
    """NOTIFY_CONSOLE_URL for the stack's processes: an operator's own value, else the
    address this stack serves on, so links in notifications carry its real port."""
    if settings.NOTIFY_CONSOLE_URL:
        return {"NOTIFY_CONSOLE_URL": settings.NOTIFY_CONSOLE_URL}
    if host in WILDCARD_HOSTS:
        return {}
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return {"NOTIFY_CONSOLE_URL": f"http://{shown}:{port}"}


class Command(BaseCommand):
    help = "Run web + worker + beat + notifier on embedded defaults (SQLite, filesystem broker)."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--no-demo", action="store_true", help="skip demo data")
        parser.add_argument(
            "--console-only", action="store_true", help="no simulator, Prometheus, Alertmanager"
        )

    def handle(self, *args, host: str, port: int, no_demo: bool, console_only: bool, **options):
        var = Path(settings.VAR_DIR)
        for sub in ("broker/queue", "broker/processed", "broker/control", "logs"):
            (var / sub).mkdir(parents=True, exist_ok=True)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        creds = None
        if not no_demo:
            out = StringIO()
            call_command("seed_demo", stdout=out)
            seeded = json.loads(out.getvalue())
            creds = f"{seeded['username']} / {seeded['password']}"
            approver = seeded.get("approver") or {}
            if approver:
                creds += (
                    f"\n  approver:   {approver['username']} / {approver['password']} "
                    "(a second person approves SEV1 and risky actions)"
                )
        ports = Ports(
            web=port,
            simulator=int(os.environ.get("SIMULATOR_PORT", "9400")),
            prometheus=int(os.environ.get("PROMETHEUS_PORT", "9090")),
            alertmanager=int(os.environ.get("ALERTMANAGER_PORT", "9093")),
        )
        kubeconfig = var / "simulator" / "kubeconfig"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PROMETHEUS_URL": f"http://127.0.0.1:{ports.prometheus}",
            "ALERTMANAGER_URL": f"http://127.0.0.1:{ports.alertmanager}",
            "KUBECONFIG": os.environ.get("KUBECONFIG", str(kubeconfig)),
            **console_url_env(host, port),
        }
        commands = self._console_commands(host, port, var)
        if not console_only:
            commands.update(self._loop_commands(var, ports, kubeconfig))
            # The simulator CLI reads it: `python -m simulator status` finds this stack.
            simulator_url_record(var, f"http://127.0.0.1:{ports.simulator}")
        supervisor = Supervisor(log=self.stderr.write)
        for name, cmd in commands.items():
            supervisor.start(name, cmd, env=env)
        self._banner(host, port, creds, ports if not console_only else None, commands)
        sys.exit(supervisor.run())

    def _loop_commands(self, var: Path, ports: Ports, kubeconfig: Path) -> dict[str, list[str]]:
        token_file = var / "alertmanager" / "console-token"
        token_file.parent.mkdir(parents=True, exist_ok=True)
        token_file.write_text(settings.ALERTMANAGER_TOKEN)
        token_file.chmod(0o600)
        sim = [
            sys.executable, "-m", "simulator", "serve", "--host", "127.0.0.1",
            "--port", str(ports.simulator), "--kubeconfig", str(kubeconfig),
            "--speed", os.environ.get("SIMULATOR_SPEED", "1"),
            "--startup-delay", os.environ.get("SIMULATOR_STARTUP_DELAY", "20"),
        ]  # fmt: skip
        # PROMETHEUS_RULES_DIR: tests use a copy of the rules with shorter windows.
        rules = Path(os.environ.get("PROMETHEUS_RULES_DIR", str(RULES_DIR)))
        monitoring = monitoring_commands(var, ports, token_file, rules)
        for missing in {"prometheus", "alertmanager"} - set(monitoring):
            self.stderr.write(
                f"{missing} is not installed, so alerts will not reach the console. "
                "Install it: sudo apt-get install prometheus prometheus-alertmanager"
            )
        return {"simulator": sim, **monitoring}

    def _console_commands(self, host, port, var) -> dict[str, list[str]]:
        # Production's settings (config.gunicorn_conf), with threads: SQLite takes one
        # writer at a time, so more processes would only queue on its lock.
        web = [
            str(BIN / "gunicorn"), "-c", "python:config.gunicorn_conf",
            "config.wsgi:application", "--bind", f"{host}:{port}",
            "--workers", "2", "--threads", "4", "--no-control-socket",
        ]  # fmt: skip
        worker = [
            str(BIN / "celery"), "-A", "config", "worker", "-Q", "default,actions",
            "--concurrency", "1", "--loglevel", "INFO", "--beat",
            "--schedule", str(var / "celerybeat-schedule"),
        ]  # fmt: skip
        # Deliveries wait on other people's servers: processes of their own, so slow
        # targets never hold the slot an action run needs. Its own node name (heartbeats
        # are per node), no beat (one is enough). One pool process: SQLite takes one
        # writer at a time anyway, and each process costs about 90 MB.
        notifier = [
            str(BIN / "celery"), "-A", "config", "worker", "-Q", "notifications",
            "-n", "notifications@%h", "--concurrency", "1", "--loglevel", "INFO",
        ]  # fmt: skip
        return {"web": web, "worker": worker, "notifier": notifier}

    def _banner(self, host, port, creds, ports: Ports | None, commands) -> None:
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
        if ports is not None:
            lines.append(
                f"  simulator: http://127.0.0.1:{ports.simulator}/ (a test double, not a cluster)"
            )
            for name, p in (("prometheus", ports.prometheus), ("alertmanager", ports.alertmanager)):
                state = f"http://127.0.0.1:{p}/" if name in commands else "NOT INSTALLED"
                lines.append(f"  {name}: {state}")
            lines.append("  try a failure: .venv/bin/python -m simulator inject ttft-spike")
        lines += ["  Ctrl-C stops everything.", ""]
        self.stdout.write("\n".join(lines))
        self.stdout.flush()
