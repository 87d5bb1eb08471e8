"""A progress bar on a terminal (``--progress``): the per-batch events of ``ingest.streaming.progress``
drawn as bars instead of log lines.

- a MySQL snapshot: one bar per table, chunks read of those planned, with the rows read;
- Kafka: changes applied of changes applied plus the current lag, so an ``--available-now`` run fills
  its bar as it drains the topics (a running job's bar stays full while it keeps up);
- the MySQL binlog phase: how many seconds the lake is behind the server.

``auto`` (the default) draws the bar only when stderr is a terminal and logs are not JSON; elsewhere
(files, pipes, a cluster's driver log) the job logs one ``micro-batch progress`` line per batch.
Log lines written while the bar is shown appear above it (rich redirects stderr while it is live).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from typing import Any, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

ProgressMode = Literal["auto", "bar", "log"]


def wants_bar(mode: ProgressMode, stream: Any = None) -> bool:
    """Whether ``--progress mode`` draws a bar on ``stream`` (stderr by default)."""
    if mode != "auto":
        return mode == "bar"
    stream = sys.stderr if stream is None else stream
    json_logs = os.environ.get("LAKECDC_LOG_FORMAT", "").lower() == "json"
    return not json_logs and bool(getattr(stream, "isatty", lambda: False)())


class ProgressBar:
    """Bars for a job's events (``update`` takes a ``micro-batch progress`` event)."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            redirect_stderr=console is None,
            redirect_stdout=False,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._applied = 0  # Kafka changes applied by this run
        self._started = False

    def start(self) -> None:
        if not self._started:
            self._progress.start()
            self._started = True

    def close(self) -> None:
        if self._started:
            self._progress.stop()
            self._started = False

    def text(self, width: int = 140) -> str:
        """The bars as they are now, as plain text."""
        out = Console(width=width, color_system=None, force_terminal=False, file=io.StringIO())
        out.print(self._progress.get_renderable())
        return out.file.getvalue()  # type: ignore[attr-defined]

    def _task(self, key: str, description: str) -> TaskID:
        if key not in self._tasks:
            self._tasks[key] = self._progress.add_task(description, total=None, detail="")
        return self._tasks[key]

    def update(self, event: Mapping[str, Any]) -> None:
        self.start()
        for table, chunks in (event.get("snapshot") or {}).items():
            task = self._task(f"snapshot {table}", f"snapshot {table}")
            estimate = f" of ~{chunks['rows_estimated']:,}" if "rows_estimated" in chunks else ""
            self._progress.update(
                task,
                completed=chunks["chunks_done"],
                total=chunks["chunks_total"],
                detail=f"chunks, {chunks['rows_done']:,}{estimate} rows",
            )
        if "kafka_lag_total" in event:
            self._applied += sum((event.get("events") or {}).values())
            lag = int(event["kafka_lag_total"])
            task = self._task("kafka", "kafka changes")
            partitions = sum(len(parts) for parts in event.get("kafka_lag", {}).values())
            self._progress.update(
                task,
                completed=self._applied,
                total=self._applied + lag,
                detail=f"lag {lag:,} over {partitions} partition(s), batch {event.get('batch')}",
            )
        if "binlog_seconds_behind" in event:
            task = self._task("binlog", "binlog")
            applied = sum((event.get("events") or {}).values())
            self._applied += applied
            self._progress.update(
                task,
                completed=self._applied,
                total=None,
                detail=f"{event['binlog_seconds_behind']:.1f} s behind, batch {event.get('batch')}",
            )
