"""What a running `make run` stack tells the tools beside it, as files under VAR_DIR:
`simulator/url`, the simulator's base URL, so `python -m simulator status` (which
imports nothing of the console) finds the stack on whatever SIMULATOR_PORT it was
started with."""

from pathlib import Path

SIMULATOR_URL_FILE = Path("simulator") / "url"


def simulator_url_record(var: Path, url: str) -> Path:
    path = var / SIMULATOR_URL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(url + "\n", encoding="utf-8")
    return path
