"""The job-state layer (sinks.state_files) without a server: which locations are local, which are object
storage and which are refused, how an object-store location is named, and the local writes (the same
files as before the layer: tmp + os.replace, a commit user linked into place).
tests/integration/s3/test_s3_job_state.py runs every state class through a moto-backed bucket."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sinks.filesystem import StoreLocation, UnsupportedStore
from sinks.state_files import (
    StoreFile,
    check_state_location,
    create_once,
    lease_directory,
    local_path,
    matching,
    set_store_options,
    state_path,
    write_atomically,
)


@pytest.fixture(autouse=True)
def no_options(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(variable, raising=False)
    set_store_options({})
    yield
    set_store_options({})


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/data/ckpt", "/data/ckpt"),
        ("relative/ckpt", "relative/ckpt"),
        ("file:/data/ckpt", "/data/ckpt"),
        ("file:///data/ckpt", "/data/ckpt"),
        ("file://localhost/data/ckpt", "/data/ckpt"),
    ],
)
def test_plain_paths_and_file_uris_are_local_paths(location: str, expected: str) -> None:
    assert local_path(location) == Path(expected)
    assert state_path(location) == Path(expected)
    check_state_location(location)


@pytest.mark.parametrize("location", ["s3://bucket/ckpt/job", "s3a://bucket/ckpt/job", "S3://bucket/ckpt/job/"])
def test_s3_locations_are_store_files(location: str) -> None:
    check_state_location(location)
    path = state_path(location)
    assert isinstance(path, StoreFile) and str(path) == location.rstrip("/")
    child = path / "lakecdc-mysql-schema" / "00000000000000000042.json"
    assert (child.name, child.stem, child.parent.name) == (
        "00000000000000000042.json",
        "00000000000000000042",
        "lakecdc-mysql-schema",
    )
    assert child.parent.parent == path
    # the leases name the place as sinks.filesystem does, whatever the S3 scheme's spelling
    lease = lease_directory(location)
    assert isinstance(lease, StoreLocation)
    assert (lease.bucket, lease.key, lease.uri) == ("bucket", "ckpt/job", "s3://bucket/ckpt/job")


@pytest.mark.parametrize(
    "location", ["hdfs://nn:8020/ckpt", "gs://bucket/ckpt", "abfs://c@acct.dfs.core.windows.net/ckpt", "oss://b/c"]
)
def test_other_schemes_are_refused_naming_the_scheme_and_what_works(location: str) -> None:
    scheme = location.split("://", 1)[0]
    with pytest.raises(UnsupportedStore, match=rf"cannot reach {scheme}://.*file: URIs, s3:// and s3a://"):
        check_state_location(location)
    with pytest.raises(UnsupportedStore):
        state_path(location)


def test_the_store_options_are_the_jobs_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    set_store_options({"s3.access-key": "conf-key", "s3.path.style.access": "true"})
    path = state_path("s3://b/ckpt")
    assert isinstance(path, StoreFile)
    options = dict(path.options)
    assert options["s3.access-key"] == "conf-key" and options["s3.endpoint"] == "http://127.0.0.1:9000"
    assert options["s3.path.style.access"] == "true"
    # a local checkpoint takes none of them
    assert isinstance(state_path("/data/ckpt"), Path)


def test_local_writes_replace_whole_files_and_leave_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "new" / "dir" / "lakecdc-tables.json"
    write_atomically(target, '["a"]')
    write_atomically(target, '["a", "b"]')
    assert target.read_text() == '["a", "b"]'
    assert [p.name for p in target.parent.iterdir()] == ["lakecdc-tables.json"]


def test_a_local_file_is_created_once(tmp_path: Path) -> None:
    target = tmp_path / "ckpt" / "lakecdc-commit-user"
    assert create_once(target, "first")
    assert not create_once(target, "second")
    assert target.read_text() == "first"
    assert [p.name for p in target.parent.iterdir()] == ["lakecdc-commit-user"]  # the temporary went


def test_matching_entries_come_by_name(tmp_path: Path) -> None:
    assert matching(tmp_path / "missing", "*.json") == []
    for name in ("00000000000000000010.json", "start.json", "00000000000000000002.json", "x.tmp"):
        (tmp_path / name).write_text("{}")
    found = matching(tmp_path, "[0-9]*.json")
    assert [p.name for p in found] == ["00000000000000000002.json", "00000000000000000010.json"]
