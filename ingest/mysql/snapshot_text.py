"""A snapshot chunk's SELECT read as the text MySQL sends (#27): pymysql without its decoders, so each
value stays the ``str`` (or ``bytes``) of the text protocol.

``formats.mysql_values.normalize`` turns pymysql's Python values (int, Decimal, datetime) back into
canal-json's text, which the chunk builder then converts to Arrow columns in C
(``schema_evolution.conversion``). For most column types that text is the server's own: an integer's
digits, a DECIMAL(p<=38)'s plain digits, a DATE, a DATETIME or a UTC session's TIMESTAMP (fewer
fractional digits than ``isoformat``, the same instant once parsed),
a DOUBLE's shortest digits (the same float), a character column's characters, a binary column's bytes
(under ``--type-mapping to-string``, whose ``as_text`` rewrites several of those, only integers, DATEs
and characters). Those columns are kept as sent: no Python
value is made per value. Every other column (TIME, YEAR, BIT, FLOAT, wide DECIMAL, ZEROFILL, a
TIMESTAMP shifted to server-time-zone, binaries as text, text in a binary character set) is decoded by
pymysql's own decoder for its field type and normalized as before, so every value ends as before.

Chunk rows are keyed by their primary-key values as pymysql decodes them, as before: the binlog's
changes between LW and HW (``ingest.mysql.snapshot.backfill``) find their rows by them. Each row is a
tuple in the SELECT's column order (the table's), which the chunk builder takes as it is: no dict or
event per row (``ChunkAssembler.add_inserts``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from formats import mysql_values

# a row: a dict by column name (read with pymysql's decoders), or a tuple in column order (read as text)
RowsByKey = dict[tuple[Any, ...], Any]

_INTEGERS = frozenset({"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT"})
_DECIMALS = frozenset({"DECIMAL", "NUMERIC", "FIXED", "DEC"})
# canal's text is the characters (a str from pymysql unless the column's character set is binary)
_CHARACTERS = frozenset({"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "JSON", "ENUM", "SET"})
_BINARIES = frozenset({"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"})
BINARY_CHARSET = 63


def _base(column_type: str) -> str:
    return column_type.strip().split("(")[0].split()[0].upper()


def kept_as_sent(column_type: str, binary_charset: bool, zone: dt.tzinfo, to_string: bool) -> bool:
    """Whether the text protocol's value of a column of ``column_type`` is already what normalizing
    pymysql's value would give (as canal text, or as the same value once converted to the column's
    Paimon type)."""
    if "zerofill" in column_type.lower():
        return False  # sent with leading zeros
    base = _base(column_type)
    if base in _INTEGERS or base == "DATE":
        return True
    if base in _CHARACTERS:
        return not binary_charset
    if to_string:
        return False  # ``as_text`` rewrites decimals, date-times, DOUBLEs (Python's repr) and binaries
    if base in _DECIMALS:
        return mysql_values.decimal_precision(column_type) <= 38  # wider ones lose their trailing zeros
    if base == "DATETIME" or (base == "TIMESTAMP" and zone is mysql_values.UTC):
        return True
    return base == "DOUBLE" or base == "REAL" or base in _BINARIES


class TextRows:
    """Turns a chunk's SELECT rows (text protocol values, in ``columns`` order) into the chunk's
    normalized rows by key."""

    def __init__(
        self,
        types: Mapping[str, str],
        columns: Sequence[str],
        keys: Sequence[str],
        field_types: Sequence[int],
        binary: Sequence[bool],
        decoders: Mapping[int, Callable[[Any], Any]],
        zone: dt.tzinfo,
        to_string: bool,
    ) -> None:
        self.columns = tuple(columns)
        from pymysql import converters

        decoders = {code: d for code, d in decoders.items() if d is not converters.through}
        self._fixes: list[tuple[int, Callable[[Any], Any]]] = []
        for i, name in enumerate(self.columns):
            column_type = types.get(name, "TEXT")
            if not kept_as_sent(column_type, binary[i], zone, to_string):
                self._fixes.append((i, _normalizer(column_type, decoders.get(field_types[i]), zone, to_string)))
        self._keys = [(self.columns.index(k), decoders.get(field_types[self.columns.index(k)])) for k in keys]

    def add(self, rows: RowsByKey, fetched: Iterable[Sequence[Any]]) -> None:
        fixes = self._fixes
        if len(self._keys) == 1:
            (at, decode), = self._keys  # fmt: skip
            for values in fetched:
                key = (values[at] if decode is None else decode(values[at]),)
                rows[key] = _fixed(values, fixes) if fixes else tuple(values)
            return
        keys = [(at, decode or _same) for at, decode in self._keys]
        for values in fetched:
            key = tuple(decode(values[at]) for at, decode in keys)
            rows[key] = _fixed(values, fixes) if fixes else tuple(values)


def read_text_rows(
    c: Any,
    cur: Any,
    sql: str,
    args: Sequence[Any],
    fetch_size: int | None,
    types: Mapping[str, str],
    columns: Sequence[str],
    keys: Sequence[str],
    zone: dt.tzinfo,
    to_string: bool,
) -> RowsByKey:
    """Runs the chunk's SELECT with pymysql's decoders off, and returns its rows by key, normalized
    (``TextRows``): in one buffered result whose rows are split by ``_text_row``, or (``fetch_size``)
    streamed through ``cur`` (an unbuffered cursor of connection ``c``)."""
    decoders, c.decoders = c.decoders, {}
    try:
        # (pymysql picks each column's decoder when the result's columns arrive)
        if fetch_size:
            cur.execute(sql, args)
            result = cur._result
        else:
            result = _buffered(c, cur.mogrify(sql, args))
    finally:
        c.decoders = decoders
    fields = result.fields
    text = TextRows(
        types,
        columns,
        keys,
        [f.type_code for f in fields],
        [f.charsetnr == BINARY_CHARSET for f in fields],
        decoders,
        zone,
        to_string,
    )
    rows: RowsByKey = {}
    if not fetch_size:
        text.add(rows, result.rows)
        return rows
    while fetched := cur.fetchmany(fetch_size):
        text.add(rows, fetched)
    return rows


def _buffered(c: Any, sql: str) -> Any:
    """pymysql's ``Connection.query`` (buffered) with a result whose rows are split by ``_text_row``:
    pymysql's own reader makes three method calls and a bounds check per value."""
    from pymysql.connections import MySQLResult
    from pymysql.constants import COMMAND

    class TextResult(MySQLResult):
        def _read_rowdata_packet(self) -> None:
            conn: Any = self.connection  # type: ignore[has-type]
            read_packet = conn._read_packet
            encodings = [encoding for encoding, _converter in self.converters]
            rows = []
            while True:
                packet = read_packet()
                data = packet._data
                # (an EOF packet starts with 0xFE, as may a row whose first value is 16 MiB or more)
                if data[0] == 0xFE and self._check_packet_is_eof(packet):
                    self.connection = None
                    break
                rows.append(_text_row(data, encodings))
            self.affected_rows = len(rows)
            self.rows = tuple(rows)

    c._execute_command(COMMAND.COM_QUERY, sql.encode(c.encoding))
    c._result = None
    result = TextResult(c)
    result.read()
    c._result = result
    if result.server_status is not None:
        c.server_status = result.server_status
    c._affected_rows = result.affected_rows
    return result


def _text_row(data: bytes, encodings: list[str | None]) -> tuple[Any, ...]:
    """A text-protocol row packet's values: each a length-encoded string (0xFB: NULL), decoded
    where its column has a text encoding, as ``MySQLResult._read_row_from_packet`` without decoders."""
    row: list[Any] = []
    pos, end = 0, len(data)
    for encoding in encodings:
        if pos >= end:
            break  # (pymysql: a row with fewer values than columns ends there)
        n = data[pos]
        pos += 1
        if n >= 0xFB:
            if n == 0xFB:
                row.append(None)
                continue
            width = 2 if n == 0xFC else 3 if n == 0xFD else 8
            n = int.from_bytes(data[pos : pos + width], "little")
            pos += width
        value = data[pos : pos + n]
        pos += n
        if pos > end:
            raise ValueError("a row packet shorter than its values' lengths")
        row.append(value if encoding is None else value.decode(encoding))
    return tuple(row)


def _same(value: Any) -> Any:
    return value


def _fixed(values: Sequence[Any], fixes: list[tuple[int, Callable[[Any], Any]]]) -> tuple[Any, ...]:
    out = list(values)
    for i, fix in fixes:
        value = out[i]
        if value is not None:
            out[i] = fix(value)
    return tuple(out)


def _normalizer(
    column_type: str, decode: Callable[[Any], Any] | None, zone: dt.tzinfo, to_string: bool
) -> Callable[[Any], Any]:
    """pymysql's decoder of the column's field type, then the column's normalizer (as ``RowNormalizer``)."""
    normalize = mysql_values.column_normalizer(column_type, zone, True)
    if to_string:
        inner = normalize

        def normalize(value: Any) -> Any:
            return mysql_values.as_text(inner(value), column_type)

    if decode is None:
        return normalize
    return lambda value: normalize(decode(value))
