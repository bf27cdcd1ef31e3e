"""Start the embedded run as a user does (`make run`: SQLite, filesystem broker, a real
worker, the simulator, Prometheus and Alertmanager), every port free; and stop it with
everything it started. Used by the `make_run` fixture (per test) and the drill suite
(one stack per module)."""

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers import free_port, http_session, wait_for

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def login(base: str, user: str, password: str):
    s = http_session()
    s.get(base + "/login/", timeout=5)
    r = s.post(
        base + "/login/",
        data={"username": user, "password": password,
              "csrfmiddlewaretoken": s.cookies["csrftoken"]},
        headers={"Referer": base + "/login/"}, timeout=5,
    )  # fmt: skip
    assert r.ok, r.text[:500]
    assert "sessionid" in s.cookies, "login failed"
    return s


def start_run(
    tmp_path: Path, procs: list, extra_env: dict | None = None, *, console_only: bool = False
) -> dict:
    """Start one stack under `tmp_path`; its process goes into `procs` for stop_runs."""
    import requests

    ports = {n: free_port() for n in ("web", "sim", "prom", "am")}
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DATABASE_URL", "CELERY_"))}  # fmt: skip
    for name in ("DJANGO_SETTINGS_MODULE", "ALERTMANAGER_TOKEN", "SECRET_KEY", "KUBECONFIG"):
        env.pop(name, None)
    env.update(
        VAR_DIR=str(tmp_path / "var"), PORT=str(ports["web"]),
        SIMULATOR_PORT=str(ports["sim"]), PROMETHEUS_PORT=str(ports["prom"]),
        ALERTMANAGER_PORT=str(ports["am"]), **(extra_env or {}),
    )  # fmt: skip
    log = open(tmp_path / "run.log", "w+")  # noqa: SIM115
    args = ["make", "run", f"PORT={ports['web']}"]
    if console_only:
        args = [str(BIN / "python"), "manage.py", "runstack", "--console-only",
                "--port", str(ports["web"])]  # fmt: skip
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    procs.append((proc, log))
    base = f"http://127.0.0.1:{ports['web']}"

    def ready():
        if proc.poll() is not None:
            log.seek(0)
            raise AssertionError(f"the run exited:\n{log.read()[-4000:]}")
        return requests.get(base + "/readyz", timeout=2).ok

    wait_for(ready, timeout=120, what="the run to answer /readyz")

    def banner() -> str | None:
        # Read by path: the run shares `log`'s file offset, so seeking it could race with
        # the run's own writes; and the banner may land a moment after /readyz answers.
        text = (tmp_path / "run.log").read_text(errors="replace")
        return text if re.search(r"Authorization: Bearer \S+[\s\S]*demo login:", text) else None

    text = wait_for(banner, timeout=30, what="the run's banner (token and logins)")
    token = re.search(r"Authorization: Bearer (\S+)", text).group(1)
    user, password = re.search(r"demo login: (\S+) / (\S+)", text).groups()
    approver = re.search(r"approver:\s+(\S+) / (\S+)", text)
    return {
        "base": base, "token": token, "user": user, "password": password,
        "var": tmp_path / "var", "log": tmp_path / "run.log",
        "sim_url": f"http://127.0.0.1:{ports['sim']}",
        "prom_url": f"http://127.0.0.1:{ports['prom']}",
        "am_url": f"http://127.0.0.1:{ports['am']}",
        "login": lambda: login(base, user, password),
        "login_approver": lambda: login(base, *approver.groups()),
        "env": env,
    }  # fmt: skip


def manage(stack: dict, *args: str, env: dict | None = None) -> str:
    """Run `manage.py <args>` against the stack's own database (its environment, VAR_DIR);
    its output. For a test that sets up what the stack's demo data lacks."""
    out = subprocess.run(
        [str(BIN / "python"), "manage.py", *args], cwd=ROOT, env={**stack["env"], **(env or {})},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout


def stop_runs(procs: list) -> None:
    for proc, log in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
