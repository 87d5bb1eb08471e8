"""A user's location becomes the absolute local path both Paimon libraries read (a warehouse may also be
s3://bucket/path); other schemes are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from schema_evolution.types import int_
from sinks.table.catalog import Catalog
from sinks.table.locations import UnsupportedLocation, resolve_checkpoint, resolve_location, resolve_warehouse
from sinks.table.query import run_query
from tests.paimon_read import read_pypaimon, read_rust


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("wh", "{cwd}/wh"),
        ("./wh/", "{cwd}/wh"),
        ("a/../wh", "{cwd}/wh"),
        ("/data/wh", "/data/wh"),
        ("/data//x/../wh", "/data/wh"),
        ("file:/data/wh", "/data/wh"),
        ("file:///data/wh", "/data/wh"),
        ("file://localhost/data/wh", "/data/wh"),
        ("FILE:///data/my%20wh", "/data/my wh"),
        ("file:wh", "{cwd}/wh"),
        ("./my:dir", "{cwd}/my:dir"),
        ("  wh ", "{cwd}/wh"),
        ("~/wh", "{home}/wh"),
    ],
)
def test_local_spellings_resolve_to_one_absolute_path(
    given: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/u")
    assert resolve_location(given) == expected.format(cwd=os.getcwd(), home="/home/u")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("s3://b/x", "--warehouse 's3://b/x' must be a local or shared filesystem path"),
        ("s3a://b/x", "the s3a:// scheme is not supported"),
        ("hdfs://nn:8020/x", "the hdfs:// scheme is not supported"),
        ("gs://b/x", "the gs:// scheme is not supported"),
        ("oss://b/x", "the oss:// scheme is not supported"),
        ("my:dir", "the my: scheme is not supported; .*a local path with a ':' is written ./my:dir"),
        ("file://otherhost/x", "a path on this machine .*not on host 'otherhost'"),
        ("file:///x?y=1", "takes no '\\?' or '#' part"),
        ("file://", "names no path"),
        ("", "--warehouse is empty"),
    ],
)
def test_other_schemes_are_refused_with_what_is_supported(given: str, message: str) -> None:
    with pytest.raises(UnsupportedLocation, match=message) as info:
        resolve_location(given)
    assert isinstance(info.value, ValueError)
    if "://" in given and not given.startswith(("file", "s3:")):
        assert "lakecdc supports local paths (relative or absolute) and file: URIs" in str(info.value)
        assert "oss://, gs://, hdfs:// and s3a:// are not supported" in str(info.value)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("hdfs://nn:8020/ck/job/", "hdfs://nn:8020/ck/job"),
        ("HDFS://nn/ck", "hdfs://nn/ck"),
        ("viewfs://cluster/ck", "viewfs://cluster/ck"),
        ("s3a://bucket/ck", "s3a://bucket/ck"),
        ("hdfs:///ck", "hdfs:///ck"),
    ],
)
def test_a_checkpoint_may_be_a_uri_for_spark_hadoop(given: str, expected: str) -> None:
    assert resolve_checkpoint(given) == expected


def test_a_checkpoint_path_resolves_as_any_location(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_checkpoint("ck") == resolve_location("ck") == str(tmp_path / "ck")
    assert resolve_checkpoint(f"file://{tmp_path}/ck") == str(tmp_path / "ck")
    with pytest.raises(UnsupportedLocation, match="a file: URI names a path on this machine"):
        resolve_checkpoint("file://host/ck")


def test_the_option_is_named() -> None:
    with pytest.raises(UnsupportedLocation, match=r"^--checkpoint 's3://b/ck' must be a local or shared"):
        resolve_location("s3://b/ck", "--checkpoint")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("s3://bucket", "s3://bucket"),
        ("s3://bucket/", "s3://bucket"),
        ("s3://bucket/wh", "s3://bucket/wh"),
        ("  s3://my-bucket.x//a/b/  ", "s3://my-bucket.x/a/b"),
        ("S3://bucket/wh", "s3://bucket/wh"),
    ],
)
def test_an_s3_warehouse_is_kept_as_a_uri(given: str, expected: str) -> None:
    assert resolve_warehouse(given) == expected


def test_a_local_warehouse_resolves_as_before(tmp_path: Path) -> None:
    assert resolve_warehouse(f"file://{tmp_path}/wh") == resolve_location(f"file://{tmp_path}/wh") == f"{tmp_path}/wh"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("s3a://b/x", "the s3a:// scheme is not supported"),
        ("oss://b/x", "the oss:// scheme is not supported"),
        ("gs://b/x", "the gs:// scheme is not supported"),
        ("hdfs://nn:8020/x", "the hdfs:// scheme is not supported"),
        ("s3://key:secret@bucket/x", "no credentials, port"),
        ("s3://bucket:9000/x", "no credentials, port"),
        ("s3://bucket/x?versionId=1", "no credentials, port, '\\?'"),
        ("s3://B_ad/x", "'B_ad' is not an S3 bucket name"),
        ("s3://bucket/a/../b", "no '\\.' or '\\.\\.' segment"),
    ],
)
def test_a_warehouse_on_an_unsupported_store_is_refused(given: str, message: str) -> None:
    with pytest.raises(UnsupportedLocation, match=message):
        resolve_warehouse(given)


@pytest.mark.parametrize("spelling", ["relative", "file-uri"])
def test_a_table_written_through_a_resolved_location_reads_back_in_both_libraries(
    spelling: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pypaimon-rust refuses relative paths ("neither a valid url nor path"): resolution fixes that."""
    monkeypatch.chdir(tmp_path)
    given = "wh" if spelling == "relative" else f"file://{tmp_path}/wh"
    wh = resolve_location(given)
    catalog = Catalog(wh)
    catalog.create_table("db.t", [("id", int_())], [], [], {})
    table = catalog._catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    write.write_arrow(pa.table({"id": pa.array([1, 2], pa.int32())}))
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    assert read_rust(wh, "db.t") == [{"id": 1}, {"id": 2}] == read_pypaimon(wh, "db.t")
    assert run_query(given, "SELECT count(*) AS n FROM t", "db").to_pylist() == [{"n": 2}]
    assert (tmp_path / "wh" / "db.db" / "t" / "snapshot").is_dir()
