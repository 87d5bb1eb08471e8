"""Where a user's warehouse and checkpoint are: a relative or absolute local path, or a ``file:`` URI.

Each is resolved once, at start-up, to an absolute local path, the one form that pypaimon,
pypaimon-rust (which refuses relative paths) and lakecdc's own files beside the checkpoint all
take. Any other scheme is refused with a message naming the option: object storage (``s3://``,
``oss://``, ``gs://``, ``hdfs://``) is not supported yet, and must not silently become a local folder
(``os.path`` turns ``s3://b/x`` into ``s3:/b/x``).
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

SUPPORTED = "local paths (relative or absolute) and file: URIs"

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
        raise UnsupportedLocation(
            f"{option} '{location}': the {scheme} scheme is not supported; lakecdc supports {SUPPORTED} "
            f"(object storage such as s3://, oss://, gs:// and hdfs:// is not supported yet){hint}"
        )
    return os.path.abspath(os.path.expanduser(path))
