"""Paimon's merge engines, as compaction must apply them: the per-key merge a reader does.

A compaction output must read exactly as its inputs did, so this mirrors Java's merge functions
(``DeduplicateMergeFunction``, ``FirstRowMergeFunction``, ``PartialUpdateMergeFunction``,
``AggregateMergeFunction`` and its ``Field*Agg`` aggregators) behind Java's
``ReducerMergeFunctionWrapper``: a key with a single row passes through untouched, row kind and
all; only keys with several rows are merged. Choosing a row (deduplicate, first-row) is done in
Arrow; combining values (partial-update, aggregation) goes row by row in Python over the few keys
that have more than one row (most keys of a bucket have one, in its top level).

Options are Paimon's own names. Anything Paimon offers that is not mirrored here (aggregate
functions inside partial-update's sequence groups, aggregators such as ``merge_map``, ``rbm64`` or
``hll_sketch``) is refused by ``MergeOptions``, so a table is never compacted into something its
readers would show differently.

Modules: ``options`` (the table options that choose and shape the merge, Java's validations),
``aggregators`` (Java's ``Field*Agg``), ``functions`` (the merge of one key's rows: partial-update
and aggregation) and ``rows`` (a bucket's sorted rows, one per key).
"""
