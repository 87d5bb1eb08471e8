"""Job state through Hadoop's ``FileSystem`` in the driver's JVM: every checkpoint location Spark's Hadoop
configuration can serve (``hdfs://``, ``viewfs://``, ``gs://`` or ``abfs://`` with their connector jars...),
reached over py4j from the active SparkSession. No pyspark import here: ingest hands over the session's
JVM view, Hadoop configuration and gateway (``Hadoop.of_session``).

``HadoopFile`` offers the part of ``Path``'s interface the state classes use (as ``sinks.state_files.StoreFile``
does for S3). Writes go to a hidden temporary file beside the target, then a rename: ``FileSystem.rename``
where the target is new (atomic on HDFS and a local disk), else ``FileContext.rename(..., OVERWRITE)``
(atomic on HDFS; HDFS's and object stores' ``FileSystem.rename`` refuse to replace a file). ``create_exclusive``
is ``FileSystem.create(path, overwrite=false)`` (the NameNode refuses a second create), whose losers wait
for the winner's complete file; a location Hadoop resolves to this machine's files (``file:``, a ``viewfs``
mount onto one) is created with a hard link instead, since Hadoop's local filesystem checks and creates in
two steps. The filesystem is a private instance (``FileSystem.newInstance``) without ``.crc`` files, so the
state files are exactly those of a local checkpoint.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXCLUSIVE_WAIT_SECONDS = 30.0  # how long a losing creator waits for the winner's file to be complete


def java_class(exc: BaseException) -> str:
    """The Java exception's class name behind a py4j error ('' for a Python error)."""
    java = getattr(exc, "java_exception", None)
    try:
        return str(java.getClass().getName()) if java is not None else ""
    except Exception:
        return ""


def java_message(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    try:
        return str(java.toString()) if java is not None else str(exc)
    except Exception:
        return str(exc)


def _is_not_found(exc: BaseException) -> bool:
    return java_class(exc) == "java.io.FileNotFoundException"


@dataclass(eq=False)
class Hadoop:
    """The driver's JVM, its Hadoop configuration and py4j gateway; one private FileSystem per
    ``scheme://authority``."""

    jvm: Any
    conf: Any
    gateway: Any
    _filesystems: dict[str, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _conf: Any = None

    @classmethod
    def of_session(cls, spark: Any) -> Hadoop:
        """From a pyspark SparkSession (its ``spark.hadoop.*`` settings are in the configuration)."""
        return cls(spark._jvm, spark._jsc.hadoopConfiguration(), spark.sparkContext._gateway)

    def path(self, uri: str) -> Any:
        return self.jvm.org.apache.hadoop.fs.Path(uri)

    def filesystem(self, uri: str) -> Any:
        """Hadoop's FileSystem for ``uri``; raises (a py4j error) when Hadoop cannot serve its scheme."""
        jpath = self.path(uri)
        key = str(jpath.toUri().getScheme()) + "://" + str(jpath.toUri().getAuthority())
        with self._lock:
            fs = self._filesystems.get(key)
            if fs is None:
                fs = self.jvm.org.apache.hadoop.fs.FileSystem.newInstance(jpath.toUri(), self._private_conf())
                fs.setWriteChecksum(False)  # no .crc files beside the state (a local disk's ChecksumFileSystem)
                self._filesystems[key] = fs
            return fs

    def _private_conf(self) -> Any:
        """A copy of Spark's Hadoop configuration whose local disk is Hadoop's raw one (no ``.crc`` files,
        also below a viewfs mount), its instances not shared with Spark's cache."""
        if self._conf is None:
            conf = self.jvm.org.apache.hadoop.conf.Configuration(self.conf)
            conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem")
            conf.set("fs.file.impl.disable.cache", "true")
            self._conf = conf
        return self._conf

    def check(self, uri: str) -> str | None:
        """None when Hadoop serves ``uri`` (its FileSystem answers whether the location exists), else why not."""
        try:
            self.filesystem(uri).exists(self.path(uri))
        except Exception as exc:
            return java_message(exc).splitlines()[0] if java_message(exc) else type(exc).__name__
        return None

    def local_path(self, uri: str) -> Path | None:
        """The local path Hadoop resolves existing ``uri`` to (``file:``, a viewfs mount onto one), else None."""
        jpath = self.path(uri)
        try:
            resolved = self.filesystem(uri).resolvePath(jpath)
        except Exception:
            return None
        if str(resolved.toUri().getScheme() or "file") != "file":
            return None
        return Path(str(resolved.toUri().getPath()))

    def replace(self, tmp: Any, target: Any, uri: str) -> None:
        """Move ``tmp`` over ``target``: a plain rename when the target is new or the filesystem
        replaces on rename (a local disk), else FileContext's rename with OVERWRITE."""
        if not self.filesystem(uri).rename(tmp, target):
            self.rename_over(tmp, target, uri)

    def rename_over(self, tmp: Any, target: Any, uri: str) -> None:
        """Rename ``tmp`` to the existing ``target``, replacing it: FileContext's rename with OVERWRITE (atomic
        on HDFS); a scheme without an AbstractFileSystem deletes, then renames."""
        fs = self.filesystem(uri)
        options = self.gateway.new_array(self.jvm.org.apache.hadoop.fs.Options.Rename, 1)
        options[0] = self.jvm.org.apache.hadoop.fs.Options.Rename.OVERWRITE
        try:
            context = self.jvm.org.apache.hadoop.fs.FileContext.getFileContext(target.toUri(), self._private_conf())
        except Exception as exc:  # no AbstractFileSystem for the scheme: delete, then rename
            if "UnsupportedFileSystemException" not in java_class(exc):
                raise
            fs.delete(target, False)
            if not fs.rename(tmp, target):
                raise OSError(f"cannot rename {tmp} to {target}") from None
            return
        context.rename(tmp, target, options)


@dataclass(frozen=True, slots=True)
class HadoopFile:
    """A file or directory of job state served by Hadoop's FileSystem, with ``Path``'s methods the state
    classes use."""

    uri: str  # scheme://authority/path, no trailing slash
    hadoop: Hadoop

    @classmethod
    def of(cls, uri: str, hadoop: Hadoop) -> HadoopFile:
        return cls(uri.rstrip("/") if not uri.endswith(":///") else uri, hadoop)

    def __str__(self) -> str:
        return self.uri

    def __truediv__(self, name: str) -> HadoopFile:
        return HadoopFile(f"{self.uri}/{name}", self.hadoop)

    @property
    def name(self) -> str:
        return self.uri.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name

    @property
    def parent(self) -> HadoopFile:
        return HadoopFile(self.uri.rsplit("/", 1)[0], self.hadoop)

    def _fs(self) -> Any:
        return self.hadoop.filesystem(self.uri)

    def _path(self) -> Any:
        return self.hadoop.path(self.uri)

    def _status(self) -> Any:
        try:
            return self._fs().getFileStatus(self._path())
        except Exception as exc:
            if _is_not_found(exc):
                return None
            raise OSError(f"cannot read {self.uri}: {java_message(exc)}") from None

    def exists(self) -> bool:
        return self._status() is not None

    def is_file(self) -> bool:
        status = self._status()
        return status is not None and bool(status.isFile())

    def is_dir(self) -> bool:
        status = self._status()
        return status is not None and bool(status.isDirectory())

    def read_bytes(self) -> bytes:
        try:
            stream = self._fs().open(self._path())
        except Exception as exc:
            if _is_not_found(exc):
                raise FileNotFoundError(f"no such file: {self.uri}") from None
            raise OSError(f"cannot read {self.uri}: {java_message(exc)}") from None
        try:
            return bytes(self.hadoop.jvm.org.apache.hadoop.io.IOUtils.readFullyToByteArray(stream))
        finally:
            stream.close()

    def read_text(self) -> str:
        return self.read_bytes().decode()

    def _write(self, path: Any, data: bytes, overwrite: bool) -> None:
        stream = self._fs().create(path, overwrite)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def write_text(self, text: str) -> int:
        """A whole new file: written to a hidden temporary file beside it, then renamed over it."""
        tmp = self.hadoop.path(f"{self.parent.uri}/.{self.name}.{uuid.uuid4().hex}.tmp")
        try:
            self._write(tmp, text.encode(), overwrite=False)
            self.hadoop.replace(tmp, self._path(), self.uri)
        except Exception as exc:
            with contextlib.suppress(Exception):
                self._fs().delete(tmp, False)
            raise OSError(f"cannot write {self.uri}: {java_message(exc)}") from None
        return len(text)

    def unlink(self, missing_ok: bool = False) -> None:
        if not self.is_file():
            if missing_ok:
                return
            raise FileNotFoundError(f"no such file: {self.uri}")
        self._fs().delete(self._path(), False)

    def mkdir(self, parents: bool = False, exist_ok: bool = False) -> None:
        self._fs().mkdirs(self._path())

    def iterdir(self) -> Iterator[HadoopFile]:
        try:
            statuses = self._fs().listStatus(self._path())
        except Exception as exc:
            if _is_not_found(exc):
                raise FileNotFoundError(f"no such directory: {self.uri}") from None
            raise OSError(f"cannot list {self.uri}: {java_message(exc)}") from None
        for status in statuses:
            yield self / str(status.getPath().getName())

    def glob(self, pattern: str) -> Iterator[HadoopFile]:
        """The entries directly in this directory whose names match ``pattern`` (no ``/`` or ``**``)."""
        import fnmatch

        try:
            entries = list(self.iterdir())
        except FileNotFoundError:
            return
        yield from (e for e in entries if fnmatch.fnmatchcase(e.name, pattern))

    def local_path(self) -> Path | None:
        """This file's path on this machine when Hadoop resolves its directory to local files."""
        self.parent.mkdir(parents=True, exist_ok=True)
        parent = self.hadoop.local_path(self.parent.uri)
        return parent / self.name if parent is not None else None

    def create_exclusive(self, text: str) -> bool:
        """Write ``text`` unless the file exists; whether this call created it. A loser returns once the
        winner's file is complete (non-empty), so that both read the same text."""
        try:
            self._write(self._path(), text.encode(), overwrite=False)
        except Exception as exc:
            if "FileAlreadyExistsException" not in java_class(exc) and "already exists" not in java_message(exc):
                raise OSError(f"cannot create {self.uri}: {java_message(exc)}") from None
            deadline = time.monotonic() + EXCLUSIVE_WAIT_SECONDS
            while not self.read_bytes() and time.monotonic() < deadline:
                time.sleep(0.05)  # the winner's stream is still open
            return False
        return True

    def lease_files(self, name: str, token: str) -> HadoopLeaseFiles:
        """The lease file ``name`` in this directory, for ``sinks.write.lease``."""
        return HadoopLeaseFiles(self / name, token)


class HadoopLeaseFiles:
    """A lease file on a Hadoop filesystem: created with ``create(overwrite=false)`` (exclusive on HDFS),
    replaced only when it still holds what was read (read, compare, then rename over it: a narrow window
    in which two renewals can cross, which HDFS has no conditional replace to close)."""

    def __init__(self, path: HadoopFile, token: str) -> None:
        self.path, self.token = path, token
        self._lock = threading.Lock()

    def locked(self) -> Any:
        return self._lock

    def get(self) -> tuple[str | None, Any]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return None, None
        return text, text

    def put(self, text: str, version: Any) -> bool:
        if version is None:
            return self.path.create_exclusive(text)
        current, _ = self.get()
        if current != version:
            return False  # another job wrote the lease since get()
        self.path.write_text(text)
        return True

    def delete(self, version: Any) -> None:
        self.path.unlink(missing_ok=True)
