"""python -m simulator serve | inject <slug> [--variant V] | clear [slug] | reset | status

`serve` runs the simulator (a test double for a vLLM fleet on Kubernetes); the other
commands talk to a running one over HTTP. Which one: --url; else SIMULATOR_URL; else
SIMULATOR_PORT on 127.0.0.1; else the URL the running `make run` stack recorded in
VAR_DIR/simulator/url (VAR_DIR defaults to the checkout's var/); else
http://127.0.0.1:9400.
"""

import argparse
import contextlib
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

FALLBACK_URL = "http://127.0.0.1:9400"
# Where `make run` records its simulator's URL (console/localstack/records.py); the
# simulator imports no app, so the path is repeated here.
RECORD = Path("simulator") / "url"


def default_url(env: Mapping[str, str] | None = None) -> str:
    """The simulator the commands talk to when --url is not given (the module docstring
    says in which order)."""
    env = os.environ if env is None else env
    if env.get("SIMULATOR_URL"):
        return env["SIMULATOR_URL"]
    port = env.get("SIMULATOR_PORT", "").strip()
    if port:
        return f"http://127.0.0.1:{port}"
    var = Path(env.get("VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
    with contextlib.suppress(OSError, UnicodeDecodeError):
        recorded = (var / RECORD).read_text(encoding="utf-8").strip()
        if recorded.startswith(("http://", "https://")):
            return recorded
    return FALLBACK_URL


TIMEOUT = 10


def _call(url: str, method: str, path: str) -> dict:
    if not url.startswith(("http://", "https://")):
        sys.exit(f"--url must be http(s)://..., got {url!r}")
    body = b"" if method == "POST" else None
    req = urllib.request.Request(url.rstrip("/") + path, method=method, data=body)  # noqa: S310
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:  # noqa: S310
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        with contextlib.suppress(ValueError):
            detail = json.loads(detail).get("error", detail)
        sys.exit(f"simulator answered {exc.code}: {detail}")
    except (urllib.error.URLError, TimeoutError) as exc:
        sys.exit(f"no simulator at {url} ({exc}); start one with `python -m simulator serve`")


def _print_status(data: dict) -> None:
    active = data.get("active_scenarios") or data.get("active") or []
    names = [
        f"{a['slug']}{' (fixed)' if a.get('fixed') else ''}" if isinstance(a, dict) else str(a)
        for a in active
    ]
    print(f"active scenarios: {', '.join(names) if names else 'none'}")
    for key, value in data.items():
        if key in ("active_scenarios", "active", "scenarios", "variants"):
            continue
        print(f"{key}: {json.dumps(value, sort_keys=True)}")
    print(f"available: {', '.join(data.get('scenarios', []))}")
    for slug, variants in sorted((data.get("variants") or {}).items()):
        named = ", ".join(f"{v} (-> {branch})" for v, branch in variants.items())
        print(f"  {slug} --variant: {named}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m simulator", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the simulator")
    serve.add_argument("--host", default=os.environ.get("SIMULATOR_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("SIMULATOR_PORT", "9400")))
    serve.add_argument("--kubeconfig", type=Path, default=Path("var/simulator/kubeconfig"))
    serve.add_argument("--seed", type=int, default=0)
    serve.add_argument("--speed", type=float, default=1.0, help="simulated seconds per second")
    serve.add_argument("--startup-delay", type=float, default=20.0, help="new group start-up (s)")
    serve.add_argument("--advertise-url", help="URL for the kubeconfig (default: bind address)")
    for name, helptext in (("inject", "start a failure scenario"), ("clear", "stop scenarios")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("slug", nargs="?" if name == "clear" else None)
        p.add_argument("--url", default=None, help="default: see the module docstring")
        if name == "inject":
            p.add_argument("--variant", default="", help="another way the alert fires (status)")
    reset = sub.add_parser(
        "reset", help="back to the baseline: replicas, templates, labels, ConfigMaps, "
        "cordons and taints, counters; no scenario or API fault active"
    )  # fmt: skip
    reset.add_argument("--url", default=None, help="default: see the module docstring")
    status = sub.add_parser("status", help="fleet state and active scenarios")
    status.add_argument("--json", action="store_true")
    status.add_argument("--url", default=None, help="default: see the module docstring")
    args = parser.parse_args(argv)
    if getattr(args, "url", "") is None:
        args.url = default_url()

    if args.command == "serve":
        from simulator.server import serve as run

        run(host=args.host, port=args.port, kubeconfig=args.kubeconfig, seed=args.seed,
            speed=args.speed, startup_delay_s=args.startup_delay,
            advertise_url=args.advertise_url)  # fmt: skip
    elif args.command == "inject":
        query = f"?variant={urllib.parse.quote(args.variant)}" if args.variant else ""
        print(json.dumps(_call(args.url, "POST", f"/sim/inject/{args.slug}{query}")))
    elif args.command == "clear":
        path = f"/sim/clear/{args.slug}" if args.slug else "/sim/clear"
        print(json.dumps(_call(args.url, "POST", path)))
    elif args.command == "reset":
        print(json.dumps(_call(args.url, "POST", "/sim/reset")))
    else:
        data = _call(args.url, "GET", "/sim/status")
        if args.json:
            print(json.dumps(data, indent=2, sort_keys=True))
        else:
            _print_status(data)


if __name__ == "__main__":
    main()
