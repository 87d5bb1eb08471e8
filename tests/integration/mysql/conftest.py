"""Fixtures of the MySQL server tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings


@pytest.fixture(scope="module")
def nolog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    """A private MariaDB per test module whose row events do not name their columns (NO_LOG, MariaDB's
    default), so the job keeps its schema history beside the checkpoint."""
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("nolog")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield bare
    finally:
        bare.close()


def chunked_snapshot_settings(
    mariadb: LocalMariaDB, warehouse: str, checkpoint: Path, database: str, chunk: int
) -> SyncSettings:
    """mysql-sync-table of ``database``.t into ods.t, --available-now, in snapshot chunks of ``chunk`` rows
    and two chunks per micro-batch (the snapshot takes a while: writers meet chunks read and unread),
    with the input changelog the tests replay."""
    conf = mariadb.mysql_conf(
        **{"database-name": database, "table-name": "t", "scan.incremental.snapshot.chunk.size": str(chunk)}
    )
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=warehouse,
        database="ods",
        table="t",
        mysql_conf=conf,
        checkpoint=str(checkpoint),
        table_conf={"changelog-producer": "input"},
        available_now=True,
        max_offsets_per_trigger=2 * chunk,
    )
