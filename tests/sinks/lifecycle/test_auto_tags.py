"""Paimon's process-time automatic tags, planned as a pure function of the clock and the tags."""

from __future__ import annotations

import datetime as dt

import pytest

from sinks.lifecycle.auto_tags import AutoTagOptions, plan

DAILY = AutoTagOptions.from_table_options({"tag.automatic-creation": "process-time"})


def test_no_automatic_tags_unless_asked() -> None:
    assert AutoTagOptions.from_table_options({}) is None
    with pytest.raises(ValueError, match="process-time only"):
        AutoTagOptions.from_table_options({"tag.automatic-creation": "watermark"})
    with pytest.raises(ValueError, match=r"tag\.creation-period"):
        AutoTagOptions.from_table_options({"tag.automatic-creation": "process-time", "tag.creation-period": "weekly"})


def test_daily_tag_of_the_day_that_ended() -> None:
    assert DAILY is not None
    now = dt.datetime(2024, 5, 2, 0, 5)
    assert plan(DAILY, now, []).create == "2024-05-01"
    # Made already, or an older period than the newest automatic tag: nothing to do.
    assert plan(DAILY, now, ["2024-05-01"]).create is None
    assert plan(DAILY, now, ["2024-05-03"]).create is None
    # Manual tags do not count as automatic ones.
    assert plan(DAILY, now, ["release-1"]).create == "2024-05-01"


def test_hourly_with_delay_retention_and_formatter() -> None:
    opts = AutoTagOptions.from_table_options(
        {
            "tag.automatic-creation": "process-time",
            "tag.creation-period": "hourly",
            "tag.creation-delay": "10 min",
            "tag.num-retained-max": "2",
            "tag.period-formatter": "without_dashes",
        }
    )
    assert opts is not None
    # 13:05 minus the 10-minute delay is 12:55: the hour that ended is 11:00-12:00.
    assert plan(opts, dt.datetime(2024, 5, 1, 13, 5), []).create == "20240501 11"
    result = plan(opts, dt.datetime(2024, 5, 1, 13, 15), ["20240501 10", "20240501 11", "keep-me"])
    assert result.create == "20240501 12"
    assert result.delete == ("20240501 10",)
