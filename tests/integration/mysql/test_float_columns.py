"""A FLOAT column holds the source's 32-bit value, from the snapshot and from the binlog alike: the
text protocol sends a FLOAT with six significant digits (1.23457 for a stored 1.2345678, another
float), so the snapshot reads FLOATs exactly (``column * 1e0``), the same double the binlog gives,
and both are written alike (``formats.mysql_values``). A FLOAT key's back-fill so finds its rows too."""

from __future__ import annotations

from pathlib import Path

from deploy.local_mariadb import LocalMariaDB
from ingest.job import run
from tests.integration.mysql.conftest import chunked_snapshot_settings
from tests.paimon_read import read_pypaimon, read_rust

# (six digits would be another float for all but the last two)
VALUES = [1.2345678, 123456.789, 16777217.0, 3.4e38, -1.17549435e-38, 0.1, 2.5]


def _source(mariadb: LocalMariaDB, database: str) -> list[tuple[int, float | None, float | None]]:
    c = mariadb.connect(database)
    with c.cursor() as cur:
        cur.execute("SELECT id, f * 1e0, k * 1e0 FROM t ORDER BY id")  # the stored floats, exactly
        rows = [tuple(r) for r in cur.fetchall()]
    c.close()
    return rows


def _paimon(warehouse: str) -> list[tuple[int, float | None, float | None]]:
    rows = read_rust(warehouse, "ods.t")
    assert rows == read_pypaimon(warehouse, "ods.t")
    return sorted((r["id"], r["f"], r["k"]) for r in rows)


def test_float_values_are_the_sources_from_the_snapshot_and_the_binlog(
    mariadb: LocalMariaDB, warehouse: str, tmp_path: Path
) -> None:
    database = "float_values"
    mariadb.execute(
        f"CREATE DATABASE {database}",
        f"CREATE TABLE {database}.t (id INT NOT NULL, k FLOAT NOT NULL, f FLOAT, n INT, PRIMARY KEY (id, k))",
        f"INSERT INTO {database}.t VALUES "
        + ", ".join(f"({i}, {v!r}, {v!r}, 0)" for i, v in enumerate(VALUES))
        + f", ({len(VALUES)}, 7.25, NULL, 0)",
    )
    settings = chunked_snapshot_settings(mariadb, warehouse, tmp_path / "checkpoint", database, 3)
    run(settings)
    source = _source(mariadb, database)
    assert [r[1] for r in source[:3]] != [float(f"{v:.6g}") for v in VALUES[:3]]  # (the case is really there)
    assert _paimon(warehouse) == source
    # the same rows changed in the binlog: the FLOAT values stay the same floats, no row gains a twin
    mariadb.execute(f"UPDATE {database}.t SET n = n + 1", f"UPDATE {database}.t SET f = f * 2 WHERE id < 3")
    run(settings)
    assert _paimon(warehouse) == _source(mariadb, database)
