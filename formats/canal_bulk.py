"""canal-json's bulk path: plain DML messages decoded straight into row tuples.

``canal.parse`` builds a dict per message, per row and per before image, and an event per row;
at canal's message rates that Python work is most of a sync job's CPU. Once a table's columns are
known, ``BulkDecoder`` decodes a message of that table with msgspec into typed structs (C code, no
dicts) and hands back each row image as a tuple in ``mysqlType`` order, ready to be transposed into
columns.

The bulk path only takes what it can decode *exactly as* ``canal.parse`` would; everything else —
DDL, a message without ``mysqlType``, values that are not strings, a column set it has not learned,
anything malformed — makes ``decode`` return None, and the caller parses the message with
``canal.parse``, which keeps every rule and every error message. ``tests/ingest/test_assembler.py``
checks that both paths give the same chunks.

An update's ``old`` holds only the changed columns of the before image; a column it names with
``null`` was NULL before, while a column it leaves out was unchanged. The ``old`` struct keeps that
difference (``UNSET`` for left out), which a columnar JSON reader cannot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from formats import canal
from formats.events import Op, SourceSchema, TypeSystem

# A source table seldom has more distinct column lists than this in one job; older ones are
# forgotten (their messages take canal.parse until learned again).
_MAX_CODECS = 16
_UNSET = msgspec.UNSET
_astuple = msgspec.structs.astuple
_DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError)
_NULL = msgspec.Raw(b"null")
_OPS = canal.OPS
_EMPTY = msgspec.Raw(b"")


@dataclass(slots=True)
class PlainRows:
    """The row images of one plain DML message, in ``source``'s column order.

    ``before`` is set for updates only: ``before[i]`` is ``after[i]`` overlaid with ``old[i]``.
    For deletes the images are in ``after`` (canal sends a deleted row in ``data``)."""

    database: str | None
    table: str | None
    source: SourceSchema
    op: Op
    after: list[tuple[Any, ...]]
    before: list[tuple[Any, ...]] | None


class _Codec:
    """Decoder for messages whose rows have exactly one column list."""

    def __init__(self, columns: tuple[str, ...]) -> None:
        self.columns = columns
        # Struct attributes must be identifiers; JSON names are mapped through ``rename``.
        attrs = [f"c{i}" for i in range(len(columns))]
        rename = dict(zip(attrs, columns, strict=True))
        # A value that is not a string or null (canal sends all values as text) fails validation
        # and leaves the message to canal.parse, which converts any JSON value.
        row = msgspec.defstruct(
            "Row",
            [(a, str | None, None) for a in attrs],
            rename=rename,
            forbid_unknown_fields=True,
            gc=False,
        )
        old = msgspec.defstruct(
            "Old",
            [(a, str | None | msgspec.UnsetType, _UNSET) for a in attrs],
            rename=rename,
            forbid_unknown_fields=True,
            gc=False,
        )
        message = msgspec.defstruct(
            "Message",
            [
                ("type", str),
                ("data", list[row]),  # type: ignore[valid-type]
                ("old", list[old | None] | None, None),  # type: ignore[valid-type]
                ("database", str | None, None),
                ("table", str | None, None),
                ("es", int | None, None),
                ("isDdl", bool | None, None),
                ("mysqlType", msgspec.Raw, _NULL),
                ("pkNames", msgspec.Raw, _NULL),
            ],
            gc=False,
        )
        self.decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(message)
        # raw ``mysqlType`` + raw ``pkNames`` -> the SourceSchema they describe (None: they describe
        # other columns than this codec's, or are not plain)
        self.sources: dict[tuple[bytes, bytes], SourceSchema | None] = {}
        # (a decoded Raw is never empty, so nothing matches before the first source)
        self.last_types, self.last_keys = _EMPTY, _EMPTY
        self.last_source: SourceSchema | None = None

    def source(self, mysql_type: msgspec.Raw, pk_names: msgspec.Raw) -> SourceSchema | None:
        key = (bytes(mysql_type), bytes(pk_names))
        if key in self.sources:
            source = self.sources[key]
        else:
            source = _source_schema(key[0], key[1])
            if source is not None and tuple(name for name, _ in source.fields) != self.columns:
                source = None
            if len(self.sources) >= 1024:
                self.sources.clear()
            self.sources[key] = source
        if source is not None:
            self.last_types, self.last_keys, self.last_source = mysql_type, pk_names, source
        return source


def _source_schema(mysql_type: bytes, pk_names: bytes) -> SourceSchema | None:
    """The schema ``canal.parse`` gives these raw fields, or None where it would take its slow
    route (no types) or raise."""
    try:
        types, keys = orjson.loads(mysql_type), orjson.loads(pk_names)
    except orjson.JSONDecodeError:
        return None
    if type(types) is not dict or not (keys is None or type(keys) is list):
        return None
    if not all(isinstance(t, str) for t in types.values()):
        return None
    return canal.source_schema(types, keys or [])


class BulkDecoder:
    """Decodes plain canal DML of learned column lists; see the module docstring."""

    def __init__(self) -> None:
        self._codecs: list[_Codec] = []  # most recently used first

    def learn(self, source: SourceSchema) -> None:
        """Prepare for messages with ``source``'s columns (after ``canal.parse`` took one)."""
        if source.type_system is not TypeSystem.MYSQL:
            return
        columns = tuple(name for name, _ in source.fields)
        if not columns:
            return
        if any(c.columns == columns for c in self._codecs):
            return
        self._codecs.insert(0, _Codec(columns))
        del self._codecs[_MAX_CODECS:]

    def decode(self, value: bytes) -> PlainRows | None:
        codecs = self._codecs
        for i, codec in enumerate(codecs):
            try:
                msg = codec.decoder.decode(value)
            except _DECODE_ERRORS:
                continue
            if msg.isDdl is True:
                return None
            op = _OPS.get(msg.type)
            if op is None:
                return None
            types, keys = msg.mysqlType, msg.pkNames
            # Raw values compare as bytes; a table's messages nearly always repeat the last ones.
            if types == codec.last_types and keys == codec.last_keys:
                source = codec.last_source
            else:
                source = codec.source(types, keys)
            if source is None:
                continue
            after = list(map(_astuple, msg.data))
            before = None
            if op is Op.UPDATE:
                old = msg.old
                if old is None or len(old) != len(after):
                    return None
                before = [
                    image
                    if changed is None
                    else tuple([a if c is _UNSET else c for a, c in zip(image, _astuple(changed), strict=True)])
                    for image, changed in zip(after, old, strict=True)
                ]
            if i:
                codecs.insert(0, codecs.pop(i))
            return PlainRows(msg.database, msg.table, source, op, after, before)
        return None
