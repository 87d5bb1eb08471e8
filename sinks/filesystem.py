"""The one filesystem layer for what lakecdc itself reads and writes in a warehouse: a local path or an
``s3://`` URI (S3-compatible object storage).

Paimon's own files go through pypaimon's ``file_io`` and pypaimon-rust's opendal store; lakecdc's own
work in the warehouse (listing a table's files for orphan removal, a table's lease) goes through here,
with the same catalog options, so both see the same store:

=========================  ============================================  ==============================
option (``--catalog-conf``) also read as (pypaimon's spellings)          from the environment when unset
=========================  ============================================  ==============================
``s3.endpoint``            ``s3a.``/``fs.s3.``/``fs.s3a.endpoint``       ``AWS_ENDPOINT_URL_S3``, ``AWS_ENDPOINT_URL``
``s3.region``              ``…region``                                   ``AWS_REGION``, ``AWS_DEFAULT_REGION``
``s3.access-key``          ``…access.key``, ``fs.s3.accessKeyId``        ``AWS_ACCESS_KEY_ID``
``s3.secret-key``          ``…secret.key``, ``fs.s3.accessKeySecret``    ``AWS_SECRET_ACCESS_KEY``
``s3.session-token``       ``…session.token``                            ``AWS_SESSION_TOKEN``
``s3.path.style.access``   ``…path-style-access``                        (false: virtual-hosted buckets)
=========================  ============================================  ==============================

``with_environment`` copies the environment's values into the options once, at start-up, so pypaimon,
pypaimon-rust (also on Spark's executors) and this module all get the same ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow.fs as pafs

OBJECT_STORE_SCHEMES = ("s3",)

_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_PREFIXES = ("s3.", "s3a.", "fs.s3.", "fs.s3a.")
# our spelling -> the other names pypaimon reads for it (pypaimon-rust reads the s3. ones)
_NAMES: dict[str, tuple[str, ...]] = {
    "endpoint": ("endpoint",),
    "region": ("region",),
    "access-key": ("access-key", "access.key", "accessKeyId"),
    "secret-key": ("secret-key", "secret.key", "accessKeySecret"),
    "session-token": ("session-token", "session.token", "securityToken", "security-token", "security.token"),
    "path.style.access": ("path.style.access", "path-style-access"),
}
_ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "endpoint": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
    "region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
    "access-key": ("AWS_ACCESS_KEY_ID",),
    "secret-key": ("AWS_SECRET_ACCESS_KEY",),
    "session-token": ("AWS_SESSION_TOKEN",),
}


def scheme(location: str) -> str | None:
    """The URI scheme of ``location`` (lower case), None for a plain path (``file:`` URIs included)."""
    match = _URI.match(location)
    return match.group(1).lower() if match else None


def is_object_store(location: str) -> bool:
    return scheme(location) in OBJECT_STORE_SCHEMES


def s3_option(options: Mapping[str, str], name: str) -> str | None:
    """The value of S3 option ``name`` (``endpoint``, ``access-key``, ...) under any spelling pypaimon reads."""
    for prefix in _PREFIXES:
        for spelling in _NAMES[name]:
            value = options.get(prefix + spelling)
            if value is not None and str(value).strip():
                return str(value).strip()
    return None


def with_environment(
    warehouse: str, options: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """``options`` plus, for an object-store warehouse, the ``s3.*`` settings the options lack and the
    environment gives (``AWS_ACCESS_KEY_ID`` ...). A local warehouse's options come back unchanged."""
    out = dict(options)
    if not is_object_store(warehouse):
        return out
    env = os.environ if environ is None else environ
    for name, variables in _ENVIRONMENT.items():
        if s3_option(out, name) is None:
            value = next((env[v] for v in variables if env.get(v)), None)
            if value is not None:
                out[f"s3.{name}"] = value
    return out


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "true"


def _endpoint_url(endpoint: str) -> str:
    return endpoint if "://" in endpoint else f"https://{endpoint}"


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """A directory (or file) on object storage, with the catalog options that reach it."""

    uri: str  # s3://bucket/key, no trailing slash
    options: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, uri: str, options: Mapping[str, str]) -> StoreLocation:
        return cls(uri.rstrip("/"), tuple(sorted((str(k), str(v)) for k, v in options.items())))

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, name: str) -> StoreLocation:
        return StoreLocation(f"{self.uri}/{name}", self.options)

    @property
    def bucket(self) -> str:
        return self.uri.split("://", 1)[1].split("/", 1)[0]

    @property
    def key(self) -> str:
        rest = self.uri.split("://", 1)[1]
        return rest.split("/", 1)[1] if "/" in rest else ""

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1]

    def client(self) -> Any:
        """A boto3 S3 client for this location's store: the conditional writes of the table leases
        (``If-None-Match`` / ``If-Match``), which pyarrow's filesystem does not offer."""
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise UnsupportedStore(
                f"the table leases on {self.uri} need boto3 for S3's conditional writes: "
                "pip install 'lakecdc[s3]' (or boto3)"
            ) from None
        options = dict(self.options)
        endpoint = s3_option(options, "endpoint")
        path_style = _truthy(s3_option(options, "path.style.access"))
        return boto3.client(
            "s3",
            endpoint_url=_endpoint_url(endpoint) if endpoint else None,
            region_name=s3_option(options, "region") or "us-east-1",
            aws_access_key_id=s3_option(options, "access-key"),
            aws_secret_access_key=s3_option(options, "secret-key"),
            aws_session_token=s3_option(options, "session-token"),
            config=Config(
                s3={"addressing_style": "path" if path_style else "auto"},
                retries={"max_attempts": 5, "mode": "standard"},
            ),
        )


class UnsupportedStore(ValueError):
    """An object store lakecdc cannot serve as asked; the message says what is needed."""


def check_lease_support(location: str) -> None:
    """At start-up: the table leases on an object-store warehouse need boto3 (``UnsupportedStore``)."""
    import importlib.util

    if is_object_store(location) and importlib.util.find_spec("boto3") is None:
        raise UnsupportedStore(
            f"--warehouse {location}: the table leases on object storage need boto3 for S3's conditional "
            "writes (If-None-Match / If-Match): pip install 'lakecdc[s3]' (or boto3)"
        )


Directory = Path | StoreLocation


def directory(location: str, options: Mapping[str, str]) -> Directory:
    """``location`` as a local ``Path`` (a ``file:`` URI's path) or a ``StoreLocation``."""
    if is_object_store(location):
        return StoreLocation.of(location, options)
    return Path(location.removeprefix("file://").removeprefix("file:"))


def open_filesystem(location: str, options: Mapping[str, str]) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem for ``location`` and the path to give it: the local filesystem, or an
    ``S3FileSystem`` built from the same options pypaimon builds its own from."""
    import pyarrow.fs as pafs

    if not is_object_store(location):
        return pafs.LocalFileSystem(), str(directory(location, options))
    endpoint = s3_option(options, "endpoint")
    access_key = s3_option(options, "access-key")
    if access_key:
        os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")  # as pypaimon: no metadata-service probe
    fs = pafs.S3FileSystem(
        endpoint_override=endpoint,
        access_key=access_key,
        secret_key=s3_option(options, "secret-key"),
        session_token=s3_option(options, "session-token"),
        region=s3_option(options, "region"),
        force_virtual_addressing=not _truthy(s3_option(options, "path.style.access")),
    )
    return fs, location.split("://", 1)[1].rstrip("/")


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # as the filesystem names it (no scheme)
    name: str
    parent: str  # the name of the directory holding it
    mtime_ms: float


def walk_files(fs: pafs.FileSystem, root: str) -> Iterator[FileEntry]:
    """Every file below ``root`` (recursively), with its modification time."""
    import pyarrow.fs as pafs

    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True)):
        if info.type != pafs.FileType.File:
            continue
        parent = info.path.rsplit("/", 1)[0] if "/" in info.path else ""
        mtime = info.mtime.timestamp() * 1000 if info.mtime is not None else 0.0
        yield FileEntry(info.path, info.base_name, parent.rsplit("/", 1)[-1], mtime)
