"""The job's state beside its checkpoint (commit user, tables files, snapshot registry, schema history,
markers), read and written by the driver only, through one layer that understands the checkpoint's location.

``state_path(checkpoint)`` is a ``pathlib.Path`` for a local path (a ``file:`` URI's path), so local state
is exactly what it always was (same names, same contents, tmp + ``os.replace`` writes); for ``s3://`` or
``s3a://`` it is a ``StoreFile``: the same small part of ``Path``'s interface (``/``, ``name``, ``parent``,
``exists``, ``is_file``, ``is_dir``, ``read_text``, ``write_text``, ``iterdir``, ``glob``, ``unlink``,
``mkdir``) over pyarrow's ``S3FileSystem`` (``sinks.filesystem.open_filesystem``). An object appears whole
with its PUT, so every write is atomic there without a temporary file; ``create_once`` is a conditional PUT
(``If-None-Match: *``, through boto3 as the table leases).

The store's options are the job's catalog options (``set_store_options``, once at start-up: one endpoint
and one set of keys for the warehouse and the checkpoint), and what they lack from the AWS_* environment
(``sinks.filesystem.with_environment``). Any other scheme (``hdfs://``, ``gs://``, ``abfs://``...) is refused
by ``check_state_location`` before anything is read or written, unless the job has handed over Spark's
Hadoop (``use_hadoop``): then every other scheme Hadoop serves is a ``sinks.hadoop_files.HadoopFile``
(``hdfs://``, ``viewfs://``, ``gs://`` with its connector...), written through Hadoop's FileSystem in the
driver's JVM.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sinks.filesystem import StoreLocation, UnsupportedStore, open_filesystem, scheme, with_environment
from sinks.hadoop_files import Hadoop, HadoopFile

if TYPE_CHECKING:
    import pyarrow.fs as pafs

STATE_STORE_SCHEMES = ("s3", "s3a")  # served through pyarrow's S3FileSystem
SUPPORTED = "local paths, file: URIs, s3:// and s3a:// (S3-compatible object storage)"

_options: dict[str, str] = {}
_hadoop: list[tuple[Hadoop, bool]] = []  # the driver's Hadoop (at most one), and whether file: URIs use it


def use_hadoop(hadoop: Hadoop | None, file_uris: bool = False) -> None:
    """Serve every scheme that neither the local disk nor pyarrow's S3 serves through ``hadoop`` (None: stop);
    ``file_uris`` sends ``file:`` URIs through it too (plain paths stay local), to test this layer."""
    _hadoop.clear()
    if hadoop is not None:
        _hadoop.append((hadoop, file_uris))


def hadoop_in_use() -> bool:
    return bool(_hadoop)


def needs_hadoop(location: str) -> bool:
    """Whether job state at ``location`` is kept through Hadoop's FileSystem (a scheme only the JVM serves)."""
    found = scheme(location)
    if found in STATE_STORE_SCHEMES:
        return False
    if found == "file":
        return bool(_hadoop) and _hadoop[0][1]
    return found is not None


def set_store_options(options: Mapping[str, str]) -> None:
    """The ``s3.*`` options (any of Paimon's spellings) that reach an object-store checkpoint: the job's
    ``--catalog-conf``; the AWS_* environment fills what they lack."""
    _options.clear()
    _options.update({str(k): str(v) for k, v in options.items()})


def is_store(location: str) -> bool:
    return scheme(location) in STATE_STORE_SCHEMES


def check_state_location(location: str, what: str = "checkpoint") -> None:
    """At start-up: ``UnsupportedStore`` for a location this layer cannot keep job state in, naming the
    scheme and what is supported; and boto3 for an object store (``create_once``, the leases)."""
    found = scheme(location)
    if needs_hadoop(location):
        if not _hadoop:
            raise UnsupportedStore(
                f"{what} {location}: lakecdc keeps its job state beside the checkpoint and cannot reach "
                f"{found}:// locations without Spark's Hadoop (the job's session); supported are {SUPPORTED}, "
                "and through Spark's Hadoop any scheme it serves"
            )
        check_hadoop_serves(location, what)
        return
    if found in (None, "file"):
        return
    import importlib.util

    if importlib.util.find_spec("boto3") is None:
        raise UnsupportedStore(
            f"{what} {location}: job state on object storage needs boto3 for S3's conditional writes "
            "(If-None-Match): pip install 'lakecdc[s3]' (or boto3)"
        )


def check_hadoop_serves(location: str, what: str = "checkpoint") -> None:
    """``UnsupportedStore`` unless the Hadoop handed over by ``use_hadoop`` serves ``location`` (Spark's own
    checkpoint there, and job state for the schemes pyarrow does not serve), naming the scheme and the cure."""
    found = scheme(location)
    problem = _hadoop[0][0].check(location) if _hadoop else "no Spark session"
    if problem is not None:
        raise UnsupportedStore(
            f"{what} {location}: Spark's Hadoop cannot serve {found}:// ({problem}); put the filesystem's "
            f"connector jar on Spark's classpath (--spark-conf spark.jars=... or spark.jars.packages=...) and "
            f"its settings in --spark-conf spark.hadoop.fs.{found}.*=... (or core-site.xml), or use {SUPPORTED}"
        )


def local_path(location: str) -> Path:
    """A plain path, or a ``file:`` URI's path (``file:/x``, ``file:///x``, ``file://localhost/x``)."""
    if scheme(location) == "file" or location.lower().startswith("file:"):
        rest = location[len("file:") :]
        if rest.startswith("//"):
            rest = rest[2:]
            rest = rest[len("localhost") :] if rest.lower().startswith("localhost/") else rest
        return Path(rest)
    return Path(location)


@functools.lru_cache(maxsize=8)
def _filesystem(options: tuple[tuple[str, str], ...]) -> pafs.FileSystem:
    fs, _ = open_filesystem("s3://bucket", dict(options))
    return fs


@dataclass(frozen=True, slots=True)
class StoreFile:
    """A file or directory of job state on object storage, with ``Path``'s methods the state classes use."""

    uri: str  # s3://bucket/key or s3a://bucket/key, no trailing slash
    options: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, uri: str, options: Mapping[str, str]) -> StoreFile:
        return cls(uri.rstrip("/"), tuple(sorted((str(k), str(v)) for k, v in options.items())))

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, name: str) -> StoreFile:
        return StoreFile(f"{self.uri}/{name}", self.options)

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name

    @property
    def parent(self) -> StoreFile:
        return StoreFile(self.uri.rsplit("/", 1)[0], self.options)

    @property
    def location(self) -> StoreLocation:
        """The same place as ``sinks.filesystem`` names it (the leases take it)."""
        return StoreLocation("s3://" + self._key_path, self.options)

    @property
    def _key_path(self) -> str:  # bucket/key, as pyarrow names it
        return self.uri.split("://", 1)[1]

    def _fs(self) -> pafs.FileSystem:
        return _filesystem(self.options)

    def _type(self) -> Any:
        return self._fs().get_file_info(self._key_path).type

    def exists(self) -> bool:
        import pyarrow.fs as pafs

        return bool(self._type() != pafs.FileType.NotFound)

    def is_file(self) -> bool:
        import pyarrow.fs as pafs

        return bool(self._type() == pafs.FileType.File)

    def is_dir(self) -> bool:
        import pyarrow.fs as pafs

        return bool(self._type() == pafs.FileType.Directory)

    def read_text(self) -> str:
        if not self.is_file():
            raise FileNotFoundError(f"no such object: {self.uri}")
        with self._fs().open_input_stream(self._key_path) as stream:
            return bytes(stream.read()).decode()

    def write_text(self, text: str) -> int:
        """One PUT: the object appears whole or not at all."""
        data = text.encode()
        with self._fs().open_output_stream(self._key_path) as stream:
            stream.write(data)
        return len(text)

    def unlink(self, missing_ok: bool = False) -> None:
        if not self.is_file():
            if missing_ok:
                return
            raise FileNotFoundError(f"no such object: {self.uri}")
        self._fs().delete_file(self._key_path)

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        """Nothing to do: a directory on object storage is the prefix of the objects in it."""

    def iterdir(self) -> Iterator[StoreFile]:
        import pyarrow.fs as pafs

        infos = self._fs().get_file_info(pafs.FileSelector(self._key_path, allow_not_found=True))
        if not infos and not self.is_dir():
            raise FileNotFoundError(f"no such directory: {self.uri}")
        for info in infos:
            yield self / info.base_name

    def glob(self, pattern: str) -> Iterator[StoreFile]:
        """The entries directly in this directory whose names match ``pattern`` (no ``/`` or ``**``)."""
        try:
            entries = list(self.iterdir())
        except FileNotFoundError:
            return
        yield from (e for e in entries if fnmatch.fnmatchcase(e.name, pattern))

    def create_exclusive(self, text: str) -> bool:
        """Write ``text`` unless the object exists (``If-None-Match: *``); whether this call created it."""
        location = self.location
        client = location.client()
        try:
            client.put_object(Bucket=location.bucket, Key=location.key, Body=text.encode(), IfNoneMatch="*")
        except Exception as exc:
            code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
            if code in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                return False
            raise OSError(f"cannot write {self.uri}: {exc}") from exc
        return True


StatePath = Path | StoreFile | HadoopFile


def state_path(location: str | StatePath) -> StatePath:
    """``location`` (a checkpoint, or a file beside it) as a local ``Path`` or a ``StoreFile``."""
    if isinstance(location, (Path, StoreFile, HadoopFile)):
        return location
    if is_store(location):
        return StoreFile.of(location, with_environment("s3://" + location.split("://", 1)[1], _options))
    if needs_hadoop(location) and _hadoop:
        return HadoopFile.of(location, _hadoop[0][0])
    check_state_location(location)
    return local_path(location)


def lease_directory(location: str) -> Path | StoreLocation | HadoopFile:
    """Where the checkpoint's lease is kept (``sinks.write.lease`` takes a ``Path``, a ``StoreLocation`` or a
    ``HadoopFile``): a Hadoop location that resolves to this machine's files is that local directory, so the
    lease is held under ``flock`` as on a local checkpoint."""
    path = state_path(location)
    if isinstance(path, StoreFile):
        return path.location
    if isinstance(path, HadoopFile):
        path.mkdir(parents=True, exist_ok=True)
        return path.hadoop.local_path(path.uri) or path
    return path


def matching(directory: StatePath, pattern: str) -> list[StatePath]:
    """The entries directly in ``directory`` whose names match ``pattern``, by name (none when it is missing)."""
    found: list[StatePath] = list(directory.glob(pattern))
    return sorted(found, key=lambda p: p.name)


def write_atomically(path: StatePath, text: str) -> None:
    """Replace ``path`` with ``text`` so a reader (or a crash) never sees half a file: a local file through
    a temporary file beside it and ``os.replace``, an object with one PUT, a Hadoop file through a temporary
    file and a rename."""
    if isinstance(path, (StoreFile, HadoopFile)):
        path.write_text(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def create_once(path: StatePath, text: str) -> bool:
    """Create ``path`` holding ``text`` unless it exists; two racing creators: one wins, both then read
    the winner's complete file. Whether this call created it."""
    if isinstance(path, HadoopFile):  # Hadoop's local disk checks, then creates: link as below instead
        local = path.local_path()
        if local is None:
            return path.create_exclusive(text)
        path = local
    if isinstance(path, StoreFile):
        return path.create_exclusive(text)
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4()}")
    tmp.write_text(text)
    try:
        os.link(tmp, path)  # fails if another start created it first
    except FileExistsError:
        return False
    finally:
        tmp.unlink()
    return True
