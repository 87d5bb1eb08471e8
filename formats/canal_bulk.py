"""canal-json's bulk path: plain DML messages decoded straight into row tuples.

``canal.parse`` builds a dict per message, per row and per before image, and an event per row;
at canal's message rates that Python work is most of a sync job's CPU. Once a table's columns are
known, ``CanalBulkDecoder`` decodes a message of that table with msgspec into typed structs (C code, no
dicts) and hands back each row image as a tuple in ``mysqlType`` order, ready to be transposed into
columns.

The bulk path only takes what it can decode *exactly as* ``canal.parse`` would; everything else —
DDL, a message without ``mysqlType``, values that are not strings, a column set it has not learned,
anything malformed — makes ``decode`` return None, and the caller parses the message with
``canal.parse``, which keeps every rule and every error message. ``tests/ingest/pipeline/test_assembler.py``
checks that both paths give the same chunks. This is canal-json's ``formats.bulk`` capability: its
registry entry offers ``CanalBulkDecoder`` as its ``bulk_decoder``.

An update's ``old`` holds only the changed columns of the before image; a column it names with
``null`` was NULL before, while a column it leaves out was unchanged. The ``old`` struct keeps that
difference (``UNSET`` for left out), which a columnar JSON reader cannot.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from formats import canal
from formats.bulk import KindCodes, PlainRows
from formats.events import Op, SourceSchema, TypeSystem

# A source table seldom has more distinct column lists than this in one job; older ones are
# forgotten (their messages take canal.parse until learned again).
_MAX_CODECS = 16
_UNSET = msgspec.UNSET
_astuple = msgspec.structs.astuple
# (msgspec raises UnicodeDecodeError for a string that is not UTF-8, RecursionError for deep nesting:
# canal.parse then refuses the message naming its offset)
_DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError, RecursionError)
_NULL = msgspec.Raw(b"null")
_OPS = canal.OPS
_EMPTY = msgspec.Raw(b"")


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
    if keys and not all(type(k) is str for k in keys):
        return None
    if not all(isinstance(t, str) for t in types.values()):
        return None
    return canal.source_schema(types, keys or [])


class CanalBulkDecoder:
    """Decodes plain canal DML of learned column lists (a ``formats.bulk.BulkDecoder``): see the
    module docstring. An update's before image is ``data[i]`` overlaid with ``old[i]``; canal sends a
    deleted row in ``data``."""

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
                before = [_before_image(image, changed) for image, changed in zip(after, old, strict=True)]
            if i:
                codecs.insert(0, codecs.pop(i))
            return PlainRows(msg.database, msg.table, source, op, after, before)
        return None

    def lane(
        self, plain: PlainRows, rows: list[Any], kinds: list[int], offsets: list[int], codes: KindCodes
    ) -> CanalLane:
        """A lane for the messages that follow ``plain`` (which ``decode`` just returned): same
        table, same raw ``mysqlType`` and ``pkNames``, decoded with the same codec."""
        codec = self._codecs[0]
        assert codec.last_source is plain.source
        return CanalLane(codec, plain.database, plain.table, rows, kinds, offsets, codes)


def _before_image(after: tuple[Any, ...], changed: Any) -> tuple[Any, ...]:
    """An update's before image: ``after`` overlaid with the columns its ``old`` names."""
    if changed is None:
        return after
    return tuple([a if c is _UNSET else c for a, c in zip(after, _astuple(changed), strict=True)])


class CanalLane:
    """Appends the row images of one table's plain DML straight to a chunk's lists.

    After ``decode`` took a message, the next messages of a stream are nearly always plain DML of
    the same table with the same raw ``mysqlType`` and ``pkNames``. For those ``take`` gives the rows,
    row kinds and offsets that ``decode`` followed by appending its ``PlainRows`` would give, without
    a ``PlainRows``, a codec search or a schema lookup per message (a 125k-message bench range parsed
    in 0.71-0.78 s instead of 0.85-1.05 s). Anything else it leaves untouched and returns 0, and the
    caller goes the usual way."""

    __slots__ = (
        "_append_kind",
        "_append_offset",
        "_append_row",
        "_codes",
        "_database",
        "_decode",
        "_keys",
        "_kinds",
        "_offsets",
        "_rows",
        "_table",
        "_types",
    )

    def __init__(
        self,
        codec: _Codec,
        database: str | None,
        table: str | None,
        rows: list[Any],
        kinds: list[int],
        offsets: list[int],
        codes: KindCodes,
    ) -> None:
        self._decode = codec.decoder.decode
        self._database, self._table = database, table
        self._types, self._keys = codec.last_types, codec.last_keys
        self._rows, self._kinds, self._offsets = rows, kinds, offsets
        self._append_row, self._append_kind, self._append_offset = rows.append, kinds.append, offsets.append
        self._codes = codes

    def take(self, value: bytes, offset: int) -> int:
        """Append the message's row images and return how many changes it held; 0 when it is not
        plain DML of this lane (then nothing was appended)."""
        try:
            msg = self._decode(value)
        except _DECODE_ERRORS:
            return 0
        if (
            msg.table != self._table
            or msg.database != self._database
            or msg.isDdl is True
            or msg.mysqlType != self._types
            or msg.pkNames != self._keys
            or not msg.data
        ):
            return 0
        data = msg.data
        op = _OPS.get(msg.type)
        if len(data) != 1:  # several rows in one message: the general way
            if op is Op.UPDATE:
                old = msg.old
                if old is None or len(old) != len(data):
                    return 0
                after = list(map(_astuple, data))
                return self.add(op, after, [_before_image(a, c) for a, c in zip(after, old, strict=True)], offset)
            return 0 if op is None else self.add(op, list(map(_astuple, data)), None, offset)
        # One row (canal's usual message), appended without building lists for it.
        image = _astuple(data[0])
        codes = self._codes
        if op is Op.UPDATE:
            old = msg.old
            if old is None or len(old) != 1:
                return 0
            self._append_row(_before_image(image, old[0]))
            self._append_row(image)
            self._append_kind(codes.update_before)
            self._append_kind(codes.update_after)
            self._append_offset(offset)
            self._append_offset(offset)
            return 1
        if op is Op.INSERT:
            self._append_kind(codes.insert)
        elif op is Op.DELETE:
            self._append_kind(codes.delete)
        else:
            return 0
        self._append_row(image)
        self._append_offset(offset)
        return 1

    def add(self, op: Op, after: list[tuple[Any, ...]], before: list[tuple[Any, ...]] | None, offset: int) -> int:
        """Append row images of one message (``PlainRows``' fields); returns the number of changes."""
        n = len(after)
        codes = self._codes
        if op is Op.UPDATE:
            assert before is not None
            rows = self._rows
            for b, a in zip(before, after, strict=True):
                rows.append(b)
                rows.append(a)
            self._kinds.extend([codes.update_before, codes.update_after] * n)
            self._offsets.extend([offset] * (2 * n))
        else:
            self._rows.extend(after)
            self._kinds.extend([codes.insert if op is Op.INSERT else codes.delete] * n)
            self._offsets.extend([offset] * n)
        return n
