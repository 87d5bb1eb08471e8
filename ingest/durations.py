"""Durations the command line reads (``--trigger-interval``, ``--mysql-conf connect.timeout`` and
``heartbeat.interval``): Paimon/Flink spellings through the one duration parser
(``sinks.option_values.parse_duration_ms``), with two differences kept from lakecdc's first command
line: a bare number is *seconds* (Paimon's table options read it as milliseconds), and the number may
have a fraction (``1.5s``)."""

from __future__ import annotations

import re

from sinks.option_values import parse_duration_ms

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")


def interval_ms(text: str) -> int:
    """``10``, ``10s``, ``500ms``, ``2 minutes``, ``1 h`` in milliseconds (a bare number is seconds)."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"cannot read interval '{text}' (examples: 10s, 500ms, 2 minutes)")
    value, unit = match.groups()
    try:
        per_unit = parse_duration_ms(f"1 {unit or 's'}", "interval")
    except ValueError:
        raise ValueError(f"cannot read interval '{text}': unknown unit '{unit}'") from None
    return round(float(value) * per_unit)


def spark_interval(text: str) -> str:
    """The interval as Spark's trigger reads it: ``"<n> seconds"`` or ``"<n> milliseconds"``."""
    ms = interval_ms(text)
    return f"{ms // 1000} seconds" if ms % 1000 == 0 else f"{ms} milliseconds"


def interval_seconds(text: str) -> int:
    """Whole seconds, at least one (pymysql's ``connect_timeout``)."""
    return max(1, -(-interval_ms(text) // 1000))
