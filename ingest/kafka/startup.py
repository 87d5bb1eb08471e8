"""Where a new Kafka job starts reading: ``--kafka-conf scan.startup.mode``, Paimon's names (the one
list; settings validate against it, the source plans by it)."""

from __future__ import annotations

import enum


class StartupMode(enum.StrEnum):
    EARLIEST_OFFSET = "earliest-offset"
    LATEST_OFFSET = "latest-offset"
    GROUP_OFFSETS = "group-offsets"
    TIMESTAMP = "timestamp"
    SPECIFIC_OFFSETS = "specific-offsets"


STARTUP_MODES = tuple(mode.value for mode in StartupMode)
