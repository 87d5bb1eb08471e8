"""A warehouse on S3-compatible object storage (``s3://``), end to end against a local S3 server (moto
in server mode, ``tests/support/s3_server.py``): a kafka-sync-database job with updates and deletes,
then ``compact``, ``expire-snapshots``, ``remove-orphan-files`` and ``lakecdc query``; the tables are
read back from the bucket with pypaimon-rust and pypaimon, and orphan removal removes only the
objects no snapshot reads. Credentials come from the AWS_* environment, the endpoint from
``--catalog-conf`` (Paimon's spellings)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from deploy.canal_stream import generate, partition_by_key, typed
from deploy.local_kafka import LocalKafka
from ingest.cli.main import main
from ingest.job import run
from sinks.store import manifests, tables
from tests.integration.kafka.test_sync import _settings
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

BUCKET = "lake"
WAREHOUSE = f"s3://{BUCKET}/warehouse"


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        server.create_bucket(BUCKET)
        yield server


def _read_rust(options: Mapping[str, str], table: str) -> list[dict[str, Any]]:
    from pypaimon_rust.datafusion import PaimonCatalog

    t = PaimonCatalog({**options, "warehouse": WAREHOUSE}).get_table(table)
    rb = t.new_read_builder()
    batches = rb.new_read().read(rb.new_scan().plan().splits())
    return sorted(pa.Table.from_batches(batches).to_pylist(), key=lambda r: r["id"]) if batches else []


def _read_pypaimon(options: Mapping[str, str], table: str) -> list[dict[str, Any]]:
    from pypaimon import CatalogFactory

    t = CatalogFactory.create({**options, "warehouse": WAREHOUSE}).get_table(table)
    rb = t.new_read_builder()
    return sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist(), key=lambda r: r["id"])


def prefix_of(table: str) -> str:
    return f"warehouse/ods.db/{table}"


def _conf(options: Mapping[str, str]) -> list[str]:
    return [a for k, v in options.items() for a in ("--catalog-conf", f"{k}={v}")]


def test_a_sync_job_and_maintenance_on_an_s3_warehouse(
    spark: Any,
    kafka: LocalKafka,
    s3: S3Server,
    topic_name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The keys from the environment, the endpoint, region and addressing from --catalog-conf.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    conf = {k: v for k, v in s3.catalog_conf.items() if k not in ("s3.access-key", "s3.secret-key")}
    kafka.create_topic(topic_name, 2)
    stream = generate(keys=60, updates=4, seed=5)
    kafka.produce(topic_name, stream.messages, partition_by_key(2))

    settings = _settings(
        WAREHOUSE,
        kafka,
        topic_name,
        checkpoint=str(tmp_path / "checkpoint"),
        catalog_conf=dict(conf),
        max_offsets_per_trigger=150,
        # in-job compaction too; num-levels defaults to the trigger + 1: the top level is 2
        table_conf={"bucket": "2", "num-sorted-run.compaction-trigger": "2"},
    )
    assert settings.catalog_conf["s3.access-key"] == ACCESS_KEY  # from AWS_ACCESS_KEY_ID
    result = run(settings)
    assert result.stats.batches >= 3

    options = s3.catalog_conf
    expected = {
        t: sorted((typed(r) for r in stream.expected[t].values()), key=lambda r: r["id"]) for t in stream.tables
    }
    keys = s3.keys(BUCKET, "warehouse/")
    assert not [k for k in keys if k.endswith("lakecdc-lease.json")]  # released at the end
    assert not list(tmp_path.glob("**/*.parquet"))  # nothing of the tables went to a local folder
    for table in stream.tables:
        assert f"warehouse/ods.db/{table}/snapshot/LATEST" in keys
        snapshots = tables.open_table(WAREHOUSE, options, f"ods.{table}").snapshot_manager().list_snapshots()
        assert "COMPACT" in [s.commit_kind for s in snapshots]  # the job's own compaction, on the bucket
        assert _read_rust(options, f"ods.{table}") == expected[table]
        assert _read_pypaimon(options, f"ods.{table}") == expected[table]

    # compact (full) every table of the database, through the CLI, keys from the environment
    assert main(["compact", "--warehouse", WAREHOUSE, "--database", "ods", *_conf(conf)]) == 0
    for table in stream.tables:
        t = tables.open_table(WAREHOUSE, options, f"ods.{table}")
        assert all(len(m) == 1 and m[0].level == 2 for m in manifests.live_files(t).values())
        assert _read_rust(options, f"ods.{table}") == expected[table]

    # expire every snapshot but the latest: the files only they read go
    table = f"ods.{stream.tables[0]}"
    before = set(s3.keys(BUCKET, f"warehouse/ods.db/{stream.tables[0]}/"))
    argv = ["expire-snapshots", "--warehouse", WAREHOUSE, "--database", "ods", "--table", stream.tables[0]]
    assert main([*argv, "--retain-max", "1", "--retain-min", "1", *_conf(conf)]) == 0
    after = set(s3.keys(BUCKET, f"warehouse/ods.db/{stream.tables[0]}/"))
    latest = tables.latest_snapshot(tables.open_table(WAREHOUSE, options, table))
    assert latest is not None
    assert [k for k in after if "/snapshot/snapshot-" in k] == [
        f"{prefix_of(stream.tables[0])}/snapshot/snapshot-{latest.id}"
    ]
    gone = before - after
    assert any(k.endswith(".parquet") for k in gone) and any("/manifest/manifest-" in k for k in gone)
    assert _read_rust(options, table) == expected[stream.tables[0]]
    assert _read_pypaimon(options, table) == expected[stream.tables[0]]

    # remove-orphan-files: a planted orphan in a bucket and one in manifest/ go; nothing a snapshot reads
    prefix = f"warehouse/ods.db/{stream.tables[0]}"
    planted = {f"{prefix}/bucket-0/data-orphan-0.parquet", f"{prefix}/manifest/manifest-orphan-0"}
    for key in planted:
        s3.put(BUCKET, key, b"not referenced")
    s3.put(BUCKET, f"{prefix}/snapshot/not-a-candidate", b"x")
    referenced = set(s3.keys(BUCKET, prefix + "/"))
    later = datetime.fromtimestamp(time.time() + 120).strftime("%Y-%m-%d %H:%M:%S")
    argv = ["remove-orphan-files", "--warehouse", WAREHOUSE, "--database", "ods", "--table", stream.tables[0]]
    assert main([*argv, "--older-than", later, *_conf(conf)]) == 0
    left = set(s3.keys(BUCKET, prefix + "/"))
    assert referenced - left == planted
    assert _read_rust(options, table) == expected[stream.tables[0]]
    assert _read_pypaimon(options, table) == expected[stream.tables[0]]

    # Spark's reader (format("paimon")) on the bucket: catalog.* options (its Python workers were
    # started before this test set AWS_*: the keys go as options too)
    from ingest.paimon.source import register

    register(spark)
    reader = spark.read.format("paimon").option("warehouse", WAREHOUSE).option("table", table)
    rows = reader.options(**{f"catalog.{k}": v for k, v in options.items()}).load().collect()
    assert sorted((r.asDict() for r in rows), key=lambda r: r["id"]) == expected[stream.tables[0]]

    # lakecdc query over the bucket
    capsys.readouterr()
    sql = f"SELECT count(*) AS n, sum(qty) AS q FROM {stream.tables[0]}"
    assert main(["query", sql, "--warehouse", WAREHOUSE, "--database", "ods", "--output", "json", *_conf(conf)]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")] or json.loads(out)
    want = expected[stream.tables[0]]
    assert rows == [{"n": len(want), "q": sum(r["qty"] for r in want)}]

    # a tag, then a rollback to it (the table's lease held on S3 meanwhile)
    argv = ["--warehouse", WAREHOUSE, "--database", "ods", "--table", stream.tables[0], *_conf(conf)]
    assert main(["create-tag", *argv, "--tag-name", "kept"]) == 0
    assert f"{prefix_of(stream.tables[0])}/tag/tag-kept" in s3.keys(BUCKET, prefix_of(stream.tables[0]))
    assert main(["rollback-to", *argv, "--version", "kept"]) == 0
    assert _read_rust(options, table) == expected[stream.tables[0]]
    assert not [k for k in s3.keys(BUCKET) if k.endswith("lakecdc-lease.json")]
