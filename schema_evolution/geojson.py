"""MySQL spatial values to the GeoJSON-like text Apache Paimon stores for them.

MySQL's internal geometry format is a 4-byte little-endian SRID followed by standard WKB. Paimon
writes ``{"coordinates": …, "type": "Point", "srid": 0}`` (``"geometries"`` for a collection, whose
members are ``{"type": …, "coordinates": …}``), integral coordinates without a fraction.
"""

from __future__ import annotations

import json
import struct
from typing import Any

_TYPES = {
    1: "Point",
    2: "LineString",
    3: "Polygon",
    4: "MultiPoint",
    5: "MultiLineString",
    6: "MultiPolygon",
    7: "GeometryCollection",
}


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ValueError("truncated WKB")
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values


def _num(v: float) -> float | int:
    return int(v) if v.is_integer() and abs(v) < 1e15 else v


def _geometry(r: _Reader) -> tuple[str, Any]:
    (order,) = r.unpack("B")
    e = "<" if order == 1 else ">"
    (code,) = r.unpack(e + "I")
    kind = _TYPES.get(code & 0xFF)
    if kind is None:
        raise ValueError(f"unknown WKB geometry type {code}")

    def point() -> list[float | int]:
        x, y = r.unpack(e + "dd")
        return [_num(x), _num(y)]

    def points() -> list[list[float | int]]:
        (n,) = r.unpack(e + "I")
        return [point() for _ in range(n)]

    def rings() -> list[list[list[float | int]]]:
        (n,) = r.unpack(e + "I")
        return [points() for _ in range(n)]

    if kind == "Point":
        return kind, point()
    if kind == "LineString":
        return kind, points()
    if kind == "Polygon":
        return kind, rings()
    (n,) = r.unpack(e + "I")
    members = [_geometry(r) for _ in range(n)]
    if kind == "GeometryCollection":
        return kind, [{"type": k, "coordinates": c} for k, c in members]
    return kind, [c for _, c in members]


def mysql_geometry_to_geojson(value: bytes) -> str:
    """``value``: MySQL's internal geometry bytes (SRID + WKB)."""
    if len(value) < 9:
        raise ValueError("too short for a MySQL geometry (SRID + WKB)")
    (srid,) = struct.unpack_from("<I", value, 0)
    kind, body = _geometry(_Reader(value, 4))
    key = "geometries" if kind == "GeometryCollection" else "coordinates"
    return json.dumps({key: body, "type": kind, "srid": srid}, separators=(",", ":"))
