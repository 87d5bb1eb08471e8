"""The bottom layer of ``sinks``: pypaimon's file store as lakecdc reads and writes it (pinned:
pypaimon 2.1.0).

Neither pypaimon nor pypaimon-rust offers compaction or snapshot expiry, so lakecdc builds them on
pypaimon's manifest readers/writers, its commit machinery (COMPACT snapshots with conflict
detection) and its snapshot/tag managers. So a pypaimon upgrade is checked in one place:

- Only modules of ``sinks.store`` import pypaimon's internals: anything under ``pypaimon.`` other
  than its public catalog API. The public catalog API, which the rest of ``sinks`` may import, is
  ``pypaimon`` itself (``CatalogFactory``, ``Schema``), ``pypaimon.catalog.catalog_exception``,
  ``pypaimon.schema.data_types`` and ``pypaimon.schema.schema_change`` (``sinks.table.catalog``,
  ``sinks.write.committer``, ``sinks.compaction.rescale``); the methods of the table object the
  catalog returns (``snapshot_manager()``, ``tag_manager()``, ``consumer_manager()``,
  ``rollback_to``, ``new_batch_write_builder()``) count as public too. pypaimon-rust is public.
- Annotations name pypaimon's types through ``sinks.store.paimon_types`` (imported under
  ``TYPE_CHECKING``), never from pypaimon directly.
- ``sinks.store`` imports no other ``sinks`` sub-package (only the shared leaves and
  ``schema_evolution``): ``sinks.table`` → {``sinks.write`` | ``sinks.compaction`` |
  ``sinks.lifecycle``} → ``sinks.store``.

Modules: ``tables`` (open a table, its snapshots and tags), ``files`` (data-file paths and
metadata), ``data_files`` (reading and writing data files as compaction sees them), ``manifests``
(manifest lists and entries, the one manifest walker), ``deletion_vector_files`` (the deletion
vector index file format), ``index`` (a bucket's deletion-vector index files), ``commits`` (COMPACT
commits) and ``changelogs`` (long-lived changelogs). ``tests/sinks/compaction/test_compaction.py``
and ``tests/sinks/lifecycle/test_expire.py`` read every result back through both pypaimon and
pypaimon-rust.
"""
