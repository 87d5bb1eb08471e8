"""``--catalog-conf`` and ``--table-conf`` keys that Paimon's actions treat specially, and what lakecdc
does with each (``docs/research/paimon-options.md`` §2.3). Every other key passes through: catalog
keys to pypaimon's catalog, table keys into the table, after ``sinks.table.options`` has refused the
ones the writer would silently ignore (README, "Table options")."""

from __future__ import annotations

from ingest.conf_options import ConfOption, OptionTable, Treatment, boolean
from sinks.table.options import READ_OPTIONS, REFUSED_OPTIONS

H, N, R = Treatment.HONOURED, Treatment.NO_EFFECT, Treatment.REFUSED


def _filesystem(value: str) -> str | None:
    # Paimon's ITCases name a Java test-only catalog (test-alter-table); a Hive, JDBC or REST
    # metastore would be a different catalog than the one lakecdc writes.
    return None if value.strip().lower() == "filesystem" else "must be filesystem: lakecdc writes a filesystem catalog"


CATALOG_OPTIONS = OptionTable(
    "--catalog-conf",
    (
        ConfOption("warehouse", H, "the warehouse; wins over --warehouse, as in Paimon", "/data/wh"),
        ConfOption(
            "case-sensitive",
            H,
            "false: table, column and key names in lower case, as Paimon's actions write them",
            "false",
            boolean,
        ),
        ConfOption("metastore", H, "filesystem only", "filesystem", _filesystem, refused_example="hive"),
        ConfOption("cache-enabled", N, "Paimon's Java catalog cache; lakecdc's catalog does not cache", "false"),
        ConfOption("*", H, "any other key goes to pypaimon's catalog as given", "lock.enabled=false"),
    ),
)

# A value lakecdc honours, for the options it refuses only some values of.
_SAFE = {"aggregation.remove-record-on-delete": "false", "file.format": "parquet", "deletion-vectors.bitmap64": "false"}


def _refused(key: str, by_value: dict[str | None, str]) -> ConfOption:
    """A row of ``sinks.table.options``' refusals: the whole option, or one of its values."""
    if None in by_value:
        return ConfOption(key, R, by_value[None], "x")
    value, reason = next(iter(by_value.items()))
    return ConfOption(
        key,
        H,
        f"honoured, but {key}={value} is refused: {reason}",
        _SAFE[key],
        lambda v: f"is refused: {reason}" if v.strip().lower() == value else None,
        refused_example=value,
    )


_FLINK_SINK = "tunes Flink's sink; stored in the table as Paimon does, no effect on lakecdc's writer"

TABLE_CONF_OPTIONS = OptionTable(
    "--table-conf",
    (
        ConfOption(
            "bucket",
            H,
            "bucket count of created tables; an existing table keeps its count, as in Paimon (rescale changes it); "
            "-2 (postpone) is refused",
            "4",
            lambda v: "is refused: postpone buckets are invisible until rescaled" if v.strip() == "-2" else None,
            refused_example="-2",
        ),
        *(ConfOption(key, N, _FLINK_SINK, "2") for key in ("sink.parallelism",)),
        *(
            ConfOption(key, N, _FLINK_SINK, "1")
            for key in ("sink.writer-cpu", "sink.writer-memory", "sink.committer-cpu", "sink.committer-memory")
        ),
        ConfOption("unaware-bucket.no-shuffle", N, _FLINK_SINK, "true"),
        *(_refused(key, by_value) for key, by_value in REFUSED_OPTIONS.items() if key != "bucket"),
        *(ConfOption(key, R, "a read option: give it to a reader, not to the table", "1") for key in READ_OPTIONS),
        ConfOption(
            "*",
            H,
            "any other Paimon table option, stored in the table; options the writer would ignore are refused "
            "(README, Table options)",
            "snapshot.num-retained.min=5",
        ),
    ),
)
