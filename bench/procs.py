"""Peak resident memory of a process tree (driver, its JVM and Python workers), sampled from /proc."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def tree_rss_bytes(root: int) -> int:
    tree = _children()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
        stack.extend(tree.get(pid, []))
    return total


class PeakRss:
    """Samples the RSS of ``pid``'s process tree every ``interval`` seconds until stopped."""

    def __init__(self, pid: int | None = None, interval: float = 0.2) -> None:
        self.pid = pid or os.getpid()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
