"""Captures the rows events of ``rows-events.json`` from a private MariaDB (``python
tests/data/mysql-binlog/capture.py``): each event's table-map columns, its row bytes, and the values
mysql-replication decodes from them. ``tests/formats/test_mysql_row_image.py`` checks that
``formats.mysql_row_image`` gives the same values for the same bytes."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from deploy.local_mariadb import LocalMariaDB  # noqa: E402
from ingest.mysql.binlog_rows import binlog_columns  # noqa: E402
from ingest.mysql.key_bounds import encode_bound  # noqa: E402

COLUMNS = """id INT PRIMARY KEY, t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, su SMALLINT UNSIGNED,
m MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, b BIGINT, bu BIGINT UNSIGNED, flag TINYINT(1),
f FLOAT, d DOUBLE, dec1 DECIMAL(12,2), dec2 DECIMAL(38,10), dec3 DECIMAL(5,0), dec4 DECIMAL(10,9),
dec5 DECIMAL(65,30), c CHAR(10), v VARCHAR(300), vl VARCHAR(20) CHARACTER SET latin1, vb VARBINARY(20),
bn BINARY(4), tx TEXT, bl BLOB, mt MEDIUMTEXT, lt LONGTEXT, dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6),
dt1 DATETIME(1), ts0 TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts5 TIMESTAMP(5) NULL, tm TIME, tm1 TIME(1),
tm4 TIME(4), tm6 TIME(6), dd DATE, y YEAR, e ENUM('a', 'b', 'ü'), e2 ENUM({enum300}), st SET('x', 'y', 'z'),
st9 SET('s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9'), b1 BIT(1), b12 BIT(12), b64 BIT(64)""".format(
    enum300=", ".join(f"'v{i}'" for i in range(300))
)

ROWS = [
    # id, ints (signed/unsigned pairs), flag, float, double, decimals, strings, binaries, texts, datetimes,
    # timestamps, times, date, year
    "(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808,"
    " 18446744073709551615, 1, -1.5, 2.718281828459045, -1234567890.12, -1234567890123456789012345678.0123456789,"
    " -99999, -0.000000001, -12345678901234567890123456789012345.123456789012345678901234567891,"
    " 'abc', REPEAT('x', 300), 'caf\xe9', X'00FF10', X'01020304', 'text', X'DEADBEEF', 'medium', 'long',"
    " '1000-01-01 00:00:00', '2024-02-29 23:59:59.999', '9999-12-31 23:59:59.999999', '2020-01-01 00:00:00.5',"
    " '1970-01-01 00:00:01', '2038-01-19 03:14:07.99', '2001-02-03 04:05:06.12345', '-838:59:59', '-00:00:00.1',"
    " '-12:34:56.7891', '838:59:59.000000', '1000-01-01', 1901, 'ü', 'v299', 'x,z', 's1,s9', b'1', b'101010101010',"
    " 18446744073709551615)",
    "(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, 0, 3.25, -0.0,"
    " 9999999999.99, 0.0000000001, 0, 9.999999999, 0.000000000000000000000000000001, '', '', '', X'', X'00000000',"
    " '', X'', '', '', '9999-12-31 23:59:59', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00.000001',"
    " '2000-01-01 00:00:00.1', '2038-01-19 03:14:07', '1970-01-01 00:00:01.01', '1970-01-01 00:00:01.00001',"
    " '838:59:59', '00:00:00.9', '00:00:00.0001', '-838:59:59.000000', '9999-12-31', 2155, 'a', 'v0', '', '',"
    " b'0', b'000000000001', 0)",
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(4, 0, 1, -1, 1, -1, 1, -1, 1, -1, 1, NULL, 1e30, 1e-300, 0.01, -0.5, 1, -1.5, -1, 'ü漢字🙂', '日本語テキスト',"
    " NULL, X'FF', NULL, '🙂🙂', NULL, NULL, NULL, '0000-00-00 00:00:00', '2024-06-01 12:00:00', NULL, NULL,"
    " NULL, '2024-06-01 12:00:00.5', NULL, '00:00:00', '-00:00:01.5', '01:02:03.0004', '-00:00:00.000001',"
    " '0000-00-00', 0, '', 'v1', 'y', 's8', b'1', b'100000000000', 1)",
    "(5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 0.1, 0.1, 123.4, 123456789.987654321, 12345, 0.123456789,"
    " 123456789012345678901234567890123.45, 'a b', 'tab\\there', 'x', X'61', X'6162', REPEAT('t', 700),"
    " REPEAT(X'AB', 300), REPEAT('m', 700), 'l', '2024-02-30 00:00:00', '1999-12-31 23:59:59.5', NULL, NULL,"
    " '2024-01-01 00:00:00', NULL, NULL, '-01:00:00', NULL, NULL, NULL, '2024-00-00', 1999, 'b', NULL, 'x,y,z',"
    " 's2,s3,s4,s5,s6,s7', NULL, NULL, 9223372036854775808)",
]


def _encode(value: Any) -> Any:
    """A value as JSON: key_bounds' tags (bytes, dates, decimals, times), and floats and sets."""
    if isinstance(value, float):
        return {"float": value.hex()}
    if isinstance(value, set):
        return {"set": sorted(value)}
    encoded = encode_bound(value)
    if encoded is value and not (value is None or isinstance(value, str | int)):
        raise TypeError(f"{value!r}: no encoding")
    return encoded


def main() -> None:
    from pymysqlreplication import BinLogStreamReader
    from pymysqlreplication.row_event import UpdateRowsEvent

    db = LocalMariaDB()
    try:
        db.execute("CREATE DATABASE cap")
        db.execute("SET GLOBAL sql_mode = ''")
        conn = db.connect("cap")
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_mode = ''")
            cur.execute("SET time_zone = '+00:00'")
            cur.execute(f"CREATE TABLE types_all ({COLUMNS}) DEFAULT CHARSET=utf8mb4")
            for row in ROWS:
                cur.execute(f"INSERT INTO types_all VALUES {row}")
            cur.execute(f"INSERT INTO types_all VALUES {', '.join(r.replace('(', '(1', 1) for r in ROWS)}")
            cur.execute(
                "UPDATE types_all SET t = -t, v = CONCAT(v, '+'), dec1 = -dec1, tm6 = '-01:01:01.000001', e = 'a',"
                " st = 'y', b12 = b'111'"
            )
            cur.execute("DELETE FROM types_all WHERE id IN (2, 14)")
        conn.close()
        conf = db.mysql_conf()
        stream = BinLogStreamReader(
            connection_settings={
                "host": conf["hostname"],
                "port": int(conf["port"]),
                "user": conf["username"],
                "passwd": conf["password"],
            },
            server_id=77,
            blocking=False,
            resume_stream=False,
            only_schemas=["cap"],
        )
        events = []
        for event in stream:
            if not hasattr(event, "columns_present_bitmap"):
                continue
            packet = event.packet
            # the bytes ahead, left where they are (mysql-replication puts bytes back while decoding)
            raw = packet.packet
            body = bytes(raw._data[raw._position : raw._position + event.event_size - packet.read_bytes])
            images = 2 if isinstance(event, UpdateRowsEvent) else 1
            keys = ("before_values", "after_values") if images == 2 else ("values",)
            rows = [[{k: _encode(v) for k, v in row[key].items()} for key in keys] for row in event.rows]
            columns = binlog_columns(event.columns)
            assert columns is not None
            events.append(
                {
                    "kind": type(event).__name__,
                    "images": images,
                    "columns": [asdict(c) for c in columns],
                    "body": body.hex(),
                    "rows": rows,
                }
            )
        stream.close()
    finally:
        db.stop()
    out = Path(__file__).with_name("rows-events.json")
    out.write_text(json.dumps({"server": "MariaDB (deploy.local_mariadb)", "events": events}, indent=1) + "\n")
    print(f"{len(events)} events -> {out}")


if __name__ == "__main__":
    main()
