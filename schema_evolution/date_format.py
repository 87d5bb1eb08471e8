"""``date_format``'s patterns: Java ``DateTimeFormatter`` letters, compiled once at start-up
(``compile_pattern``) and rendered column by column with Arrow compute (``format_timestamps``)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

Token = tuple[str, int | str]  # (pattern letter, count) or ("'", literal text)

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September"]
_MONTHS += ["October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# letter -> max count; names are English, as with Paimon's default (Locale-less) formatter
_LETTERS = {"y": 9, "u": 9, "M": 5, "L": 5, "d": 2, "D": 3, "H": 2, "h": 2, "K": 2, "k": 2, "m": 2, "s": 2}
_LETTERS.update({"S": 9, "n": 9, "a": 1, "E": 5})
_HINTS = {"Y": " (week-based year; did you mean 'y'?)", "T": " (quote literal text: 'T')"}


def compile_pattern(pattern: str) -> tuple[Token, ...]:
    """Java DateTimeFormatter pattern -> tokens; ValueError for what we cannot render exactly."""
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j, lit = i + 1, ""
            while True:
                if j >= len(pattern):
                    raise ValueError(f"unterminated quote in pattern '{pattern}'")
                if pattern[j] == "'":
                    if j + 1 < len(pattern) and pattern[j + 1] == "'":
                        lit, j = lit + "'", j + 2
                        continue
                    break
                lit, j = lit + pattern[j], j + 1
            tokens.append(("'", lit if j > i + 1 else "'"))  # '' alone is one quote
            i = j + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            count = j - i
            if c not in _LETTERS:
                raise ValueError(
                    f"unsupported pattern letter '{c}'{_HINTS.get(c, '')} in '{pattern}' "
                    f"(supported: {' '.join(_LETTERS)})"
                )
            if count > _LETTERS[c]:
                raise ValueError(f"too many pattern letters '{c * count}' in '{pattern}'")
            tokens.append((c, count))
            i = j
        elif c in "[]{}#":
            raise ValueError(f"pattern character '{c}' is not supported in '{pattern}'")
        else:
            tokens.append(("'", c))
            i += 1
    return tuple(tokens)


def format_timestamps(ts: pa.Array, tokens: tuple[Token, ...]) -> pa.Array:
    """Timezone-naive timestamps rendered as text by ``compile_pattern``'s tokens (null stays null)."""
    cache: dict[str, pa.Array] = {}

    def part(name: str) -> pa.Array:
        if name not in cache:
            if name == "nano":  # nano-of-second from Arrow's millisecond/microsecond/nanosecond parts
                ms, us, ns = (
                    pc.cast(getattr(pc, p)(ts), pa.int64()) for p in ("millisecond", "microsecond", "nanosecond")
                )
                cache[name] = pc.add(pc.add(pc.multiply(ms, 1_000_000), pc.multiply(us, 1000)), ns)
            else:
                cache[name] = pc.cast(getattr(pc, name)(ts), pa.int64())
        return cache[name]

    def num(values: pa.Array, width: int) -> pa.Array:
        return pc.utf8_lpad(pc.cast(values, pa.string()), width=width, padding="0")

    def hour() -> pa.Array:
        return part("hour")

    renderers: dict[str, Callable[[int], pa.Array]] = {
        "y": lambda n: _year(part("year"), n, num),
        "u": lambda n: _year(part("year"), n, num),
        "M": lambda n: _named(part("month"), n, num, _MONTHS, 1),
        "L": lambda n: _named(part("month"), n, num, _MONTHS, 1),
        "d": lambda n: num(part("day"), n),
        "D": lambda n: num(part("day_of_year"), n),
        "H": lambda n: num(hour(), n),
        "h": lambda n: num(pc.if_else(pc.equal(_mod12(hour()), 0), 12, _mod12(hour())), n),
        "K": lambda n: num(_mod12(hour()), n),
        "k": lambda n: num(pc.if_else(pc.equal(hour(), 0), 24, hour()), n),
        "m": lambda n: num(part("minute"), n),
        "s": lambda n: num(part("second"), n),
        "S": lambda n: num(pc.divide(part("nano"), 10 ** (9 - n)), n),
        "n": lambda n: num(part("nano"), n),
        "a": lambda n: pc.if_else(pc.less(hour(), 12), "AM", "PM"),
        "E": lambda n: _named(part("day_of_week"), max(n, 3), num, _DAYS, 0),  # Arrow: Monday is 0
    }
    parts = [pa.scalar(str(v)) if c == "'" else renderers[c](int(v)) for c, v in tokens]
    # an empty string part that is null where the input is null: keeps a literal-only pattern columnar
    parts.append(pc.if_else(pc.is_valid(ts), "", pa.scalar(None, pa.string())))
    return pc.binary_join_element_wise(*parts, "")


def _mod12(hour: pa.Array) -> pa.Array:
    return pc.if_else(pc.greater_equal(hour, 12), pc.subtract(hour, 12), hour)


def _year(year: pa.Array, n: int, num: Callable[[pa.Array, int], pa.Array]) -> pa.Array:
    if n == 2:  # Java's reduced two-digit year
        return num(pc.subtract(year, pc.multiply(pc.divide(year, 100), 100)), 2)
    return num(year, n)


def _named(values: pa.Array, n: int, num: Callable[[pa.Array, int], pa.Array], names: list[str], base: int) -> pa.Array:
    if n <= 2:
        return num(values, n)
    shown = {3: [x[:3] for x in names], 4: names, 5: [x[0] for x in names]}[n]
    return pc.take(pa.array(shown), pc.subtract(values, base))
