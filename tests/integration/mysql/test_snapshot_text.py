"""A snapshot chunk's SELECT read as the server's text (#27, ``ingest.mysql.snapshot_text``) gives the
very chunk rows the decoded read gives (pymysql's Python values, normalized): every MySQL column type,
NULLs, zero dates, TIME durations, ZEROFILL, BIT, YEAR, FLOAT/DOUBLE, decimals of every width, binary
columns and text in a binary character set, under the default type mapping, ``to-string`` and others,
in UTC and in other server time zones; and the rows' keys are the decoded keys the back-fill uses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from deploy.local_mariadb import ROOT_PASSWORD, LocalMariaDB
from formats import mysql_values
from ingest.mysql.client import MySqlConnection
from ingest.mysql.snapshot import _read_chunk_rows, read_chunk
from ingest.mysql.spec import Chunk, ChunkPartition, MySqlSourceSpec
from ingest.pipeline.parse_spec import ParseSpec
from ingest.pipeline.routing import TableRouter
from sinks.write.chunk_format import deserialize_batch

COLUMNS = """
    id BIGINT UNSIGNED PRIMARY KEY, ti TINYINT, flag TINYINT(1), si SMALLINT UNSIGNED, mi MEDIUMINT,
    i INT ZEROFILL, u BIGINT UNSIGNED, d0 DECIMAL(10, 0), d2 DECIMAL(12, 2), d38 DECIMAL(38, 10),
    d65 DECIMAL(65, 30), f FLOAT, db DOUBLE, v VARCHAR(20), c CHAR(3), txt TEXT, lt LONGTEXT,
    bv VARCHAR(8) CHARACTER SET binary, bin BINARY(4), vb VARBINARY(8), bl BLOB, bits BIT(10), b1 BIT(1),
    dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts TIMESTAMP NULL, ts3 TIMESTAMP(3) NULL, day DATE,
    tm TIME, yr YEAR, j JSON, e ENUM('red', 'green'), s SET('a', 'b', 'c'), emoji VARCHAR(10)
"""

ROWS = [
    "(1, -128, 1, 65535, -8388608, 42, 18446744073709551615, 12345, -0.50, 1234567890.0123456789,"
    " 12345678901234567890123456789012345.123456789012345678901234567890, 1.1, 0.1, 'hello', 'abc', 'long',"
    " 'longer', x'00ff', x'01', x'00ff10', x'deadbeef', b'1010101010', b'1', '2024-02-29 23:59:59',"
    " '2024-02-29 23:59:59.120', '0001-01-01 00:00:00.000001', '2024-01-01 10:00:00', '2038-01-19 03:14:07.999',"
    " '2024-02-29', '12:34:56', 2024, '{\"k\": [1, 2.50]}', 'green', 'a,c', '😀é')",
    "(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.000000000000000000000000000001, -0.0, -1.7976931348623157e308, '', '', '',"
    " '', '', x'', x'', x'', b'0', b'0', '0000-00-00 00:00:00', '2024-05-01 12:00:00.000', '0000-00-00 00:00:00',"
    " '1970-01-01 00:00:01', '2024-05-01 12:00:00.5', '0000-00-00', '00:00:00', 0, '[]', 'red', '', 'x')",
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(4, 127, 1, 1, 1, 1, 9223372036854775808, -9999999999, 9999999999.99, -0.0000000001, 1.5, 3.4e38,"
    " 2.2250738585072014e-308, 'a''b\\\\c', 'x  ', 'tab\\tnew\\nline', '', x'ff', x'00', x'00', x'00',"
    " b'1111111111', b'1', '1000-01-01 00:00:00', '9999-12-31 23:59:59.999', '2024-02-29 12:00:00.1',"
    " '2024-06-30 23:00:00', '2024-03-10 02:30:00.001', '0099-12-31', '23:59:59', 1901, 'null', '', 'a,b,c', 'ß')",
]
# outside what Paimon's TIME holds: read as text only (to-string)
DURATIONS = ["(5, '-838:59:59')", "(6, '838:59:59.000000')", "(7, '-00:00:01')", "(8, '100:00:00')"]


@pytest.fixture(scope="module")
def source(mariadb: LocalMariaDB) -> Iterator[str]:
    mariadb.execute(
        "CREATE DATABASE IF NOT EXISTS text_read",
        f"CREATE TABLE text_read.t ({COLUMNS})",
        "CREATE TABLE text_read.durations (id INT PRIMARY KEY, tm TIME(6))",
        # zero dates are allowed (sql_mode without NO_ZERO_DATE)
        "SET SESSION sql_mode = ''",
        f"INSERT INTO text_read.t VALUES {', '.join(ROWS)}",
        f"INSERT INTO text_read.durations VALUES {', '.join(DURATIONS)}",
    )
    yield "text_read"


def _spec(mariadb: LocalMariaDB, table: str, zone: str, type_mapping: str, **parse_spec: Any) -> MySqlSourceSpec:
    conn = MySqlConnection("127.0.0.1", mariadb.port, "root", ROOT_PASSWORD, 10)
    parse = ParseSpec("mysql", TableRouter("ods"), type_mapping=type_mapping, **parse_spec)
    return MySqlSourceSpec(conn, "text_read", table, "initial", parse, "/tmp", server_time_zone=zone)


def _chunk_rows(spec: MySqlSourceSpec, table: str, as_text: bool, chunk: Chunk | None = None) -> list[Any]:
    part = ChunkPartition(0, chunk or Chunk("text_read", table, None, None))
    out = []
    for batch in read_chunk(spec, part, as_text):
        for row in batch.to_pylist():
            data = deserialize_batch(row.pop("data")).to_pylist() if row["data"] is not None else None
            out.append((row, data))
    return out


@pytest.mark.parametrize("zone", ["UTC", "+02:00", "America/New_York"])
@pytest.mark.parametrize("type_mapping", ["", "to-string", "tinyint1-not-bool,char-to-string,longtext-to-bytes"])
def test_text_read_gives_the_decoded_reads_chunk_rows(
    mariadb: LocalMariaDB, source: str, zone: str, type_mapping: str
) -> None:
    spec = _spec(mariadb, "t", zone, type_mapping)
    text = _chunk_rows(spec, "t", True)
    assert text == _chunk_rows(spec, "t", False)
    assert sum(len(data or []) for _row, data in text) == len(ROWS)


def test_text_read_with_computed_and_metadata_columns_in_small_chunks(mariadb: LocalMariaDB, source: str) -> None:
    # the text read hands the builder tuples, no event per row: its computed and metadata columns
    # and its chunks cut every 3 rows must still be the decoded read's
    extra = {
        "chunk_rows": 3,
        "computed_columns": ("y=year(dt3)", "v_up=upper(v)"),
        "metadata_columns": ("database_name", "table_name", "op_ts"),
        "metadata_not_null": True,
    }
    spec = _spec(mariadb, "t", "+02:00", "", **extra)
    text = _chunk_rows(spec, "t", True)
    assert text == _chunk_rows(spec, "t", False)
    data = [r for _row, chunk in text for r in chunk or []]
    assert len(data) == len(ROWS) and max(len(chunk or []) for _row, chunk in text) == 3
    assert {(r["database_name"], r["table_name"]) for r in data} == {("text_read", "t")}
    assert sorted((r["id"], r["y"], r["v_up"]) for r in data)[0] == (1, 2024, "HELLO")


def test_durations_as_text_are_the_decoded_ones(mariadb: LocalMariaDB, source: str) -> None:
    spec = _spec(mariadb, "durations", "UTC", "to-string")
    text = _chunk_rows(spec, "durations", True)
    assert text == _chunk_rows(spec, "durations", False)
    values = [r["tm"] for _row, data in text for r in data or []]
    assert len(values) == len(DURATIONS) and None not in values


def test_a_ranged_chunk_is_keyed_by_the_decoded_key(mariadb: LocalMariaDB, source: str) -> None:
    spec = _spec(mariadb, "t", "UTC", "")
    chunk = Chunk("text_read", "t", 2, 4)
    rows, types, *_ = _read_chunk_rows(spec, ChunkPartition(0, chunk), (mysql_values.UTC, False))
    assert list(rows) == [(2,), (3,)]
    # the values as sent, in the table's column order, the key as pymysql decodes it
    row = dict(zip(types, rows[(2,)], strict=True))
    assert row["id"] == "2" and row["dt3"] == "2024-05-01 12:00:00.000"
    decoded, *_ = _read_chunk_rows(spec, ChunkPartition(0, chunk))
    assert list(decoded) == list(rows)
    assert _chunk_rows(spec, "t", True, chunk) == _chunk_rows(spec, "t", False, chunk)
