"""date_format's patterns as Java's DateTimeFormatter.ofPattern prints a LocalDateTime on a default en-US
JDK 17, as Paimon does (docs/research/paimon-options.md section 5): every letter, the week rules, the
errors Java raises (refused at start-up here), through parse_computed_columns and evaluate."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from schema_evolution import types as t
from schema_evolution.computed_specs import parse_computed_columns
from schema_evolution.date_pattern import Token, compile_pattern
from schema_evolution.types import PaimonType

# 2024-01-07T00:01:02.123456789, a Sunday (Paimon's testDateFormatWithEpochTime)
EPOCH_S = 1704585662
EPOCH_NS = EPOCH_S * 10**9 + 123456789


def run(pattern: str, values: list[Any], typ: PaimonType, extra: str = "") -> list[Any]:
    [col] = parse_computed_columns([f"c=date_format(src, {pattern}{extra})"])
    return col.evaluate(
        pa.array(values, pa.int64() if typ.root is t.Root.BIGINT else None), typ, len(values), 0
    ).to_pylist()


def at(pattern: str, *days: str) -> list[str]:
    """The pattern on each ISO date (midnight)."""
    values = [dt.datetime.fromisoformat(d) for d in days]
    [col] = parse_computed_columns([f'c=date_format(ts, "{pattern}")'])
    return list(col.evaluate(pa.array(values, pa.timestamp("us")), t.timestamp(6), len(values), 0).to_pylist())


def on_epoch_time(pattern: str) -> str:
    [col] = parse_computed_columns([f'c=date_format(ts, "{pattern}", 9)'])
    [out] = col.evaluate(pa.array([EPOCH_NS], pa.int64()), t.bigint(), 1, 0).to_pylist()
    return str(out)


def startup_error(spec: str) -> str:
    with pytest.raises(ValueError) as info:
        parse_computed_columns([spec])
    return str(info.value)


# -- Paimon's own expectations --------------------------------------------------------------------


def test_paimon_date_format_with_epoch_time() -> None:
    # MySqlSyncTableActionITCase.testDateFormatWithEpochTime, en-US: week 2 (Sunday-first weeks)
    cases = [
        ("yyyy-MM-dd HH:mm:ss", "", EPOCH_S, "2024-01-07 00:01:02"),
        ("yyyy-MM-dd HH:mm:ss", ", 0", EPOCH_S, "2024-01-07 00:01:02"),
        ("yyyy-ww", ", 0", EPOCH_S, "2024-02"),
        ("yyyy-MM-dd HH:mm:ss.SSS", ", 3", EPOCH_S * 1000 + 123, "2024-01-07 00:01:02.123"),
        ("yyyy-MM-dd HH:mm:ss.SSSSSS", ", 6", EPOCH_S * 10**6 + 123456, "2024-01-07 00:01:02.123456"),
        ("yyyy-MM-dd HH:mm:ss.SSSSSSSSS", ", 9", EPOCH_NS, "2024-01-07 00:01:02.123456789"),
    ]
    for pattern, precision, value, expected in cases:
        assert run(pattern, [value, None], t.bigint(), precision) == [expected, None]


# date | yyyy | YYYY | ww | W | e | F (JDK 8-18) | D | EEE   (section 5.3)
WEEK_TABLE = """
2023-12-31 2023 2024 01 6 1 3 365 Sun
2024-01-01 2024 2024 01 1 2 1 1 Mon
2024-01-06 2024 2024 01 1 7 6 6 Sat
2024-01-07 2024 2024 02 2 1 7 7 Sun
2024-02-29 2024 2024 09 5 5 1 60 Thu
2024-03-01 2024 2024 09 1 6 1 61 Fri
2024-03-03 2024 2024 10 2 1 3 63 Sun
2024-12-28 2024 2024 52 4 7 7 363 Sat
2024-12-29 2024 2025 01 5 1 1 364 Sun
2024-12-31 2024 2025 01 5 3 3 366 Tue
2025-01-01 2025 2025 01 1 4 1 1 Wed
2025-01-05 2025 2025 02 2 1 5 5 Sun
2021-01-01 2021 2021 01 1 6 1 1 Fri
2021-01-03 2021 2021 02 2 1 3 3 Sun
2022-01-01 2022 2022 01 1 7 1 1 Sat
2022-12-31 2022 2022 53 5 7 3 365 Sat
""".strip().splitlines()


@pytest.mark.parametrize("row", WEEK_TABLE, ids=[r.split()[0] for r in WEEK_TABLE])
def test_en_us_week_fields(row: str) -> None:
    day, *expected = row.split()
    assert at("yyyy YYYY ww W e F D EEE", day) == [" ".join(expected)]


def test_week_year_and_year_differ_at_the_year_end() -> None:
    assert at("yyyy-ww|YYYY-ww|YY|w", "2024-12-29", "2024-12-28") == ["2024-01|2025-01|25|1", "2024-52|2024-52|24|52"]


def test_week_of_month_over_a_whole_month() -> None:
    # March 2024 starts on a Friday: 1-2 are week 1, 3-9 week 2, ..., 31 week 6
    days = [f"2024-03-{d:02d}" for d in range(1, 32)]
    weeks = [int(w) for w in at("W", *days)]
    assert weeks == [1, 1] + [2] * 7 + [3] * 7 + [4] * 7 + [5] * 7 + [6]
    assert at("F", *days) == [str((d - 1) % 7 + 1) for d in range(1, 32)]  # JDK 17's F


# -- every letter and count (section 5.2), on 2024-01-07T00:01:02.123456789 ------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("G GG GGG GGGG GGGGG", "AD AD AD Anno Domini A"),
        ("u uu uuu uuuu uuuuu", "2024 24 2024 2024 02024"),
        ("y yy yyy yyyy yyyyy", "2024 24 2024 2024 02024"),
        ("Y YY YYY YYYY YYYYY", "2024 24 2024 2024 02024"),
        ("Q QQ QQQ QQQQ QQQQQ", "1 01 Q1 1st quarter 1"),
        ("q qq qqq qqqq qqqqq", "1 01 Q1 1st quarter 1"),
        ("M MM MMM MMMM MMMMM", "1 01 Jan January J"),
        ("L LL LLL LLLL LLLLL", "1 01 Jan January J"),
        ("w ww W", "2 02 2"),
        ("D DD DDD d dd F", "7 07 007 7 07 7"),
        ("E EE EEE EEEE EEEEE", "Sun Sun Sun Sunday S"),
        ("e ee eee eeee eeeee", "1 01 Sun Sunday S"),
        ("c ccc cccc ccccc", "1 Sun Sunday S"),
        ("a h hh K KK k kk H HH", "AM 12 12 0 00 24 24 0 00"),
        ("m mm s ss", "1 01 2 02"),
        ("S SS SSS SSSS SSSSSS SSSSSSSSS", "1 12 123 1234 123456 123456789"),
        ("A AAAAAAAA n nnnnnnnnnn N", "62123 00062123 123456789 0123456789 62123456789"),
        ("g gggggg", "60316 060316"),
        ("ppH|pppMMM|pppppppEEEE", " 0|Jan| Sunday"),
    ],
)
def test_letters(pattern: str, expected: str) -> None:
    assert on_epoch_time(pattern) == expected


def test_quarters_and_clock_hours_through_a_year() -> None:
    days = ["2024-02-01T13:00", "2024-05-01T12:00", "2024-08-01T23:00", "2024-11-01T11:59"]
    assert at("QQQQ|Q|a h K k H", *days) == [
        "1st quarter|1|PM 1 1 13 13",
        "2nd quarter|2|PM 12 0 12 12",
        "3rd quarter|3|PM 11 11 23 23",
        "4th quarter|4|AM 11 11 11 11",
    ]


def test_years_beyond_four_digits_and_before_the_era() -> None:
    ten_thousand = ((dt.date(9999, 12, 31) - dt.date(1970, 1, 1)).days + 1) * 86400  # 10000-01-01
    before = -70_000_000_000  # -0249-11-12: year -249 is 250 BC
    out = run("yyyy|uuuu|yy|uuu|G|GGGG|g", [ten_thousand, before], t.bigint())
    assert out == ["+10000|+10000|00|10000|AD|Anno Domini|2973484", "0250|-0249|50|-249|BC|Before Christ|-769599"]


# -- literals, quotes, optional sections, padding -------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("yyyy-MM-dd'T'HH:mm", "2024-01-07T00:01"),
        ("'week' w 'of' YYYY", "week 2 of 2024"),
        ("'o''clock' ''", "o'clock '"),
        ("'yyyy-ww'", "yyyy-ww"),
        ("yyyy[-MM[-dd]]", "2024-01-07"),
        ("yyyy[-MM", "2024-01"),  # Java closes an optional section left open
        ("yyyy[ VV][ z]-MM", "2024-01"),  # a section with a zone letter is left out, as Java does
        ("yyyy[-MM[ O]-dd]", "2024-01-07"),
        ("HH:mm / \u00e9 \u00e0 %", "00:01 / \u00e9 \u00e0 %"),  # non-ASCII letters are literal,
    ],
)
def test_literals_and_sections(pattern: str, expected: str) -> None:
    assert on_epoch_time(pattern) == expected


def test_a_single_quoted_pattern_argument_is_java_literal_text_as_in_paimon() -> None:
    # Paimon passes the argument as written: 'yyyy-ww' is a quoted Java literal
    assert run("'yyyy-ww'", [EPOCH_S], t.bigint(), ", 0") == ["yyyy-ww"]
    assert run("'week' ww", [EPOCH_S], t.bigint(), ", 0") == ["week 02"]
    assert run("\"yyyy, 'w'ww\"", [EPOCH_S], t.bigint()) == ["2024, w02"]  # double quotes: lakecdc's comma escape


def test_a_padded_field_wider_than_its_pad_stops_at_that_row() -> None:
    assert at("pH", "2024-01-01T09:00") == ["9"]
    [col] = parse_computed_columns(["c=date_format(ts, pH)"])
    late = pa.array([dt.datetime(2024, 1, 1, 9), dt.datetime(2024, 1, 1, 10)], pa.timestamp("s"))
    with pytest.raises(ValueError, match="Cannot print as output of 2 characters exceeds pad width of 1"):
        col.evaluate(late, t.timestamp(0), 2, 0)


def test_compiled_once_into_tokens() -> None:
    assert compile_pattern("yyyy-'W'ww[VV]") == (Token("y", 4), Token("", text="-W"), Token("w", 2))
    assert compile_pattern("ppd") == (Token("d", 1, pad=2),)
    assert compile_pattern("") == ()


def test_nulls_stay_null_and_literal_only_patterns() -> None:
    assert at("'fixed'", "2024-01-01") == ["fixed"]
    [col] = parse_computed_columns(["c=date_format(ts, ww)"])
    assert col.evaluate(pa.array([None], pa.timestamp("s")), t.timestamp(0), 1, 0).to_pylist() == [None]


# -- refused at start-up, with Java's message ----------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyy-www", "'www': w (week of week-based year) takes at most 2 letters (Too many pattern letters: w)"),
        ("WW", "(Too many pattern letters: W)"),
        ("ddd", "'ddd': d (day of month) takes at most 2 letters (Too many pattern letters: d)"),
        ("DDDD", "(Too many pattern letters: D)"),
        ("FF", "(Too many pattern letters: F)"),
        ("aa", "takes at most 1 letter (Too many pattern letters: a)"),
        ("MMMMMM", "(Too many pattern letters: M)"),
        ("GGGGGG", "(Too many pattern letters: G)"),
        ("eeeeee", "(Too many pattern letters: e)"),
        ("HHH", "(Too many pattern letters: H)"),
        ("cc", '(Invalid pattern "cc")'),
        ("SSSSSSSSSS", "(Minimum width must be from 0 to 9 inclusive but was 10)"),
        ("y" * 20, "(The minimum width must be from 1 to 19 inclusive but was 20)"),
        ("n" * 20, "(The minimum width must be from 1 to 19 inclusive but was 20)"),
        ("yyyy-MM-dd b", "'b' is not a pattern letter (Unknown pattern letter: b)"),
        ("yyyy-MM-ddTHH", "'T' is not a pattern letter (quote literal text: 'T') (Unknown pattern letter: T)"),
        ("jj", "(Unknown pattern letter: j)"),
        ("B", "'B' (day period) is not supported"),
        ("yyyy#", "'#' is reserved (Pattern includes reserved character: '#')"),
        ("{yyyy", "(Pattern includes reserved character: '{')"),
        ("yyyy}", "(Pattern includes reserved character: '}')"),
        ("yyyy]", "']' closes no '[' (Pattern invalid as it contains ] without previous [)"),
        ("yyyy'T", "a quote is not closed (Pattern ends with an incomplete string literal: yyyy'T)"),
        ("yyyy p", "(Pad letter 'p' must be followed by valid pad pattern: yyyy p)"),
        ("ppb", "(Unknown pattern letter: b)"),
        ("VVV", "(Pattern letter count must be 2: V)"),
        ("OO", "(Pattern letter count must be 1 or 4: O)"),
        ("zzzzz", "(Too many pattern letters: z)"),
        ("XXXXXX", "(Too many pattern letters: X)"),
    ],
)
def test_invalid_patterns_are_refused_at_startup_with_javas_text(pattern: str, message: str) -> None:
    spec = f'pt=date_format(ts, "{pattern}")'
    error = startup_error(spec)
    assert error.startswith(f"--computed-column '{spec}': pattern '{pattern}': ")
    assert message in error


@pytest.mark.parametrize(
    ("pattern", "java"),
    [
        ("yyyy VV", "Unable to extract ZoneId from temporal"),
        ("HH z", "Unable to extract ZoneId from temporal"),
        ("HH zzzz", "Unable to extract ZoneId from temporal"),
        ("HH v", "Unable to extract ZoneId from temporal"),
        ("HH O", "Unsupported field: OffsetSeconds"),
        ("HHX", "Unsupported field: OffsetSeconds"),
        ("HHxx", "Unsupported field: OffsetSeconds"),
        ("HHZ", "Unsupported field: OffsetSeconds"),
    ],
)
def test_zone_letters_are_refused_at_startup(pattern: str, java: str) -> None:
    error = startup_error(f"pt=date_format(ts, {pattern})")
    assert "needs a time zone, but date_format formats a date-time without one" in error
    assert f"(Paimon's job fails at its first row: {java})" in error
