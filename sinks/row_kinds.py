"""Paimon's row kinds as the byte pypaimon-rust reads from the ``_VALUE_KIND`` column: defined once.

Chunks carry them (``sinks.write.chunk_format``), compaction merges by them and the pipeline maps an
event's ``Op`` to them (``ingest.pipeline.chunk_builder``, the one place that decides update semantics).
"""

from __future__ import annotations

VALUE_KIND = "_VALUE_KIND"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
ROW_KIND_NAMES = {INSERT: "+I", UPDATE_BEFORE: "-U", UPDATE_AFTER: "+U", DELETE: "-D"}
# Retractions: counted into a data file's delete_row_count, dropped when nothing older lies below.
RETRACT_KINDS = (UPDATE_BEFORE, DELETE)
