"""Every command takes its warehouse (and checkpoint) as a relative path, an absolute path or a
``file:`` URI, and refuses a scheme it cannot serve before it does anything (README: Quick start).

The relative cases run the real commands from a temporary working directory, as a user types
``--warehouse warehouse`` after ``make demo``."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ingest.cli import maintenance
from ingest.cli.main import main, parse_args, settings_from_args
from schema_evolution.types import int_, varchar
from sinks.table.catalog import Catalog
from tests.paimon_read import read_pypaimon, read_rust

KAFKA = ["--kafka-conf", "properties.bootstrap.servers=127.0.0.1:9092", "--kafka-conf", "topic=t"]
KAFKA += ["--kafka-conf", "value.format=canal-json"]
UNSUPPORTED = ["s3a://bucket/wh", "hdfs://namenode:8020/wh", "gs://bucket/wh", "oss://bucket/wh"]


def _sync(*argv: str):  # type: ignore[no-untyped-def]
    return settings_from_args(parse_args(["kafka-sync-table", "--database", "ods", *argv, *KAFKA])[0])


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _spellings(cwd: Path) -> dict[str, str]:
    """Ways to name ``<cwd>/warehouse``."""
    absolute = str(cwd / "warehouse")
    return {
        "relative": "warehouse",
        "dot-relative": "./warehouse",
        "absolute": absolute,
        "file-uri": f"file://{absolute}",
        "file-uri-one-slash": f"file:{absolute}",
    }


@pytest.mark.parametrize("spelling", ["relative", "dot-relative", "absolute", "file-uri", "file-uri-one-slash"])
def test_sync_settings_hold_the_absolute_warehouse_and_checkpoint(cwd: Path, spelling: str) -> None:
    from ingest.job import default_checkpoint

    settings = _sync("--table", "orders", "--warehouse", _spellings(cwd)[spelling])
    assert settings.warehouse == str(cwd / "warehouse")
    assert default_checkpoint(settings) == str(cwd / "warehouse" / "_lakecdc" / "checkpoints" / settings.job_name)
    given = _sync("--table", "orders", "--warehouse", "warehouse", "--checkpoint", "file:ck/../ck2")
    assert given.checkpoint == str(cwd / "ck2")


@pytest.mark.parametrize("location", UNSUPPORTED)
def test_sync_refuses_an_unsupported_warehouse_scheme_at_start_up(
    location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["kafka-sync-table", "--database", "ods", "--table", "t", "--warehouse", location]
    assert main([*argv, "--checkpoint", "/tmp/ck", *KAFKA]) == 2
    err = capsys.readouterr().err
    scheme = location.split(":")[0]
    assert f"--warehouse '{location}': the {scheme}:// scheme is not supported" in err
    assert "local paths (relative or absolute) and file: URIs" in err
    assert "oss://, gs://, hdfs:// and s3a:// are not supported" in err


@pytest.mark.parametrize("location", [*UNSUPPORTED, "s3://bucket/ck", "viewfs://cluster/ck/"])
def test_a_checkpoint_uri_is_kept_for_spark_hadoop_to_serve(location: str) -> None:
    """Whether Spark's Hadoop serves it is asked when the job starts Spark
    (tests/integration/hadoop/test_hadoop_job_state.py)."""
    settings = _sync("--table", "t", "--warehouse", "/tmp/wh", "--checkpoint", location)
    assert settings.checkpoint == location.rstrip("/")


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("hdfs://nn/ck?x=1", "takes no '?', '#' or password"),
        ("hdfs://u:p@nn/ck", "takes no '?', '#' or password"),
        ("hdfs://nn/a/../ck", "takes no '.' or '..' segment"),
        ("hdfs://", "names no location"),
        ("hdfs:ck", "the hdfs: scheme is not supported"),
    ],
)
def test_a_malformed_checkpoint_uri_is_refused(location: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka-sync-table", "--database", "ods", "--table", "t", "--warehouse", "/tmp/wh"]
    assert main([*argv, "--checkpoint", location, *KAFKA]) == 2
    assert message in capsys.readouterr().err


def test_an_s3_warehouse_needs_a_local_checkpoint(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kafka-sync-table", "--database", "ods", "--table", "t", "--warehouse", "s3://bucket/wh", *KAFKA]
    assert main(argv) == 2
    assert "is on object storage: give --checkpoint a local or shared path" in capsys.readouterr().err


def test_an_s3_warehouse_takes_its_keys_from_the_environment(cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    settings = _sync(
        "--table", "t", "--warehouse", "s3://bucket/wh/", "--checkpoint", "ck",
        "--catalog-conf", "s3.endpoint=http://127.0.0.1:9000", "--catalog-conf", "s3.region=us-east-1",
    )  # fmt: skip
    assert settings.warehouse == "s3://bucket/wh"
    assert settings.checkpoint == str(cwd / "ck")
    assert settings.catalog_conf == {
        "s3.endpoint": "http://127.0.0.1:9000",
        "s3.region": "us-east-1",  # given: wins over AWS_REGION
        "s3.access-key": "env-key",
        "s3.secret-key": "env-secret",
    }
    from ingest import logs

    assert "env-secret" not in logs.redact_text("key env-secret")
    assert list(cwd.iterdir()) == []  # nothing created, not even a local "s3:" folder


def _table(warehouse: Path) -> None:
    """db.p: primary key (id, dt), partitioned by dt, two fixed buckets; three commits over two
    partitions, each written by pypaimon-rust as a sync job writes."""
    from pypaimon_rust.datafusion import PaimonCatalog

    wh = str(warehouse)
    fields = [("id", int_().with_nullable(False)), ("dt", varchar(8).with_nullable(False)), ("v", varchar(10))]
    Catalog(wh).create_table("db.p", fields, ["id", "dt"], ["dt"], {"changelog-producer": "input", "bucket": "2"})
    builder = PaimonCatalog({"warehouse": wh}).get_table("db.p").new_stream_write_builder().with_commit_user("u")
    for batch, dt in enumerate(["20200101", "20200102", "20200101"]):
        write = builder.new_write()
        write.write_arrow(
            pa.RecordBatch.from_arrays(
                [
                    pa.array([batch, batch + 10], pa.int32()),
                    pa.array([dt, dt]),
                    pa.array([f"v{batch}"] * 2),
                    pa.array([0, 0], pa.int8()),
                ],
                names=["id", "dt", "v", "_VALUE_KIND"],
            )
        )
        commit = builder.new_commit()
        assert commit.filter_and_commit({batch: write.prepare_commit(True, batch)}) == 1
        commit.close()


@pytest.mark.parametrize("spelling", ["relative", "dot-relative", "file-uri"])
def test_every_maintenance_command_and_query_on_a_warehouse_named_so(
    cwd: Path, spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _table(cwd / "warehouse")
    base = ["--warehouse", _spellings(cwd)[spelling], "--database", "db", "--table", "p"]
    ran = set()

    def run(action: str, *argv: str) -> str:
        assert main([action, *base, *argv]) == 0, capsys.readouterr().err
        ran.add(action)
        return capsys.readouterr().out

    def query(sql: str) -> str:
        assert main(["query", sql, *base[:4], "--output", "json"]) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    assert query("SELECT count(*) AS n FROM p") == '{"n":6}\n'
    assert "created on snapshot 3" in run("create-tag", "--tag-name", "t3")
    assert "compacted" in run("compact")
    assert "rows rewritten from 2 into 3 buckets" in run("rescale", "--bucket-num", "3", "--partition", "dt=20200102")
    assert "rolled back to snapshot 3" in run("rollback-to", "--version", "t3")
    assert "tag 't3' deleted" in run("delete-tag", "--tag-name", "t3")
    # Paimon (since 1.1) takes what is not given from the table's options: min 10 > max 1 fails, with its text
    assert main(["expire-snapshots", *base, "--retain_max", "1"]) == 2
    assert "retainMax (1) must not be less than retainMin (10)." in capsys.readouterr().err
    assert "snapshots expired" in run(
        "expire-snapshots", "--options", "snapshot.num-retained.min=1", "--retain-max", "2"
    )
    assert "snapshots expired" in run("expire-snapshots", "--retain-min", "1", "--retain-max", "1")
    assert "dropped 1 partition(s)" in run("drop-partition", "--partition", "dt=20200102")
    expired = run("expire-partitions", "--expiration-time", "1 d", "--timestamp-formatter", "yyyyMMdd")
    assert "1 partition(s) expired" in expired and "20200101" in expired
    assert "0 orphan files found (dry run)" in run("remove-orphan-files", "--dry-run", "true")
    assert ran == set(maintenance.ACTIONS)
    assert query("SELECT count(*) AS n FROM p") == '{"n":0}\n'
    # Written where the user meant, read back by both libraries; no folder named after a scheme.
    assert read_rust(str(cwd / "warehouse"), "db.p") == [] == read_pypaimon(str(cwd / "warehouse"), "db.p")
    assert sorted(p.name for p in cwd.iterdir()) == ["warehouse"]


@pytest.mark.parametrize("location", UNSUPPORTED)
@pytest.mark.parametrize(
    ("action", "extra"),
    [
        ("compact", []),
        ("expire-snapshots", []),
        ("create-tag", ["--tag-name", "x"]),
        ("delete-tag", ["--tag-name", "x"]),
        ("rollback-to", ["--version", "1"]),
        ("remove-orphan-files", []),
        ("drop-partition", ["--partition", "dt=1"]),
        ("expire-partitions", []),
        ("rescale", ["--bucket-num", "2"]),
    ],
)
def test_every_maintenance_command_refuses_an_unsupported_scheme(
    cwd: Path, action: str, extra: list[str], location: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([action, "--warehouse", location, "--database", "db", "--table", "p", *extra]) == 2
    err = capsys.readouterr().err
    assert f"--warehouse '{location}': the {location.split(':')[0]}:// scheme is not supported" in err
    assert "oss://, gs://, hdfs:// and s3a:// are not supported" in err
    assert list(cwd.iterdir()) == []  # nothing created, not even a local "s3:" folder


def test_the_refusal_list_covers_every_maintenance_command() -> None:
    tested = {"compact", "expire-snapshots", "create-tag", "delete-tag", "rollback-to", "remove-orphan-files"}
    tested |= {"drop-partition", "expire-partitions", "rescale"}
    assert tested == set(maintenance.ACTIONS)


@pytest.mark.parametrize("location", UNSUPPORTED)
def test_query_refuses_an_unsupported_scheme(cwd: Path, location: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "SELECT 1", "--warehouse", location]) == 2
    assert f"the {location.split(':')[0]}:// scheme is not supported" in capsys.readouterr().err
    assert list(cwd.iterdir()) == []
