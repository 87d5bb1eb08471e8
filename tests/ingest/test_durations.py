"""Command-line durations go through the one duration parser (Paimon/Flink spellings), a bare
number meaning seconds as it always did on the command line."""

from __future__ import annotations

import pytest

from ingest.durations import interval_ms, interval_seconds, spark_interval


@pytest.mark.parametrize(
    ("text", "spark"),
    [
        ("10", "10 seconds"),  # bare: seconds (Paimon's table options would read milliseconds)
        ("10s", "10 seconds"),
        ("10 seconds", "10 seconds"),
        ("500ms", "500 milliseconds"),
        ("2 minutes", "120 seconds"),
        ("1.5s", "1500 milliseconds"),
        ("0.5", "500 milliseconds"),
        ("1 h", "3600 seconds"),  # Paimon's spellings
        ("30min", "1800 seconds"),
    ],
)
def test_trigger_intervals(text: str, spark: str) -> None:
    assert spark_interval(text) == spark


@pytest.mark.parametrize("text", ["soon", "10 parsecs", "", "-1s"])
def test_unreadable_intervals(text: str) -> None:
    with pytest.raises(ValueError, match="cannot read interval"):
        interval_ms(text)


def test_connect_timeout_is_whole_seconds_at_least_one() -> None:
    assert [interval_seconds(t) for t in ("30s", "10", "2 min", "500ms", "1.5s")] == [30, 10, 120, 1, 2]


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        *[("1h", 3_600_000), ("30 s", 30_000), ("7 d", 604_800_000), ("10 seconds", 10_000), ("500ms", 500)],
        *[("2 MIN", 120_000), ("1 day", 86_400_000), ("3 hours", 10_800_000), ("250 millis", 250), ("5 sec", 5000)],
    ],
)
def test_paimon_and_flink_spellings(text: str, ms: int) -> None:
    assert interval_ms(text) == ms


@pytest.mark.parametrize("name", ["LAKECDC_STOP_TIMEOUT", "LAKECDC_LEASE_SECONDS"])
def test_duration_variables_use_the_one_parser(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from ingest.job import lease_settings
    from ingest.streaming.stopping import stop_timeout

    read = {"LAKECDC_STOP_TIMEOUT": stop_timeout, "LAKECDC_LEASE_SECONDS": lambda: lease_settings()[0]}[name]
    for text, seconds in (("90", 90), ("2 min", 120), ("1h", 3600), ("45 s", 45)):
        monkeypatch.setenv(name, text)
        assert read() == seconds
