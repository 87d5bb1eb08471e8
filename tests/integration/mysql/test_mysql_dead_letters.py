"""MySQL rows that cannot be converted (#24, dead letters), against a real MariaDB server: a TIME beyond
Paimon's 00:00..24:00 in the snapshot and in the binlog. With --errors-tolerance all each goes to the
dead-letter table (snapshot: 'snapshot', chunk, row; binlog: file, 0, position), the other rows to their
table; the default stops at the binlog row naming its file:position, and --skip-offsets file:position
moves past it on the same checkpoint."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from deploy.local_mariadb import LocalMariaDB
from ingest.cli.settings import SyncSettings
from ingest.job import JobFailed, run
from tests.paimon_read import read_pypaimon, read_rust


def _settings(mariadb: LocalMariaDB, warehouse: str, database: str, **extra: Any) -> SyncSettings:
    conf = mariadb.mysql_conf(**{"database-name": database, "table-name": "t"})
    return SyncSettings(
        action="mysql-sync-table", warehouse=warehouse, database="ods", table="t", mysql_conf=conf,
        available_now=True, **extra,
    )  # fmt: skip


def _ids(warehouse: str, table: str) -> list[int]:
    rows = read_rust(warehouse, table)
    assert rows == read_pypaimon(warehouse, table)
    return [r["id"] for r in rows]


def test_unconvertible_rows_are_dead_lettered_and_a_binlog_row_can_be_skipped(
    spark: Any, mariadb: LocalMariaDB, warehouse: str
) -> None:
    mariadb.execute("CREATE DATABASE dl_src")
    mariadb.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, tm TIME, v VARCHAR(20))",
        "INSERT INTO t VALUES " + ", ".join(f"({i}, '{100 if i == 7 else 10}:00:00', 'v{i}')" for i in range(1, 21)),
        database="dl_src",
    )  # fmt: skip
    tolerant = {"errors_tolerance": "all", "dead_letter_table": "ods.dlq"}

    # the snapshot: row 7 is a dead letter, the others are synced
    result = run(_settings(mariadb, warehouse, "dl_src", **tolerant))
    assert result.stats.dead_letters == 1
    assert _ids(warehouse, "ods.t") == [i for i in range(1, 21) if i != 7]
    (snapshot_letter,) = read_rust(warehouse, "ods.dlq")
    assert (snapshot_letter["topic"], snapshot_letter["source_table"]) == ("snapshot", "dl_src.t")
    assert snapshot_letter["error_class"] == "MalformedMessage" and "'tm'" in snapshot_letter["error_message"]
    (change,) = orjson.loads(snapshot_letter["value"])
    assert change["after"]["id"] == 7 and snapshot_letter["key"] is None

    # the binlog: row 22 is a dead letter named by its binlog file and position
    mariadb.execute(
        "INSERT INTO t VALUES (21, '11:00:00', 'v21')", "INSERT INTO t VALUES (22, '200:00:00', 'v22')",
        "UPDATE t SET v = 'w1' WHERE id = 1", database="dl_src",
    )  # fmt: skip
    assert run(_settings(mariadb, warehouse, "dl_src", **tolerant)).stats.dead_letters == 1
    assert _ids(warehouse, "ods.t") == [i for i in range(1, 22) if i != 7]
    letters = {d["topic"]: d for d in read_rust(warehouse, "ods.dlq")}
    assert len(letters) == 2
    (binlog_letter,) = [d for t, d in letters.items() if t != "snapshot"]
    assert binlog_letter["partition"] == 0 and binlog_letter["offset"] > 0
    (change,) = orjson.loads(binlog_letter["value"])
    assert (change["op"], change["after"]["id"], change["table"]) == ("INSERT", 22, "dl_src.t")

    # the default stops at a bad binlog row naming its position; --skip-offsets moves past it
    mariadb.execute("INSERT INTO t VALUES (23, '300:00:00', 'v23')", "INSERT INTO t VALUES (24, '12:00:00', 'v24')",
                    database="dl_src")  # fmt: skip
    with pytest.raises(JobFailed) as info:
        run(_settings(mariadb, warehouse, "dl_src"))
    message = str(info.value)
    found = re.search(r"at binlog position (\S+):(\d+): .*--skip-offsets (\S+):(\d+) ", message)
    assert found is not None, message
    assert (found.group(3), found.group(4)) == (found.group(1), found.group(2))
    result = run(_settings(mariadb, warehouse, "dl_src", skip_offsets=(f"{found.group(1)}:{found.group(2)}",)))
    assert result.stats.dead_letters == 0  # without a dead-letter table the skip is only logged
    assert _ids(warehouse, "ods.t") == [i for i in range(1, 25) if i not in (7, 22, 23)]
