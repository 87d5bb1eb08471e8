"""Deletion vectors of MOW tables (``deletion-vectors.enabled=true``), as compaction uses them.

Readers of such tables skip level 0 and read every other file without merging, dropping the row
positions its deletion vector lists. So each commit's level-0 rows are lifted by a compaction
that marks the older version of every key they carry as deleted where it lies (in a file above
the compaction's output), instead of rewriting that file: the cost follows the commit, not the
bucket (Paimon's ``LookupMergeTreeCompactRewriter`` with a deletion-vectors maintainer). The
index file format is ``sinks.store.deletion_vector_files``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
from pyroaring import BitMap


def enabled(options: Mapping[str, str]) -> bool:
    """The table is MOW: ``deletion-vectors.enabled=true``."""
    return str(options.get("deletion-vectors.enabled", "false")).strip().lower() == "true"


def live(data: pa.Table, deleted: BitMap | None) -> pa.Table:
    """``data`` (a whole data file, in file order) without the rows its vector deletes."""
    if not deleted:
        return data
    keep = np.ones(data.num_rows, dtype=bool)
    keep[np.fromiter(deleted, dtype=np.int64, count=len(deleted))] = False
    return data.filter(pa.array(keep))


def positions(data: pa.Table, wanted: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """Row positions in ``data`` (a whole data file, in file order) whose key is in ``wanted``."""
    if data.num_rows == 0 or wanted.num_rows == 0:
        return np.empty(0, dtype=np.int64)
    keys = list(keys)
    indexed = data.select(keys).append_column("_position", pa.array(np.arange(data.num_rows, dtype=np.int64)))
    found = indexed.join(wanted.select(keys), keys, join_type="left semi")
    return np.sort(found.column("_position").to_numpy())
