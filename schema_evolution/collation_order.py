"""Where Python can order a MySQL string key as its column's collation does.

A table whose first primary-key column is a string is split into snapshot chunks at values the server
chose (``ORDER BY`` the column), and every binlog key of the table must then be placed in one of those
ranges in the same order. Python's ``str`` order is by code point; a collation's is its own (case
folded, accents folded, contractions, trailing spaces ignored under PAD SPACE). ``local_order`` gives a
value whose Python order is the collation's where that is proven for the collation and the value, and
None otherwise: the caller then asks the server to compare.

Proven here:

- binary collations of Unicode character sets (``utf8mb4_bin``, ``utf8mb3_bin``, ``ascii_bin``, and the
  NO PAD ``*_nopad_bin`` / ``*_0900_bin``): code-point order. Under PAD SPACE a shorter string compares
  as if padded with spaces, which is code-point order without trailing spaces as long as no character
  below the space is in the value;
- ``*_general_ci`` for printable ASCII: it weighs an ASCII character by its upper-case form;
- the Unicode collation algorithm ones (``*_unicode_ci``, ``*_unicode_520_ci``, ``*_0900_ai_ci``,
  ``*_uca1400_ai_ci``) and ``latin1_swedish_ci`` / ``latin1_general_ci`` for digits, letters and ``-``:
  ``-`` before the digits before the letters, case folded, so UUIDs and alphanumeric ids qualify.

``tests/integration/mysql/test_string_key_chunks.py`` checks these against MariaDB's own ORDER BY.

Anything else (language collations with contractions, accent- or case-sensitive UCA collations,
non-ASCII text under a case-insensitive collation) returns None.
"""

from __future__ import annotations

import re

_UNICODE_SETS = ("utf8mb4", "utf8mb3", "utf8", "ascii")
# no character below the space: a PAD SPACE comparison is then a comparison without trailing spaces
_PRINTABLE = re.compile(r"[\x20-\x7e]*")
_ABOVE_SPACE = re.compile(r"[^\x00-\x1f]*")
_ALNUM_DASH = re.compile(r"[0-9A-Za-z-]*")
_GENERAL_CI = re.compile(r"^(utf8mb4|utf8mb3|utf8|ascii)_general(_nopad)?_ci$")
# orders where only digits, letters (case folded) and "-" are proven: "-" < digits < letters
_ALNUM_CI = re.compile(
    r"^(utf8mb4|utf8mb3|utf8)_(unicode|unicode_520|unicode_nopad|unicode_520_nopad)_ci$"
    r"|^utf8mb4_0900_ai_ci$|^(utf8mb4|utf8mb3)_uca1400(_nopad)?_ai_ci$|^latin1_(swedish|general)_ci$"
)


def local_order(collation: str, value: str) -> str | None:
    """A string whose Python order among other ``local_order`` results of the same collation is the
    collation's order of the values; None where that is not proven (compare on the server)."""
    name = collation.lower()
    charset, _, rest = name.partition("_")
    # PAD SPACE (all but the NO PAD collations): trailing spaces do not count
    pads = "nopad" not in name and "0900" not in name
    if charset in _UNICODE_SETS and rest in ("bin", "nopad_bin", "0900_bin"):
        ok = _ABOVE_SPACE.fullmatch(value) and (charset != "ascii" or value.isascii())
        return (value.rstrip(" ") if pads else value) if ok else None
    if _GENERAL_CI.match(name):
        return (value.rstrip(" ") if pads else value).upper() if _PRINTABLE.fullmatch(value) else None
    if _ALNUM_CI.match(name):
        return value.upper() if _ALNUM_DASH.fullmatch(value) else None
    return None
