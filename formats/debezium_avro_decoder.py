"""A decoder compiled per Avro writer schema: Python source generated once per schema id, for the
debezium-avro parser's hot path.

fastavro's ``schemaless_reader`` interprets the parsed schema on every call (it looks each field's
type up in the schema's dicts and builds its options anew), which for a small Debezium change event
costs more than the JSON parser's whole work on the same event. The function made here reads the
same binary encoding straight through: inline varints (one byte in the common case), string and bytes
slices, ``struct`` for floats, one branch per union member, and records as dict literals in field order.
Its output is fastavro's for the same schema (records as dicts, bytes as ``bytes``, enums as their
symbols, unions as the member's value; the schema given has no logical types, as the parser's), which
``tests/formats/test_debezium_avro_decoder.py`` checks message by message against fastavro, mutated
messages included.

Malformed input raises (``IndexError``, ``ValueError``, ``EOFError``, ``struct.error``,
``UnicodeDecodeError``, ``RecursionError``), never returns a partial value: lengths are checked to be
non-negative, union and enum indexes to be in range, and the end of the data not passed. Schemas this
does not know how to compile (``compile_decoder`` returns None) stay with fastavro.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

Decoder = Callable[[bytes], Any]

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


def read_long(data: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint from ``pos``: (value, position after it)."""
    shift = 0
    n = 0
    while True:
        byte = data[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
        if shift > 70:
            raise ValueError("a varint longer than 10 bytes")


class _Unsupported(Exception):
    pass


class _Compiler:
    def __init__(self, named: dict[str, dict[str, Any]]) -> None:
        self.named = named
        self.consts: dict[str, Any] = {}
        self.functions: dict[str, str] = {}  # record full name -> its function's name (recursive records)
        self.sources: list[str] = []
        self.counter = 0

    def var(self) -> str:
        self.counter += 1
        return f"v{self.counter}"

    def const(self, value: Any) -> str:
        name = f"K{len(self.consts)}"
        self.consts[name] = value
        return name

    def resolve(self, schema: Any, namespace: str | None) -> tuple[Any, str | None]:
        """A schema with named references replaced by the named schema, and the namespace it is in."""
        while True:
            if isinstance(schema, str) and schema not in _PRIMITIVES:
                full = schema if "." in schema or not namespace else f"{namespace}.{schema}"
                found = self.named.get(full) or self.named.get(schema)
                if found is None:
                    raise _Unsupported(f"unknown named type {schema}")
                return found, _namespace_of(found, namespace)
            if isinstance(schema, dict) and isinstance(schema.get("type"), dict | list):
                schema = schema["type"]
                continue
            if isinstance(schema, dict) and schema.get("type") in _PRIMITIVES:
                return schema["type"], namespace
            if (
                isinstance(schema, dict)
                and isinstance(schema.get("type"), str)
                and schema["type"]
                not in (
                    "record",
                    "error",
                    "enum",
                    "fixed",
                    "array",
                    "map",
                )
            ):
                schema = schema["type"]  # {"type": "Some.Named"}
                continue
            return schema, namespace

    def long(self, out: str, ind: str) -> list[str]:
        return [
            f"{ind}c = b[p]",
            f"{ind}if c < 128:",
            f"{ind}    {out} = (c >> 1) ^ -(c & 1)",
            f"{ind}    p += 1",
            f"{ind}else:",
            f"{ind}    {out}, p = read_long(b, p)",
        ]

    def sized(self, out: str, ind: str, decode: bool) -> list[str]:
        n = self.var()
        lines = self.long(n, ind)
        lines += [
            f"{ind}if {n} < 0:",
            f"{ind}    raise ValueError('a negative length')",
            f"{ind}e = p + {n}",
            f"{ind}{out} = b[p:e]{'.decode()' if decode else ''}",
            f"{ind}p = e",
        ]
        return lines

    def emit(self, schema: Any, namespace: str | None, out: str, ind: str, stack: tuple[str, ...]) -> list[str]:
        schema, namespace = self.resolve(schema, namespace)
        if isinstance(schema, list):
            return self.union(schema, namespace, out, ind, stack)
        if isinstance(schema, str):
            return self.primitive(schema, out, ind)
        if not isinstance(schema, dict):
            raise _Unsupported("not a schema")
        kind = schema.get("type")
        if kind in ("record", "error"):
            return self.record(schema, namespace, out, ind, stack)
        if kind == "enum":
            symbols = schema.get("symbols")
            if not isinstance(symbols, list):
                raise _Unsupported("enum without symbols")
            index = self.var()
            return [
                *self.long(index, ind),
                f"{ind}if {index} < 0:",
                f"{ind}    raise IndexError('a negative enum index')",
                f"{ind}{out} = {self.const(tuple(symbols))}[{index}]",
            ]
        if kind == "fixed":
            size = schema.get("size")
            if not isinstance(size, int) or size < 0:
                raise _Unsupported("fixed without a size")
            return [f"{ind}e = p + {size}", f"{ind}{out} = b[p:e]", f"{ind}p = e"]
        if kind in ("array", "map"):
            return self.blocks(schema, namespace, out, ind, stack, kind == "map")
        raise _Unsupported(f"type {kind}")

    def primitive(self, kind: str, out: str, ind: str) -> list[str]:
        if kind == "null":
            return [f"{ind}{out} = None"]
        if kind == "boolean":
            return [f"{ind}{out} = b[p] != 0", f"{ind}p += 1"]
        if kind in ("int", "long"):
            return self.long(out, ind)
        if kind == "float":
            return [f"{ind}{out} = unpack_float(b, p)[0]", f"{ind}p += 4"]
        if kind == "double":
            return [f"{ind}{out} = unpack_double(b, p)[0]", f"{ind}p += 8"]
        if kind == "bytes":
            return self.sized(out, ind, decode=False)
        if kind == "string":
            return self.sized(out, ind, decode=True)
        raise _Unsupported(kind)

    def union(
        self, branches: list[Any], namespace: str | None, out: str, ind: str, stack: tuple[str, ...]
    ) -> list[str]:
        if not branches:
            raise _Unsupported("an empty union")
        index = self.var()
        lines = self.long(index, ind)
        for i, branch in enumerate(branches):
            lines.append(f"{ind}{'if' if i == 0 else 'elif'} {index} == {i}:")
            lines += self.emit(branch, namespace, out, ind + "    ", stack)
        lines += [f"{ind}else:", f"{ind}    raise IndexError('a union index out of range')"]
        return lines

    def record(
        self, schema: dict[str, Any], namespace: str | None, out: str, ind: str, stack: tuple[str, ...]
    ) -> list[str]:
        name = schema.get("name")
        full = name if not isinstance(name, str) or "." in name or not namespace else f"{namespace}.{name}"
        if isinstance(full, str) and full in stack:  # a recursive record: through its own function
            function = self.function(schema, namespace, full)
            return [f"{ind}{out}, p = {function}(b, p)"]
        inner = _namespace_of(schema, namespace)
        stack = (*stack, full) if isinstance(full, str) else stack
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise _Unsupported("record without fields")
        lines: list[str] = []
        parts = []
        for f in fields:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "type" not in f:
                raise _Unsupported("a field without a name or type")
            value = self.var()
            lines += self.emit(f["type"], inner, value, ind, stack)
            parts.append(f"{f['name']!r}: {value}")
        lines.append(f"{ind}{out} = {{{', '.join(parts)}}}")
        return lines

    def function(self, schema: dict[str, Any], namespace: str | None, full: str) -> str:
        if full in self.functions:
            return self.functions[full]
        function = self.functions[full] = f"record_{len(self.functions)}"
        body = self.record(schema, namespace, "r", "    ", ())
        self.sources.append("\n".join([f"def {function}(b, p):", *body, "    return r, p"]))
        return function

    def blocks(
        self, schema: dict[str, Any], namespace: str | None, out: str, ind: str, stack: tuple[str, ...], is_map: bool
    ) -> list[str]:
        items = schema.get("values" if is_map else "items")
        if items is None:
            raise _Unsupported("array or map without its item type")
        count, item, key = self.var(), self.var(), self.var()
        lines = [f"{ind}{out} = {{}}" if is_map else f"{ind}{out} = []", f"{ind}while True:"]
        inner = ind + "    "
        lines += self.long(count, inner)
        lines += [
            f"{inner}if {count} == 0:",
            f"{inner}    break",
            f"{inner}if {count} < 0:",
            f"{inner}    {count} = -{count}",
        ]
        lines += self.long("_", inner + "    ")  # the block's size in bytes
        lines.append(f"{inner}for _ in range({count}):")
        body = inner + "    "
        if is_map:
            lines += self.sized(key, body, decode=True)
        lines += self.emit(items, namespace, item, body, stack)
        lines.append(f"{body}{out}[{key}] = {item}" if is_map else f"{body}{out}.append({item})")
        return lines


def _namespace_of(schema: dict[str, Any], namespace: str | None) -> str | None:
    name = schema.get("name")
    if isinstance(name, str) and "." in name:
        return name.rsplit(".", 1)[0]
    space = schema.get("namespace")
    return space if isinstance(space, str) else namespace


def compile_decoder(schema: Any, named: dict[str, dict[str, Any]], offset: int) -> Decoder | None:
    """A function decoding the Avro binary of ``schema`` that starts at ``offset`` of its argument (the
    Confluent header skipped), or None when the schema has something this does not compile.
    ``named``: every named type of the schema by its full and short name."""
    compiler = _Compiler(named)
    try:
        body = compiler.emit(schema, None, "value", "    ", ())
    except (_Unsupported, RecursionError):
        return None
    source = "\n".join(
        [
            *compiler.sources,
            "def decode(b):",
            f"    p = {offset}",
            *body,
            "    if p > len(b):",
            "        raise EOFError('the data ends inside the value')",
            "    return value",
        ]
    )
    namespace: dict[str, Any] = {
        "read_long": read_long,
        "unpack_float": struct.Struct("<f").unpack_from,
        "unpack_double": struct.Struct("<d").unpack_from,
        **compiler.consts,
    }
    try:
        exec(compile(source, "<debezium-avro decoder>", "exec"), namespace)  # our own generated code
    except (SyntaxError, RecursionError, MemoryError):
        return None
    decode: Decoder = namespace["decode"]
    return decode
