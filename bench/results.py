"""Where benchmark reports go: ``bench/results/<prefix><UTC time>.md``, and printed."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def write_report(lines: list[str], prefix: str = "") -> Path:
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{prefix}{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}.md"
    out.write_text(text)
    print(text)
    print(f"written to {out}")
    return out
