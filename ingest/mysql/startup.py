"""Where a new MySQL job starts reading: ``--mysql-conf scan.startup.mode``, Paimon's names (the one
list; settings validate against it, the source plans by it)."""

from __future__ import annotations

import enum


class StartupMode(enum.StrEnum):
    INITIAL = "initial"  # a snapshot, then the binlog from where the snapshot started (the default)
    EARLIEST_OFFSET = "earliest-offset"
    LATEST_OFFSET = "latest-offset"
    SPECIFIC_OFFSET = "specific-offset"
    TIMESTAMP = "timestamp"
    SNAPSHOT = "snapshot"  # the snapshot only: the binlog is never read (a bounded run)


STARTUP_MODES = tuple(mode.value for mode in StartupMode)
SNAPSHOT_MODES = (StartupMode.INITIAL, StartupMode.SNAPSHOT)  # the modes that read a snapshot first

# lakecdc's own (Debezium's snapshot.mode=when_needed): when the checkpoint's binlog position is gone
# (purged, RESET MASTER, another server without a GTID way back), re-snapshot the captured tables
# instead of stopping (``ingest.mysql.resnapshot``). Off by default.
RESNAPSHOT_OPTION = "scan.snapshot.when-needed"
