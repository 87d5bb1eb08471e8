"""A failover to a replica (#23 item 4): the job's checkpoint holds, beside each binlog position, the
server it is one of and the GTID set of the transactions before it. Pointed at a replica (another
server, other binlog files and positions), the job goes on after the same transactions: every
change once, none lost. A replica that has not yet applied what the job read stops the job until it
has caught up.

Both servers keep MariaDB's default row metadata (NO_LOG), so the schema history beside the
checkpoint names the row values: it is carried over to the replica's positions, with an ALTER before
the failover and one after it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_rust

pytestmark = pytest.mark.timeout(900)

ARGS = ["--binlog-row-metadata=NO_LOG"]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalMariaDB, LocalMariaDB]]:
    primary = LocalMariaDB(str(tmp_path_factory.mktemp("primary")), extra_args=ARGS)
    replica = None
    try:
        replica = LocalMariaDB(
            str(tmp_path_factory.mktemp("replica")), extra_args=[*ARGS, "--server-id=2", "--log-slave-updates=ON"]
        )
        # Other binlog file names and positions than the primary's.
        replica.execute("FLUSH BINARY LOGS", "FLUSH BINARY LOGS")
        replica.execute(
            f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, MASTER_USER='root', "
            f"MASTER_PASSWORD='{ROOT_PASSWORD}', MASTER_USE_GTID=slave_pos",
            "START SLAVE",
        )
        yield primary, replica
    finally:
        if replica is not None:
            replica.close()
        primary.close()


def _one(server: LocalMariaDB, sql: str) -> Any:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return cur.fetchone()
    finally:
        conn.close()


def _caught_up(primary: LocalMariaDB, replica: LocalMariaDB) -> None:
    position = _one(primary, "SELECT @@gtid_binlog_pos")[0]
    assert _one(replica, f"SELECT MASTER_GTID_WAIT('{position}', 120)")[0] == 0, "the replica did not catch up"


def _settings(server: LocalMariaDB, warehouse: Path) -> SyncSettings:
    return SyncSettings(
        action="mysql-sync-table",
        warehouse=str(warehouse),
        database="ods",
        table="t",
        mysql_conf=server.mysql_conf(**{"database-name": "fo", "table-name": "t"}),
        available_now=True,
        checkpoint=f"{warehouse}/ck",
    )


def _source(server: LocalMariaDB) -> list[dict[str, Any]]:
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM fo.t ORDER BY id")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()


def _table(warehouse: Path) -> list[dict[str, Any]]:
    return sorted(read_rust(str(warehouse), "ods.t"), key=lambda r: r["id"])


def test_a_failover_to_a_replica_goes_on_by_gtid_set(
    spark: Any, servers: tuple[LocalMariaDB, LocalMariaDB], tmp_path: Path
) -> None:
    primary, replica = servers
    primary.execute(
        "CREATE DATABASE fo",
        "CREATE TABLE fo.t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO fo.t VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 51)),
    )
    _caught_up(primary, replica)
    run(_settings(primary, tmp_path))  # the snapshot, from the primary
    assert _table(tmp_path) == _source(primary)

    # The replica stops applying: what the job reads next from the primary, it lacks for a while.
    replica.execute("STOP SLAVE")
    primary.execute(
        "INSERT INTO fo.t VALUES " + ", ".join(f"({i}, {i})" for i in range(51, 81)),
        "UPDATE fo.t SET v = v + 1000 WHERE id <= 10",
        "DELETE FROM fo.t WHERE id BETWEEN 41 AND 45",
        "ALTER TABLE fo.t ADD COLUMN w INT",
        "UPDATE fo.t SET w = id WHERE id > 70",
    )
    run(_settings(primary, tmp_path))  # the binlog, from the primary
    assert _table(tmp_path) == _source(primary)
    checkpoint_offset = _last_offset(tmp_path / "ck")
    assert checkpoint_offset["gtids"] and checkpoint_offset["server"] == "server_id 1"

    # Changes after the job stopped: the job reads them from the replica only.
    primary.execute(
        "INSERT INTO fo.t VALUES " + ", ".join(f"({i}, {i}, {-i})" for i in range(81, 121)),
        "UPDATE fo.t SET v = v + 1 WHERE id BETWEEN 5 AND 15",
        "DELETE FROM fo.t WHERE id BETWEEN 20 AND 30",
        "UPDATE fo.t SET id = id + 1000 WHERE id IN (46, 47)",  # a key change
        "ALTER TABLE fo.t ADD COLUMN x VARCHAR(10) AFTER v",
        "UPDATE fo.t SET x = CONCAT('x', id) WHERE id BETWEEN 60 AND 90",
    )
    # The replica has not applied what the job already read there: the job waits for it (stops).
    with pytest.raises(JobFailed, match=r"caught up") as behind:
        run(_settings(replica, tmp_path))
    assert "server_id 1" in str(behind.value) and "server_id 2" in str(behind.value)

    replica.execute("START SLAVE")
    _caught_up(primary, replica)
    assert _source(replica) == _source(primary)
    run(_settings(replica, tmp_path))  # the failover: same checkpoint, the replica's host and port
    assert _table(tmp_path) == _source(replica)
    failover = json.loads((tmp_path / "ck" / "lakecdc-mysql-failover.json").read_text())
    assert failover["from"]["server"] == "server_id 1" and failover["to"]["server"] == "server_id 2"

    # The replica promoted: its own writes go on from the replica's positions.
    replica.execute(
        "STOP SLAVE",
        "INSERT INTO fo.t (id, v, x, w) VALUES (500, 5, 'five', 55)",
        "DELETE FROM fo.t WHERE id BETWEEN 50 AND 55",
        "UPDATE fo.t SET v = -v WHERE id > 100",
    )
    run(_settings(replica, tmp_path))
    assert _table(tmp_path) == _source(replica)
    assert _last_offset(tmp_path / "ck")["server"] == "server_id 2"


def _last_offset(checkpoint: Path) -> dict[str, Any]:
    offsets = checkpoint / "spark" / "offsets"
    last = max((p for p in offsets.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    offset: dict[str, Any] = json.loads(last.read_text().splitlines()[-1])
    return offset
