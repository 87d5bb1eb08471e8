"""Where benchmark reports go: ``bench/results/<prefix><UTC time>.md``, and printed."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def code_version() -> str:
    """The commit the benchmark ran, with ``+ changes`` when lakecdc's tracked files differ from it
    (results/ excluded: earlier reports are written there); "unknown" outside a git checkout."""
    root = RESULTS.parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head} + changes" if changed else head


def write_report(lines: list[str], prefix: str = "") -> Path:
    """The report with a last line naming the commit and the machine it was measured on."""
    when = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
    footer = f"Measured at commit {code_version()} on {os.cpu_count()} cores, {when}."
    text = "\n".join([*lines, "", footer]) + "\n"
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{prefix}{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}.md"
    out.write_text(text)
    print(text)
    print(f"written to {out}")
    return out
