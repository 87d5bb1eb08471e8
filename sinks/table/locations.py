"""Where a user's warehouse and checkpoint are: a relative or absolute local path, or a ``file:`` URI;
the warehouse may also be an ``s3://bucket/path`` URI (S3-compatible object storage, ``sinks.filesystem``).

The checkpoint may also be a URI of any other scheme (``hdfs://nn/ck``, ``s3a://b/ck``, ``viewfs://c/ck``):
it is kept as given, and the job asks Spark's Hadoop at start-up whether it can serve it
(``sinks.state_files.check_state_location``), since only Spark's classpath and configuration tell.

Each is resolved once, at start-up: a local one to an absolute local path, the one form that pypaimon,
pypaimon-rust (which refuses relative paths) and lakecdc's own files beside the checkpoint all
take; an ``s3://`` warehouse to ``s3://bucket/path`` without a trailing slash. Any other scheme is
refused with a message naming the option: ``s3a://``, ``oss://``, ``gs://``, ``hdfs://`` warehouses are
not supported, and must not silently become a local folder
(``os.path`` turns ``s3://b/x`` into ``s3:/b/x``).
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

SUPPORTED = "local paths (relative or absolute) and file: URIs"
WAREHOUSE_SUPPORTED = f"{SUPPORTED}, and s3://bucket/path on S3-compatible object storage"
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")

# RFC 3986: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), followed by ":".
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


class UnsupportedLocation(ValueError):
    """A location lakecdc cannot serve; the message names the option, the value and what is supported."""


def resolve_location(location: str, option: str = "--warehouse") -> str:
    """The absolute, normalised local path of ``location``, resolved against the current directory.

    Accepts ``wh``, ``./wh``, ``~/wh``, ``/data/wh``, ``file:/data/wh``, ``file:///data/wh`` and
    ``file://localhost/data/wh`` (percent-escapes decoded). ``option`` names the setting in messages.
    """
    text = location.strip()
    if not text:
        raise UnsupportedLocation(f"{option} is empty: give a local path or a file: URI")
    match = _SCHEME.match(text)
    if match is None:
        path = text
    elif match.group(1).lower() == "file":
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost"):
            raise UnsupportedLocation(
                f"{option} '{location}': a file: URI names a path on this machine (file:///path), "
                f"not on host '{parts.netloc}'"
            )
        if parts.query or parts.fragment:
            raise UnsupportedLocation(f"{option} '{location}': a file: URI takes no '?' or '#' part")
        path = unquote(parts.path)
        if not path:
            raise UnsupportedLocation(f"{option} '{location}' names no path")
    else:
        # "my:dir" may be a folder name with a colon; "s3://b/x" is not.
        uri = text[match.end() :].startswith("//")
        scheme = f"{match.group(1)}:" + ("//" if uri else "")
        hint = "" if uri else f"; a local path with a ':' is written ./{text}"
        if uri and match.group(1).lower() == "s3":
            raise UnsupportedLocation(
                f"{option} '{location}' must be a local or shared filesystem path ({SUPPORTED}): s3:// is "
                "supported for a warehouse only (--warehouse, the Paimon reader's option 'warehouse'); the Spark "
                "checkpoint and lakecdc's job state beside it stay on a local or shared path (Spark here has no "
                "S3 filesystem)"
            )
        raise UnsupportedLocation(
            f"{option} '{location}': the {scheme} scheme is not supported; lakecdc supports {SUPPORTED} "
            f"(and s3://bucket/path for a warehouse; oss://, gs://, hdfs:// and s3a:// are not supported){hint}"
        )
    return os.path.abspath(os.path.expanduser(path))


def resolve_warehouse(location: str, option: str = "--warehouse") -> str:
    """``resolve_location`` for a warehouse, which may also be ``s3://bucket[/path]`` (returned as
    ``s3://bucket/path``, no trailing slash, no ``.``/``..`` segments)."""
    text = location.strip()
    match = _SCHEME.match(text)
    if match is None or match.group(1).lower() != "s3" or not text[match.end() :].startswith("//"):
        return resolve_location(location, option)
    parts = urlsplit(text)
    if parts.query or parts.fragment or parts.username or parts.password or parts.port:
        raise UnsupportedLocation(
            f"{option} '{location}': an s3:// warehouse is s3://bucket/path, with no credentials, port, '?' or "
            "'#' in it (the endpoint and keys go in --catalog-conf s3.endpoint=..., s3.access-key=..., or "
            "the AWS_* environment variables)"
        )
    bucket = parts.netloc
    if not _BUCKET.match(bucket):
        raise UnsupportedLocation(f"{option} '{location}': '{bucket}' is not an S3 bucket name")
    segments = [s for s in parts.path.split("/") if s]
    if any(s in (".", "..") for s in segments):
        raise UnsupportedLocation(f"{option} '{location}': an s3:// path takes no '.' or '..' segment")
    return "/".join([f"s3://{bucket}", *segments])


def resolve_checkpoint(location: str, option: str = "--checkpoint") -> str:
    """``resolve_location`` for a checkpoint, which may also be a ``scheme://authority/path`` URI of a
    filesystem Spark's Hadoop serves (returned without a trailing slash; whether Hadoop serves it is
    checked when the job starts Spark)."""
    text = location.strip()
    match = _SCHEME.match(text)
    if match is None or match.group(1).lower() == "file" or not text[match.end() :].startswith("//"):
        return resolve_location(location, option)
    parts = urlsplit(text)
    if parts.query or parts.fragment or parts.password:
        raise UnsupportedLocation(
            f"{option} '{location}': a checkpoint URI takes no '?', '#' or password (credentials go in "
            "--spark-conf spark.hadoop.fs.<scheme>.*=... or the store's own configuration)"
        )
    if not parts.netloc and not parts.path.strip("/"):
        raise UnsupportedLocation(f"{option} '{location}' names no location")
    if any(s in (".", "..") for s in parts.path.split("/")):
        raise UnsupportedLocation(f"{option} '{location}': a checkpoint URI takes no '.' or '..' segment")
    scheme = match.group(1).lower()
    return f"{scheme}:{text[match.end() :]}".rstrip("/")
