"""Peak memory of a process tree (driver, its JVM and Python workers), sampled from /proc.

Two sums are kept: resident set size (RSS), which counts a page shared by forked Python workers
once in every process that maps it, and proportional set size (PSS), which splits each shared page
between the processes that share it — the tree's real footprint."""

from __future__ import annotations

import os
import threading
from pathlib import Path


def _stats() -> dict[int, list[str]]:
    """Every process's /proc/<pid>/stat fields after the command name (ppid first)."""
    out: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            out[int(entry.name)] = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1:]
        except OSError:
            continue
    return out


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for pid, fields in _stats().items():
        tree.setdefault(int(fields[0]), []).append(pid)
    return tree


def tree_memory_bytes(root: int) -> tuple[int, int]:
    """(RSS, PSS) of ``root`` and all its descendants, summed."""
    tree = _children()
    rss = pss = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
        except OSError:
            continue
        stack.extend(tree.get(pid, []))
    return rss, pss


class PeakRss:
    """Samples the RSS of ``pid``'s process tree every ``interval`` seconds until stopped."""

    def __init__(self, pid: int | None = None, interval: float = 0.2) -> None:
        self.pid = pid or os.getpid()
        self.interval = interval
        self.peak = 0  # RSS
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, pss = tree_memory_bytes(self.pid)
            self.peak = max(self.peak, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class ExecutorCpu:
    """CPU seconds used by Python processes whose ancestor is a Spark executor JVM
    (``CoarseGrainedExecutorBackend``), sampled until stopped: proof that tasks ran on executors."""

    def __init__(self, interval: float = 0.3) -> None:
        self.interval = interval
        self._cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    @property
    def seconds(self) -> float:
        return sum(self._cpu.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            stats = _stats()
            parents = {pid: int(f[0]) for pid, f in stats.items()}
            cpu = {pid: (int(f[10]) + int(f[11])) / self._tick for pid, f in stats.items()}
            cmd: dict[int, str] = {}
            for pid in stats:
                try:
                    cmd[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()[:4096].decode(errors="replace")
                except OSError:
                    continue
            for pid, seconds in cpu.items():
                if "python" not in cmd.get(pid, ""):
                    continue
                ancestor = parents.get(pid, 0)
                while ancestor > 1:
                    if "CoarseGrainedExecutorBackend" in cmd.get(ancestor, ""):
                        self._cpu[pid] = max(self._cpu.get(pid, 0.0), seconds)
                        break
                    ancestor = parents.get(ancestor, 0)
            self._stop.wait(self.interval)

    def __enter__(self) -> ExecutorCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
