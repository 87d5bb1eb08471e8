"""Command lines exactly as Apache Paimon's CDC ITCases build them, run through lakecdc's CLI.

Transcribes ``CdcActionITCaseBase`` (``SyncTableActionBuilder.build()``, ``SyncDatabaseActionBuilder.build()``,
``getBasicTableConfig()``), ``MySqlActionITCaseBase.getBasicMySqlConfig()``,
``KafkaActionITCaseBase.getBasicKafkaConfig()`` and ``ActionITCaseBase.createAction``'s ``confuseArgs``
(every key and the action respelt all-``_`` or all-``-``), as docs/research/paimon-options.md §3 lists them.

What only lakecdc needs to run a replay (stop once caught up, where the checkpoint lives) is not on the
command line: :func:`run_action` passes it through the environment (``LAKECDC_AVAILABLE_NOW``,
``LAKECDC_CHECKPOINT``), so the argv stays exactly Paimon's.
"""

from __future__ import annotations

import os
import random
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

# Paimon's ITCases set ``metastore=test-alter-table``: a Java test-only catalog (it fails schema changes on
# purpose), nothing a user passes. Dropped from the catalog conf, and so from the command line.
TEST_ONLY_CATALOG_CONF = {"metastore": "test-alter-table"}


def itcase_random(purpose: str, test_id: str | None = None) -> random.Random:
    """The per-test random source standing in for Java's ThreadLocalRandom: seeded by the test's id (by
    default the running test's), so every run of one replay gets the same buckets and spelling, and a
    failing replay reruns as it failed."""
    if test_id is None:
        test_id = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    return random.Random(zlib.crc32(f"{test_id}/{purpose}".encode()))


def basic_table_config(rng: random.Random | None = None) -> dict[str, str]:
    """``getBasicTableConfig()``: bucket and sink.parallelism, each random in 1..3 (by default from the
    running test's :func:`itcase_random`)."""
    rng = rng or itcase_random("table-conf")
    return {"bucket": str(rng.randint(1, 3)), "sink.parallelism": str(rng.randint(1, 3))}


def basic_mysql_config(port: int, host: str = "127.0.0.1", **extra: str) -> dict[str, str]:
    """``getBasicMySqlConfig()`` plus the test's own entries (``database-name``, ``table-name``, ...)."""
    return {
        "hostname": host,
        "port": str(port),
        "username": "paimonuser",
        "password": "paimonpw",
        "server-time-zone": "America/New_York",
        "scan.newly-added-table.enabled": "false",
        **extra,
    }


def basic_kafka_config(bootstrap_servers: str, **extra: str) -> dict[str, str]:
    """``getBasicKafkaConfig()`` plus the test's own entries (``value.format``, ``topic``, ...)."""
    return {
        "properties.bootstrap.servers": bootstrap_servers,
        "properties.group.id": "paimon-tests",
        "properties.enable.auto.commit": "false",
        "properties.auto.offset.reset": "earliest",
        **extra,
    }


def _map_args(key: str, values: Mapping[str, str]) -> list[str]:  # mapToArgs
    return [tok for k, v in values.items() for tok in (key, f"{k}={v}")]


def _list_args(key: str, values: Sequence[str]) -> list[str]:  # listToArgs: one comma list, if any
    return [key, ",".join(values)] if values else []


def _multi_args(key: str, values: Iterable[str]) -> list[str]:  # listToMultiArgs: one occurrence each
    return [tok for v in values for tok in (key, v)]


def _nullable(key: str, value: object) -> list[str]:  # nullableToArgs (Java's Boolean prints true/false)
    if value is None:
        return []
    return [key, str(value).lower() if isinstance(value, bool) else str(value)]


def _catalog_conf(conf: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in conf.items() if TEST_ONLY_CATALOG_CONF.get(k) != v}


def _conf_key(action: str) -> str:
    return "--mysql_conf" if action.startswith("mysql") else "--kafka_conf"


def sync_table_args(
    action: str,
    warehouse: str,
    source_conf: Mapping[str, str],
    *,
    database: str = "default",
    table: str = "t",
    catalog_conf: Mapping[str, str] | None = None,
    table_conf: Mapping[str, str] | None = None,
    partition_keys: Sequence[str] = (),
    primary_keys: Sequence[str] = (),
    type_mapping: Sequence[str] = (),
    computed_columns: Sequence[str] = (),
    metadata_column_prefix: str | None = None,
    metadata_columns: Sequence[str] = (),
    sync_primary_keys_from_source_schema: bool = True,
) -> list[str]:
    """``SyncTableActionBuilder.build()`` (before confuseArgs), for ``mysql_sync_table`` / ``kafka_sync_table``."""
    args = [action, "--warehouse", warehouse, "--database", database, "--table", table]
    args += ["--sync_primary_keys_from_source_schema", str(sync_primary_keys_from_source_schema).lower()]
    args += _map_args(_conf_key(action), source_conf)
    args += _map_args("--catalog-conf", _catalog_conf(catalog_conf or {}))
    args += _map_args("--table-conf", table_conf or {})
    args += _list_args("--partition-keys", partition_keys)
    args += _list_args("--primary-keys", primary_keys)
    args += _list_args("--type-mapping", type_mapping)
    args += _multi_args("--computed-column", computed_columns)
    args += _nullable("--metadata-column-prefix", metadata_column_prefix)
    args += _multi_args("--metadata-column", metadata_columns)
    return [*args, "--use_pkeys_from_source_for_paimon_schema"]  # always; a key Paimon never reads


def sync_database_args(
    action: str,
    warehouse: str,
    source_conf: Mapping[str, str],
    *,
    database: str = "default",
    catalog_conf: Mapping[str, str] | None = None,
    table_conf: Mapping[str, str] | None = None,
    ignore_incompatible: bool | None = None,
    merge_shards: bool | None = None,
    table_prefix: str | None = None,
    table_suffix: str | None = None,
    including_tables: str | None = None,
    excluding_tables: str | None = None,
    mode: str | None = None,
    type_mapping: Sequence[str] = (),
    partition_keys: Sequence[str] = (),
    multiple_table_partition_keys: Mapping[str, str] | None = None,
    primary_keys: Sequence[str] = (),
    metadata_columns: Sequence[str] = (),
    computed_columns: Sequence[str] = (),
) -> list[str]:
    """``SyncDatabaseActionBuilder.build()`` (before confuseArgs), for ``mysql_sync_database`` /
    ``kafka_sync_database``."""
    args = [action, "--warehouse", warehouse, "--database", database]
    args += _map_args(_conf_key(action), source_conf)
    args += _map_args("--catalog-conf", _catalog_conf(catalog_conf or {}))
    args += _map_args("--table-conf", table_conf or {})
    args += _nullable("--ignore-incompatible", ignore_incompatible)
    args += _nullable("--merge-shards", merge_shards)
    args += _nullable("--table-prefix", table_prefix)
    args += _nullable("--table-suffix", table_suffix)
    args += _nullable("--including-tables", including_tables)
    args += _nullable("--excluding-tables", excluding_tables)
    args += _nullable("--mode", mode)
    args += _list_args("--type-mapping", type_mapping)
    args += _list_args("--partition-keys", partition_keys)
    args += _map_args("--multiple-table-partition-keys", multiple_table_partition_keys or {})
    args += _list_args("--primary-keys", primary_keys)
    args += _list_args("--metadata-column", metadata_columns)  # one comma list here, unlike table sync
    return args + _multi_args("--computed-column", computed_columns)


def respell(args: Sequence[str], underscores: bool) -> list[str]:
    """``confuseArgs``: the action and every token at an odd index (the keys) with all ``-`` made ``_``
    (``underscores``) or all ``_`` made ``-``; values stay as they are."""
    old, new = ("-", "_") if underscores else ("_", "-")
    out = [args[0].replace(old, new)]
    for i, token in enumerate(args[1:], start=1):
        out.append("--" + token[2:].replace(old, new) if i % 2 == 1 else token)
    return out


def confuse_args(args: Sequence[str], rng: random.Random | None = None) -> list[str]:
    """``createAction``: one of the two respellings, at random (``nextBoolean()`` true: ``_`` -> ``-``)."""
    rng = rng or itcase_random("spelling")
    return respell(args, underscores=not rng.getrandbits(1))


def run_action(argv: Sequence[str], checkpoint: str | None = None, **settings: str) -> int:
    """``main(argv)`` as a replay runs it: once over what the source holds now (``--available-now``'s
    setting), on ``checkpoint`` (default: lakecdc's, under the warehouse), with lakecdc's other run-mode
    ``settings`` (``max_offsets_per_trigger="4"``), all through the environment so ``argv`` stays Paimon's.
    Returns the exit code."""
    from ingest.cli.main import main

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAKECDC_AVAILABLE_NOW", "true")
        if checkpoint is not None:
            mp.setenv("LAKECDC_CHECKPOINT", checkpoint)
        for name, value in settings.items():
            mp.setenv(f"LAKECDC_{name.upper()}", value)
        try:
            return main(list(argv))
        except SystemExit as exc:  # argparse refusing the command line: its exit code, as the shell sees it
            return exc.code if isinstance(exc.code, int) else 2


def kafka_sync_table(
    warehouse: str,
    bootstrap_servers: str,
    kafka_conf: Mapping[str, str],
    *,
    checkpoint: str | None = None,
    settings: Mapping[str, str] | None = None,
    **builder: Any,
) -> int:
    """``kafka_sync_table`` with the command line of Paimon's SyncTableActionBuilder: getBasicKafkaConfig()
    then ``kafka_conf`` (value.format, topic, ...); ``builder`` as :func:`sync_table_args`. Exit code."""
    argv = sync_table_args(
        "kafka_sync_table", warehouse, basic_kafka_config(bootstrap_servers, **kafka_conf), **builder
    )
    return run_action(confuse_args(argv), checkpoint, **(settings or {}))


def kafka_sync_database(
    warehouse: str,
    bootstrap_servers: str,
    kafka_conf: Mapping[str, str],
    *,
    checkpoint: str | None = None,
    settings: Mapping[str, str] | None = None,
    **builder: Any,
) -> int:
    """``kafka_sync_database`` with the command line of Paimon's SyncDatabaseActionBuilder. Exit code."""
    conf = basic_kafka_config(bootstrap_servers, **kafka_conf)
    argv = sync_database_args("kafka_sync_database", warehouse, conf, **builder)
    return run_action(confuse_args(argv), checkpoint, **(settings or {}))
