"""Where a new Kafka job starts reading: ``--kafka-conf scan.startup.mode``, Paimon's names (the one
list; settings validate against it, the source plans by it)."""

from __future__ import annotations

import enum
import re


class StartupMode(enum.StrEnum):
    EARLIEST_OFFSET = "earliest-offset"
    LATEST_OFFSET = "latest-offset"
    GROUP_OFFSETS = "group-offsets"
    TIMESTAMP = "timestamp"
    SPECIFIC_OFFSETS = "specific-offsets"


STARTUP_MODES = tuple(mode.value for mode in StartupMode)

SPECIFIC_OFFSETS_FORMAT = "partition:0,offset:42;partition:1,offset:300"


def parse_specific_offsets(text: str) -> dict[int, int]:
    """Flink's ``partition:0,offset:42;partition:1,offset:300``; ``ValueError`` with Paimon's text."""
    out: dict[int, int] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        m = re.fullmatch(r"partition:(\d+),offset:(\d+)", part.replace(" ", ""))
        if m is None:
            break
        out[int(m.group(1))] = int(m.group(2))
    else:
        if out:
            return out
    raise ValueError(
        f"Invalid properties 'scan.startup.specific-offsets' should follow the format '{SPECIFIC_OFFSETS_FORMAT}', "
        f"but is '{text}'."
    )
