"""Database and table names that are safe to become Paimon identifiers, and so directory names.

Paimon's filesystem catalog keeps table ``db.t`` in ``<warehouse>/db.db/t``: each name is one path
component. Names come from messages (any Kafka format) and from the MySQL server, so they are
untrusted: ``../../x`` would put a table outside the warehouse. ``unsafe_reason`` says why a name
cannot be one (None when it can); the rules, and why each exists:

- empty or only white space: no directory (Paimon: "fullName cannot be null or empty");
- ``.`` and ``..``, or any name starting with ``.``: the directory itself, its parent, or a hidden
  name that pypaimon's ``list_tables`` skips;
- ``/`` or ``\\``: a path separator (``\\`` on Windows, and an escape character elsewhere);
- control characters (NUL, C0, DEL, C1), line and paragraph separators, bidirectional overrides
  and lone surrogates: not printable, not encodable as UTF-8, or shown as another name;
- a backquote: Paimon's identifier parsers take it for quoting (pypaimon's
  ``Identifier.from_string("db.a`b`c")`` is table ``abc``), so the name would mean another table;
- in a table name ``$``: Paimon's separator of system tables and branches (``t$snapshots``,
  ``t$branch_b``); in a database name ``.``: the separator of ``database.table``, so the first dot
  of an identifier ends the database (Paimon Java and pypaimon split there) and a dot inside a
  table name is fine (``db.a.b`` is table ``a.b``, as in Paimon);
- longer than a file name may be: 255 bytes of UTF-8, with the ``.db`` suffix of a database.

``UnsafeNameError`` is a ``MalformedMessage``: a message that names such a table is bad input,
dead-lettered or stopping the job like any other. ``UnsafeIdentifierError`` is the same refusal
for a name given on the command line or reaching the catalog (a ``ValueError``).
"""

from __future__ import annotations

import unicodedata

from schema_evolution.errors import LakeCdcError, MalformedMessage, SourcePosition

# Longest file name on the filesystems lakecdc runs on (ext4, xfs, btrfs, tmpfs: NAME_MAX).
NAME_MAX_BYTES = 255
# pypaimon's and Paimon's filesystem catalog: database ``db`` is the directory ``db.db``.
DATABASE_SUFFIX = ".db"
SHOWN_CHARACTERS = 60

# Characters that display as something else: bidirectional embeddings, overrides and isolates.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Unicode categories refused: control (Cc), surrogate (Cs), line and paragraph separators (Zl, Zp).
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def shown(name: str) -> str:
    """``name`` for an error text: quoted and escaped like ``repr`` (control characters visible),
    cut after ``SHOWN_CHARACTERS`` characters with the full length said."""
    if len(name) <= SHOWN_CHARACTERS:
        return repr(name)
    return f"{name[:SHOWN_CHARACTERS]!r}... ({len(name)} characters)"


def _bad_character(name: str) -> str | None:
    for ch in name:
        if ch in _BIDI_CONTROLS or unicodedata.category(ch) in _REFUSED_CATEGORIES:
            return ch
    return None


def unsafe_reason(name: str, kind: str = "table") -> str | None:
    """Why ``name`` cannot be a Paimon ``kind`` ("database" or "table") name, None when it can.

    Pure and cheap; callers cache the verdict per name (the router does, per source table)."""
    if not name:
        return "the name is empty"
    if not name.strip():
        return "the name is only white space"
    if name in (".", ".."):
        return f"'{name}' names a directory itself or its parent, not a new one"
    if "/" in name or "\\" in name:
        return "the name contains a path separator ('/' or '\\')"
    bad = _bad_character(name)
    if bad is not None:
        return f"the name contains the control character U+{ord(bad):04X} ({unicodedata.name(bad, 'unnamed')})"
    if name.startswith("."):
        return "the name starts with '.': a hidden directory, which Paimon's catalog does not list"
    if "`" in name:
        return "the name contains '`', which Paimon's identifier parser reads as quoting (another table's name)"
    if kind == "database":
        if "." in name:
            return "a database name cannot contain '.', the separator of Paimon's 'database.table'"
    elif "$" in name:
        return "a table name cannot contain '$', Paimon's separator of system tables and branches (t$snapshots)"
    suffix = DATABASE_SUFFIX if kind == "database" else ""
    size = len((name + suffix).encode("utf-8"))
    if size > NAME_MAX_BYTES:
        with_suffix = f" with Paimon's '{suffix}' suffix" if suffix else ""
        return (
            f"the name is {size} bytes in UTF-8{with_suffix}, longer than the {NAME_MAX_BYTES} bytes of a "
            f"directory name"
        )
    return None


class UnsafeIdentifierError(LakeCdcError, ValueError):
    """A database or table name given on the command line, or reaching the catalog, that is not
    safe as a directory name (see ``unsafe_reason``). Nothing was created for it."""

    def __init__(self, kind: str, name: str, reason: str, where: str = "") -> None:
        self.kind, self.name, self.reason = kind, name, reason
        origin = f"{where}: " if where else ""
        super().__init__(
            f"{origin}{kind} name {shown(name)} is refused: {reason}. Paimon keeps each database and table in a "
            f"directory named after it inside the warehouse; nothing was created for this name"
        )


def check_name(name: str, kind: str = "table", where: str = "") -> str:
    """``name`` itself, or ``UnsafeIdentifierError`` (``where`` names its origin, e.g. the option)."""
    reason = unsafe_reason(name, kind)
    if reason is not None:
        raise UnsafeIdentifierError(kind, name, reason, where)
    return name


def split_identifier(identifier: str, where: str = "") -> tuple[str, str]:
    """``database.table`` split at its first dot (as Paimon and pypaimon do), each part checked."""
    database, dot, table = identifier.partition(".")
    if not dot:
        raise UnsafeIdentifierError(
            "table", identifier, "a Paimon identifier is 'database.table' and this one has no '.'", where
        )
    return check_name(database, "database", where), check_name(table, "table", where)


class UnsafeNameError(MalformedMessage):
    """A message (or a source table) whose target table name is not safe as a directory name.

    Bad input like any malformed message (tolerance ``all`` dead-letters it, the default stops the
    job); its text stands on its own, independent of ``MalformedMessage``'s generic advice. Raised
    without a position where the position is not known (routing); ``at`` adds it.
    """

    def __init__(
        self,
        kind: str,
        name: str,
        reason: str,
        source: str | None = None,
        position: SourcePosition | None = None,
        fmt: str = "",
    ) -> None:
        origin = f" (source table {shown(source)})" if source is not None else ""
        # ``reason`` as MalformedMessage has it (a dead letter's error_message): which name, and why
        self.reason = f"the target {kind} name {shown(name)}{origin} is refused: {reason}"
        LakeCdcError.__init__(self, _message(self.reason, position, fmt))
        self.format = fmt
        self.position = position
        self.kind, self.name, self.source, self.why = kind, name, source, reason

    def __reduce__(self) -> tuple[type[UnsafeNameError], tuple[object, ...]]:
        # Raised on executors and pickled back to the driver: rebuild from the fields, not from args.
        return (UnsafeNameError, (self.kind, self.name, self.why, self.source, self.position, self.format))

    def at(self, position: SourcePosition | None, fmt: str = "") -> UnsafeNameError:
        """The same refusal naming the message's position (and format)."""
        return UnsafeNameError(self.kind, self.name, self.why, self.source, position, fmt or self.format)


def _message(refusal: str, position: SourcePosition | None, fmt: str) -> str:
    where = f" at {position}" if position is not None else ""
    what = f"{fmt} message{where}: " if fmt or where else ""
    return (
        f"{what}{refusal}. Paimon keeps each table in a directory named after it, so such a name could reach "
        f"outside the warehouse; nothing was written for it. Route the source table away (--excluding-tables, "
        f"or --including-tables for the tables you want), or let the job dead-letter such messages "
        f"(--errors-tolerance all)"
    )
