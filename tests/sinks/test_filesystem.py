"""The filesystem layer (sinks.filesystem): which locations are object storage, the S3 options under
Paimon's spellings, and the AWS_* environment filling in what --catalog-conf does not give."""

from __future__ import annotations

from pathlib import Path

import pytest

from sinks.filesystem import (
    StoreLocation,
    UnsupportedStore,
    check_lease_support,
    directory,
    is_object_store,
    open_filesystem,
    s3_option,
    walk_files,
    with_environment,
)

ENV = {
    "AWS_ACCESS_KEY_ID": "env-key",
    "AWS_SECRET_ACCESS_KEY": "env-secret",
    "AWS_SESSION_TOKEN": "env-token",
    "AWS_DEFAULT_REGION": "eu-central-1",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
}


@pytest.mark.parametrize(
    ("location", "expected"),
    [("s3://b/x", True), ("S3://b/x", True), ("/data/wh", False), ("file:///wh", False), ("oss://b/x", False)],
)
def test_is_object_store(location: str, expected: bool) -> None:
    assert is_object_store(location) is expected


def test_the_environment_fills_what_the_options_lack() -> None:
    given = {"s3.endpoint": "http://minio:9000", "fs.s3a.access.key": "conf-key", "s3.path.style.access": "true"}
    out = with_environment("s3://b/wh", given, ENV)
    assert out == {
        **given,  # given values win, whatever their spelling
        "s3.secret-key": "env-secret",
        "s3.session-token": "env-token",
        "s3.region": "eu-central-1",
    }
    assert s3_option(out, "access-key") == "conf-key"
    assert s3_option(out, "endpoint") == "http://minio:9000"


def test_a_local_warehouse_takes_nothing_from_the_environment() -> None:
    assert with_environment("/data/wh", {"a": "1"}, ENV) == {"a": "1"}


def test_the_s3_specific_endpoint_variable_wins() -> None:
    env = {**ENV, "AWS_ENDPOINT_URL_S3": "http://s3-only:9000", "AWS_REGION": "us-west-2"}
    out = with_environment("s3://b/wh", {}, env)
    assert out["s3.endpoint"] == "http://s3-only:9000" and out["s3.region"] == "us-west-2"


def test_directories(tmp_path: Path) -> None:
    assert directory(f"file://{tmp_path}", {}) == tmp_path
    assert directory(str(tmp_path), {}) == tmp_path
    location = directory("s3://bucket/wh/db.db/t/", {"s3.region": "x"})
    assert isinstance(location, StoreLocation)
    assert (location.uri, location.bucket, location.key, location.name) == (
        "s3://bucket/wh/db.db/t",
        "bucket",
        "wh/db.db/t",
        "t",
    )
    lease = location / "lakecdc-lease.json"
    assert lease.key == "wh/db.db/t/lakecdc-lease.json" and str(lease) == "s3://bucket/wh/db.db/t/lakecdc-lease.json"
    assert hash(lease) == hash(StoreLocation.of(lease.uri, {"s3.region": "x"}))


def test_local_files_are_listed_with_their_times(tmp_path: Path) -> None:
    (tmp_path / "bucket-0").mkdir()
    (tmp_path / "bucket-0" / "data-1.parquet").write_bytes(b"x")
    fs, root = open_filesystem(f"file:{tmp_path}", {})
    [entry] = list(walk_files(fs, root))
    assert (entry.name, entry.parent, entry.path) == (
        "data-1.parquet",
        "bucket-0",
        f"{tmp_path}/bucket-0/data-1.parquet",
    )
    assert entry.mtime_ms == pytest.approx((tmp_path / "bucket-0" / "data-1.parquet").stat().st_mtime * 1000, abs=1)
    assert list(walk_files(fs, f"{tmp_path}/missing")) == []


def test_leases_on_object_storage_need_boto3(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    check_lease_support("s3://b/wh")  # installed with the test dependencies
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    check_lease_support("/data/wh")  # a local warehouse needs none
    with pytest.raises(UnsupportedStore, match=r"need boto3 .*pip install 'lakecdc\[s3\]'"):
        check_lease_support("s3://b/wh")
