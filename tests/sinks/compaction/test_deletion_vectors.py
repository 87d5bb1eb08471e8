"""Deletion vectors as compaction uses them: position lookups and filtering."""

from __future__ import annotations

import pyarrow as pa
from pyroaring import BitMap

from sinks.compaction import deletion_vectors as dv


def test_positions_and_live_rows() -> None:
    data = pa.table({"k1": [1, 1, 2, 3, 2], "k2": ["a", "b", "a", "a", "a"], "v": [10, 11, 12, 13, 14]})
    wanted = pa.table({"k1": [2, 1, 9], "k2": ["a", "b", "z"]})
    assert dv.positions(data, wanted, ["k1", "k2"]).tolist() == [1, 2, 4]
    assert dv.positions(data, wanted.slice(0, 0), ["k1", "k2"]).tolist() == []
    assert dv.live(data, BitMap([1, 2, 4])).column("v").to_pylist() == [10, 13]
    assert dv.live(data, None) is data and dv.live(data, BitMap()) is data
