"""The cyclic garbage collector paused around hot parse loops."""

from __future__ import annotations

import gc


class GcPaused:
    """Keep the cyclic garbage collector out of the hot parse loop: parsed messages are short-lived
    acyclic dicts, and full collections over hundreds of thousands of them cost more than parsing
    (shared/DESIGN.md). Collection resumes, and runs once, on exit."""

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()
