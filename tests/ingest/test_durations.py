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
