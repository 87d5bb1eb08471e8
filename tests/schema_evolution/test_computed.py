"""Computed columns: parsing and start-up validation, result types, columnar evaluation.

Expected values cross-checked with Paimon's ComputedColumnUtilsTest and TruncateComputerTest.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from schema_evolution import types as t
from schema_evolution.arrow_types import to_arrow
from schema_evolution.computed import ComputedColumn
from schema_evolution.computed_specs import parse_computed_columns
from schema_evolution.payloads import previews
from schema_evolution.types import PaimonType


def column(spec: str) -> ComputedColumn:
    [col] = parse_computed_columns([spec])
    return col


def run(spec: str, values: list[Any], typ: PaimonType | None, now_ms: int | pa.Array = 0) -> list[Any]:
    col = column(spec)
    array = None if typ is None else pa.array(values, to_arrow(typ))
    out = col.evaluate(array, typ, len(values), now_ms)
    assert out.type == to_arrow(col.result_type(typ))
    assert len(out) == len(values)
    return out.to_pylist()


def startup_error(*specs: str) -> str:
    with pytest.raises(ValueError) as info:
        parse_computed_columns(list(specs))
    return str(info.value)


# 2023-03-23 14:30:05.123456789 UTC
EPOCH_S = 1679581805
TS = dt.datetime(2023, 3, 23, 14, 30, 5, 123456)
FIELDS = {"year": 2023, "month": 3, "day": 23, "hour": 14, "minute": 30, "second": 5}
MIDNIGHT = {"year": 2023, "month": 3, "day": 23, "hour": 0, "minute": 0, "second": 0}

# (input type, extra precision argument, source value, expected fields)
TEMPORAL_INPUTS = [
    pytest.param(t.date(), "", dt.date(2023, 3, 23), MIDNIGHT, id="date"),
    pytest.param(t.timestamp(0), "", TS.replace(microsecond=0), FIELDS, id="timestamp0"),
    pytest.param(t.timestamp(3), "", TS.replace(microsecond=123000), FIELDS, id="timestamp3"),
    pytest.param(t.timestamp(6), "", TS, FIELDS, id="timestamp6"),
    pytest.param(t.timestamp(9), "", TS, FIELDS, id="timestamp9"),
    pytest.param(t.timestamp_ltz(3), "", TS.replace(tzinfo=dt.UTC), FIELDS, id="timestamp_ltz-at-utc"),
    pytest.param(t.bigint(), "", EPOCH_S, FIELDS, id="bigint-default-seconds"),
    pytest.param(t.int_(), "", EPOCH_S, FIELDS, id="int-seconds"),
    pytest.param(t.bigint(), ", 0", EPOCH_S, FIELDS, id="bigint-seconds"),
    pytest.param(t.bigint(), ", 3", EPOCH_S * 1000 + 123, FIELDS, id="bigint-millis"),
    pytest.param(t.bigint(), ", 6", EPOCH_S * 10**6 + 123456, FIELDS, id="bigint-micros"),
    pytest.param(t.bigint(), ", 9", EPOCH_S * 10**9 + 123456789, FIELDS, id="bigint-nanos"),
    pytest.param(t.string(), "", "2023-03-23 14:30:05.123456789", FIELDS, id="string-timestamp"),
    pytest.param(t.string(), "", "2023-03-23T14:30:05", FIELDS, id="string-iso-t"),
    pytest.param(t.string(), "", "2023-03-23", MIDNIGHT, id="string-date"),
    pytest.param(t.string(), "", " 2023-3-23 14:30:5.1 ", FIELDS, id="string-single-digit-fields"),
    pytest.param(t.varchar(20), ", 3", str(EPOCH_S * 1000), FIELDS, id="string-epoch-millis"),
]


@pytest.mark.parametrize("function", list(FIELDS))
@pytest.mark.parametrize(("typ", "precision", "value", "expected"), TEMPORAL_INPUTS)
def test_temporal_fields(function: str, typ: PaimonType, precision: str, value: Any, expected: dict[str, int]) -> None:
    col = column(f"c={function}(src{precision})")
    assert col.result_type(typ) == t.int_()
    assert run(f"c={function}(src{precision})", [value, None], typ) == [expected[function], None]


@pytest.mark.parametrize(("typ", "precision", "value", "expected"), TEMPORAL_INPUTS)
def test_date_format_of_every_temporal_input(typ: PaimonType, precision: str, value: Any, expected: Any) -> None:
    want = "{year}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}".format(**expected)
    assert run(f"c=date_format(src, yyyy-MM-dd HH:mm:ss{precision})", [value, None], typ) == [want, None]


def test_pre_epoch_numbers_as_paimon() -> None:
    # ComputedColumnUtilsTest.testTemporalFunctionsOnPreEpochNumericValues
    micros = "c=date_format(ts,yyyy-MM-dd HH:mm:ss.SSSSSS,6)"
    nanos = "c=date_format(ts,yyyy-MM-dd HH:mm:ss.SSSSSSSSS,9)"
    assert run(micros, [-1, -1500, -1000, 1500], t.bigint()) == [
        "1969-12-31 23:59:59.999999",
        "1969-12-31 23:59:59.998500",
        "1969-12-31 23:59:59.999000",
        "1970-01-01 00:00:00.001500",
    ]
    assert run(nanos, [-1, -1500001, 1500001], t.bigint()) == [
        "1969-12-31 23:59:59.999999999",
        "1969-12-31 23:59:59.998499999",
        "1970-01-01 00:00:00.001500001",
    ]
    assert run("c=year(ts,6)", [-1], t.bigint()) == [1969]
    assert run("c=second(ts,9)", [-1], t.bigint()) == [59]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyy-MM-dd", "2024-12-30"),  # ComputedColumnUtilsTest: not the week year of YYYY
        ("yyyyMMdd", "20241230"),
        ("yyyy-MM-dd HH:mm:ss", "2024-12-30 07:05:09"),
        ("yy/M/d H:m:s", "24/12/30 7:5:9"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2024-12-30T07:05:09.012"),
        ("SSSSSS|S|n", "012345|0|12345678"),
        ("D DDD", "365 365"),
        ("EEE EEEE MMM MMMM", "Mon Monday Dec December"),
        ("h a K k", "7 AM 7 7"),
        ("'o''clock' HH", "o'clock 07"),
        ("''", "'"),
    ],
)
def test_date_format_patterns(pattern: str, expected: str) -> None:
    value = dt.datetime(2024, 12, 30, 7, 5, 9, 12345)  # + 678 ns below
    array = pa.array([value], pa.timestamp("ns"))
    array = pa.array([array[0].value + 678], pa.timestamp("ns"))
    col = column(f'c=date_format(ts, "{pattern}")')
    assert col.evaluate(array, t.timestamp(9), 1, 0).to_pylist() == [expected]


def test_date_format_twelve_hour_clock() -> None:
    values = [dt.datetime(2024, 1, 1, h) for h in (0, 12, 23)]
    assert run("c=date_format(ts, hh a|K|k)", values, t.timestamp(0)) == ["12 AM|0|24", "12 PM|0|12", "11 PM|11|23"]


def test_date_format_of_literals_only_keeps_nulls() -> None:
    assert run("c=date_format(ts, \"'fixed'\")", [dt.date(2024, 1, 1), None], t.date()) == ["fixed", None]


def test_date_format_with_a_comma_needs_quotes() -> None:
    assert run('c=date_format(ts, "yyyy, MM")', [dt.date(2024, 1, 1)], t.date()) == ["2024, 01"]


def test_unparseable_text_stops_with_the_value() -> None:
    col = column("c=year(s)")
    with pytest.raises(ValueError, match=r"value a string of 4 characters of column 's' is not a date"):
        col.evaluate(pa.array(["2024-01-01", "soon"]), t.string(), 2, 0)
    with (
        previews(True),
        pytest.raises(ValueError, match=r"computed column 'c' \(year\(s\)\): value 'soon' of column 's' is not a date"),
    ):
        col.evaluate(pa.array(["2024-01-01", "soon"]), t.string(), 2, 0)
    col = column("c=year(s, 3)")
    with previews(True), pytest.raises(ValueError, match="value '12x' of column 's' is not an epoch number"):
        col.evaluate(pa.array(["1", None, "12x"]), t.string(), 3, 0)


# -- substring, upper, lower, trim ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "values", "typ", "expected"),
    [
        pytest.param("c=substring(s, 1)", ["abc", "", None], t.string(), ["bc", "", None], id="to-end"),
        pytest.param("c=substring(s, 1, 3)", ["abcdef", "ab", "a"], t.string(), ["bc", "b", ""], id="clamped"),
        pytest.param("c=substring(s, 0, 2)", ["über"], t.string(), ["üb"], id="characters-not-bytes"),
        pytest.param("c=substring(y, 0, 2)", [2023, None], t.int_(), ["20", None], id="int-as-paimon"),
        pytest.param("c=substring(d, 0, 7)", [dt.date(2023, 3, 23)], t.date(), ["2023-03"], id="date"),
        pytest.param("c=substring(n, 0, 4)", [Decimal("12.30")], t.decimal(5, 2), ["12.3"], id="decimal"),
        pytest.param("c=upper(s)", ["abc", None], t.string(), ["ABC", None], id="upper"),
        pytest.param("c=lower(s)", ["AbC"], t.char(3), ["abc"], id="lower-char"),
        pytest.param("c=trim(s)", ["\t a b \n\x00", None], t.varchar(10), ["a b", None], id="trim-java"),
        pytest.param("c=trim(s)", ["\u3000x\u3000"], t.string(), ["\u3000x\u3000"], id="trim-keeps-unicode-space"),
    ],
)
def test_string_functions(spec: str, values: list[Any], typ: PaimonType, expected: list[Any]) -> None:
    assert column(spec).result_type(typ) == t.string()
    assert run(spec, values, typ) == expected


# -- truncate -------------------------------------------------------------------------------------

# TruncateComputerTest's table: (value, width, expected) for every integer type
INT_CASES = [(0, 0), (1, 0), (5, 0), (9, 0), (10, 10), (11, 10), (15, 10), (-1, -10), (-5, -10)]
INT_CASES += [(-9, -10), (-10, -10), (-11, -20)]


@pytest.mark.parametrize("typ", [t.tinyint(), t.smallint(), t.int_(), t.bigint()], ids=str)
def test_truncate_integers(typ: PaimonType) -> None:
    values = [v for v, _ in INT_CASES] + [None]
    assert run("c=truncate(n, 10)", values, typ) == [e for _, e in INT_CASES] + [None]
    assert column("c=truncate(n, 10)").result_type(typ) == typ


def test_truncate_bigint_extremes() -> None:
    big = 2**63 - 1
    assert run("c=truncate(n, 1000)", [big], t.bigint()) == [big - big % 1000]
    with pytest.raises(ValueError, match=r"computed column 'c' \(truncate\(n, 10\)\): cannot evaluate"):
        run("c=truncate(n, 10)", [-(2**63)], t.bigint())
    with pytest.raises(ValueError, match="cannot evaluate"):
        run("c=truncate(n, 10)", [-128], t.tinyint())  # -130 does not fit a TINYINT (nor in Paimon)


def test_truncate_decimal() -> None:
    values = ["12.34", "12.30", "12.29", "0.05", "-0.05", None]
    decimals = [None if v is None else Decimal(v) for v in values]
    out = run("c=truncate(n, 10)", decimals, t.decimal(9, 2))
    assert [None if v is None else str(v) for v in out] == ["12.30", "12.30", "12.20", "0.00", "-0.10", None]


def test_truncate_strings_and_the_short_string_trap() -> None:
    typ = t.varchar(7)
    assert run("c=truncate(s, 3)", ["abcde", "abcdefg", None], typ) == ["abc", "abc", None]
    assert run("c=truncate(s, 7)", ["abcdefg"], t.char(7)) == ["abcdefg"]
    # Paimon throws "Invalid width value ... expected less than or equal to 5"; we keep the value
    assert run("c=truncate(s, 7)", ["abcde", ""], t.char(5)) == ["abcde", ""]
    assert column("c=truncate(s, 3)").result_type(typ) == typ


# -- cast and now ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "typ", "expected"),
    [
        ("c=cast(hello)", t.string(), "hello"),
        ("c=cast(hello, STRING)", t.string(), "hello"),
        ("c=cast(' padded ', STRING)", t.string(), " padded "),
        ("c=cast(42, INT)", t.int_(), 42),
        ("c=cast(12.5, DECIMAL(10, 2))", t.decimal(10, 2), Decimal("12.50")),
        ("c=cast(2024-01-02, DATE)", t.date(), dt.date(2024, 1, 2)),
        ("c=cast(true, BOOLEAN)", t.boolean(), True),
        ('c=cast("a,b", VARCHAR(3))', t.varchar(3), "a,b"),
    ],
)
def test_cast_is_a_constant(spec: str, typ: PaimonType, expected: Any) -> None:
    col = column(spec)
    assert col.source is None
    assert col.result_type(None) == typ
    assert run(spec, [None, None, None], None) == [expected] * 3


def test_now_is_the_callers_time() -> None:
    col = column("c=now()")
    assert col.source is None
    assert col.result_type(None) == t.timestamp(3)
    at = 1_700_000_000_123
    first = col.evaluate(None, None, 2, at)
    assert first.to_pylist() == [dt.datetime(2023, 11, 14, 22, 13, 20, 123000)] * 2
    assert col.evaluate(None, None, 2, at).equals(first)  # a replay writes the same values
    per_row = col.evaluate(None, None, 2, pa.array([0, at], pa.int64()))
    assert per_row.to_pylist() == [dt.datetime(1970, 1, 1), dt.datetime(2023, 11, 14, 22, 13, 20, 123000)]


# -- result types and type errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "typ", "expected"),
    [
        ("c=year(x)", t.timestamp_ltz(6), t.int_()),
        ("c=second(x, 9)", t.bigint(), t.int_()),
        ("c=date_format(x, yyyy)", t.date(), t.string()),
        ("c=substring(x, 1)", t.boolean(), t.string()),
        ("c=truncate(x, 2)", t.decimal(10, 3), t.decimal(10, 3)),
        ("c=truncate(x, 2)", t.bigint().with_nullable(False), t.bigint().with_nullable(False)),
        ("c=upper(x)", t.char(4), t.string()),
    ],
)
def test_result_types(spec: str, typ: PaimonType, expected: PaimonType) -> None:
    assert column(spec).result_type(typ) == expected


@pytest.mark.parametrize(
    ("spec", "typ", "message"),
    [
        ("c=year(flag)", t.boolean(), "year() cannot take column 'flag' of type BOOLEAN"),
        ("c=date_format(t, HH)", t.time(3), "date_format() cannot take column 't' of type TIME(3)"),
        ("c=year(ts, 3)", t.timestamp(3), "column 'ts' is TIMESTAMP(3): the precision argument only applies"),
        ("c=truncate(x, 2)", t.double(), "truncate() cannot take column 'x' of type DOUBLE"),
        ("c=upper(x)", t.int_(), "upper() cannot take column 'x' of type INT; it takes a text column"),
        ("c=substring(x, 1)", t.bytes_(), "substring() cannot take column 'x' of type BYTES"),
        ("c=trim(x)", None, "the source column 'x' has no type"),
    ],
)
def test_result_type_errors(spec: str, typ: PaimonType | None, message: str) -> None:
    with pytest.raises(ValueError, match=r"^computed column 'c' \(") as info:
        column(spec).result_type(typ)
    assert message in str(info.value)


def test_chunked_input() -> None:
    chunked = pa.chunked_array([pa.array(["a"]), pa.array(["b", None])])
    assert column("c=upper(s)").evaluate(chunked, t.string(), 3, 0).to_pylist() == ["A", "B", None]


# -- parsing --------------------------------------------------------------------------------------


def test_parsed_fields() -> None:
    col = column("  pt = DATE_FORMAT ( create_time , 'yyyy-MM-dd' , 3 )  ")
    assert (col.name, col.source, col.function, col.precision) == ("pt", "create_time", "date_format", 3)
    assert col.expression == "DATE_FORMAT ( create_time , 'yyyy-MM-dd' , 3 )"
    assert column("k=substring(x,2,5)").begin == 2
    assert column("k=substring(x,2,5)").end == 5
    assert column("eq=cast('a=b', STRING)").cast_value == "a=b"


def test_dependency_order_as_paimon() -> None:
    # ComputedColumnUtilsTest.testComputedColumns
    specs = ["A=substring(B, 1)", "B=substring(ExistedColumn,1)", "C=now()", "D=substring(A, 1)", "E=substring(C,1)"]
    assert [c.name for c in parse_computed_columns(specs)] == ["B", "C", "E", "A", "D"]
    assert parse_computed_columns([]) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x=yaer(ts)", "--computed-column 'x=yaer(ts)': unknown function 'yaer' (known: cast, date_format, day,"),
        ("year(ts)", "--computed-column 'year(ts)': expected 'column-name=function(arguments)'"),
        ("=year(ts)", "expected 'column-name=function(arguments)'"),
        ("x=year", "expected 'function(arguments)' after '=', got 'year'"),
        ("x=year(ts", "expected 'function(arguments)' after '='"),
        ("x=year()", "year() takes 1 to 2 argument(s), got 0"),
        ("x=year(ts, 3, 4)", "year() takes 1 to 2 argument(s), got 3"),
        ("x=date_format(ts)", "date_format() takes 2 to 3 argument(s), got 1"),
        ("x=truncate(s)", "truncate() takes 2 argument(s), got 1"),
        ("x=upper(s, 1)", "upper() takes 1 argument(s), got 2"),
        ("x=now(ts)", "now() takes 0 argument(s), got 1"),
        ("x=cast()", "cast() takes 1 to 2 argument(s), got 0"),
        ("x=substring(s)", "substring() takes 2 to 3 argument(s), got 1"),
        ("x=year(, 3)", "the first argument of year() must be a column name"),
        ("x=year(ts, 5)", "precision must be 0 (epoch seconds), 3 (milliseconds), 6 (microseconds) or 9"),
        ("x=year(ts, ms)", "precision must be an integer, got 'ms'"),
        ("x=date_format(ts, yyyy, 1)", "precision must be 0 (epoch seconds)"),
        ("x=truncate(s, abc)", "width must be an integer, got 'abc'"),
        ("x=truncate(s, 0)", "width must be a positive integer, got 0"),
        ("x=substring(s, -1)", "begin index must be >= 0, got -1"),
        ("x=substring(s, 3, 3)", "end index (3) must be larger than begin index (3)"),
        ("x=substring(s, a)", "begin index must be an integer, got 'a'"),
        ("x=cast(1, NUMBER)", "cast(): cannot parse Paimon type 'NUMBER'"),
        ("x=cast(1, ARRAY<INT>)", "cast(): type ARRAY<INT> is not an atomic type"),
        ("x=cast(abc, INT)", "cast(): 'abc' is not a valid INT"),
        # date_format's pattern errors: tests/schema_evolution/test_date_format.py
        ("x=cast('abc, STRING)", "unterminated ' quote"),
        ("x=cast('a'b, STRING)", "unexpected text after the quoted argument 'a': 'b, STRING'"),
        ("x=upper(x)", "column 'x' cannot reference itself"),
    ],
)
def test_startup_errors(spec: str, message: str) -> None:
    error = startup_error(spec)
    assert error.startswith(f"--computed-column '{spec}': ")
    assert message in error


def test_startup_errors_across_columns() -> None:
    assert "column 'a' is computed twice" in startup_error("a=upper(s)", "b=now()", "a=lower(s)")
    error = startup_error("A=substring(B, 1)", "B=substring(C, 1)", "C=substring(A, 1)", "D=now()")
    assert error.startswith("--computed-column: circular references between 'A=substring(B, 1)'")
    assert "'D=" not in error
