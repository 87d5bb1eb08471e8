"""GTID sets in MySQL's and MariaDB's forms: which transactions they hold."""

from __future__ import annotations

import pytest

from ingest.mysql.gtid import GtidSet

UUID = "3E11FA47-71CA-11E1-9E33-C80AA9429562"


def test_mysql_sets() -> None:
    gtids = GtidSet.parse(f"{UUID}:1-5:7,\n 0ab8cdb2-0000-11e1-9e33-c80aa9429562:3")
    assert gtids.contains(f"{UUID.lower()}:5") and gtids.contains(f"{UUID}:7")
    assert not gtids.contains(f"{UUID}:6") and not gtids.contains(f"{UUID}:8")
    assert gtids.contains("0ab8cdb2-0000-11e1-9e33-c80aa9429562:3")
    assert not gtids.contains("0ab8cdb2-0000-11e1-9e33-c80aa9429562:2")
    assert not gtids.contains("ffffffff-0000-11e1-9e33-c80aa9429562:1")


def test_mariadb_sets() -> None:
    gtids = GtidSet.parse("0-1-100, 3-2-5")
    assert gtids.contains("0-1-100") and gtids.contains("0-9-1") and gtids.contains("3-1-5")
    assert not gtids.contains("0-1-101") and not gtids.contains("3-2-6") and not gtids.contains("1-1-1")


@pytest.mark.parametrize("text", ["", "nonsense", f"{UUID}", f"{UUID}:a-b", "0-1"])
def test_bad_sets_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="gtid-set"):
        GtidSet.parse(text)


def test_the_empty_set() -> None:
    assert GtidSet.of("") == GtidSet() and GtidSet.of(" 0-1-3") == GtidSet.parse("0-1-3")
    assert GtidSet().covers(GtidSet()) and GtidSet.parse("0-1-1").covers(GtidSet())
    assert not GtidSet().covers(GtidSet.parse("0-1-1"))


def test_mariadb_sets_cover_per_domain() -> None:
    """A replica that applied up to 0-1-100 covers what a job read up to 0-1-90, whichever server
    wrote it; one at 0-1-80, or without domain 3, does not."""
    assert GtidSet.parse("0-2-100,3-1-5").covers(GtidSet.parse("0-1-90,3-1-5"))
    assert not GtidSet.parse("0-1-80,3-1-5").covers(GtidSet.parse("0-1-90"))
    assert not GtidSet.parse("0-1-100").covers(GtidSet.parse("0-1-90,3-1-5"))


def test_mysql_sets_cover_by_ranges() -> None:
    other = "0ab8cdb2-0000-11e1-9e33-c80aa9429562"
    big = GtidSet.parse(f"{UUID}:1-5:6-10:12,{other}:1-3")
    assert big.covers(GtidSet.parse(f"{UUID}:2-9:12"))  # across two adjacent ranges
    assert big.covers(GtidSet.parse(f"{other.upper()}:2"))
    assert not big.covers(GtidSet.parse(f"{UUID}:9-11"))  # 11 is missing
    assert not big.covers(GtidSet.parse(f"{other}:4"))
    assert not big.covers(GtidSet.parse("ffffffff-0000-11e1-9e33-c80aa9429562:1"))
