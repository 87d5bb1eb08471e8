"""``date_format``'s pattern compiler: Java's ``DateTimeFormatter.ofPattern`` rules, as Paimon runs them.

Paimon formats a ``LocalDateTime`` with ``DateTimeFormatter.ofPattern(pattern)`` (java.time, not
``SimpleDateFormat``) under the JVM's default locale; lakecdc follows a default en-US JVM on JDK 17.
``compile_pattern`` reads the pattern as ``DateTimeFormatterBuilder.parsePattern`` does and returns
the fields and literals to print (``schema_evolution.date_format`` renders them). Every pattern
Java refuses is refused here at start-up, with Java's message in parentheses; Paimon only fails
at the first row, when it builds the formatter.

- Letters: ``G u y Y Q q M L w W D d F E e c a h K k H m s S A n N g`` (counts as in Java).
  ``'text'`` is literal text and ``''`` one quote; ``p`` pads the next field with spaces;
  ``[ ]`` is an optional section; ``# { }`` are reserved; any other ASCII letter is unknown.
- Zone and offset letters (``V v z O X x Z``) cannot print a date-time without a zone: they are
  refused, except inside an optional section, which Java then leaves out (as here).
- ``B`` (day period, JDK 16+) is refused: its en-US texts differ between JDK releases.
"""

from __future__ import annotations

from typing import NamedTuple


class Token(NamedTuple):
    """One printed element: a pattern letter repeated ``size`` times, or literal text (``letter`` "")."""

    letter: str
    size: int = 0  # how many times the letter is repeated
    text: str = ""
    pad: int = 0  # the 'p' modifier: left-pad the printed field with spaces to this width


# letter -> (what it prints, most letters Java allows); None: no limit
_FIELDS: dict[str, tuple[str, int | None]] = {
    "G": ("era", 5),
    "u": ("year", 19),
    "y": ("year of era", 19),
    "Y": ("week-based year", None),
    "Q": ("quarter", 5),
    "q": ("quarter", 5),
    "M": ("month", 5),
    "L": ("month", 5),
    "w": ("week of week-based year", 2),
    "W": ("week of month", 1),
    "D": ("day of year", 3),
    "d": ("day of month", 2),
    "F": ("aligned day of week in month", 1),
    "E": ("day of week", 5),
    "e": ("localized day of week", 5),
    "c": ("localized day of week", 5),
    "a": ("AM/PM", 1),
    "h": ("clock hour of AM/PM", 2),
    "K": ("hour of AM/PM", 2),
    "k": ("clock hour of day", 2),
    "H": ("hour of day", 2),
    "m": ("minute", 2),
    "s": ("second", 2),
    "S": ("fraction of second", 9),
    "A": ("milli of day", 19),
    "n": ("nano of second", 19),
    "N": ("nano of day", 19),
    "g": ("modified Julian day", 19),
}
_ZONE_ID = "Unable to extract ZoneId from temporal"
_OFFSET = "Unsupported field: OffsetSeconds"
# zone letter -> (what it prints, Java's runtime failure on a LocalDateTime)
_ZONES = {
    "V": ("time-zone ID", _ZONE_ID),
    "v": ("generic time-zone name", _ZONE_ID),
    "z": ("time-zone name", _ZONE_ID),
    "O": ("localized zone offset", _OFFSET),
    "X": ("zone offset", _OFFSET),
    "x": ("zone offset", _OFFSET),
    "Z": ("zone offset", _OFFSET),
}
_HINTS = {"T": " (quote literal text: 'T')"}


def compile_pattern(pattern: str) -> tuple[Token, ...]:
    """A Java ``DateTimeFormatter`` pattern -> the tokens to print; ValueError for what Java refuses."""
    sections: list[list[Token]] = [[]]  # the open optional sections, outermost first
    dropped: list[bool] = [False]  # per section: holds a zone letter, so Java leaves it out
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if _is_letter(c):
            i, token = _letters(pattern, i)
            if token.letter in _ZONES:
                if len(sections) == 1:
                    raise _zone_error(pattern, token.letter)
                dropped[-1] = True
            sections[-1].append(token)
        elif c == "'":
            i, text = _quoted(pattern, i)
            sections[-1].append(Token("", text=text))
        elif c == "[":
            sections.append([])
            dropped.append(False)
            i += 1
        elif c == "]":
            if len(sections) == 1:
                raise _error(pattern, "']' closes no '['", "Pattern invalid as it contains ] without previous [")
            _close(sections, dropped)
            i += 1
        elif c in "#{}":
            raise _error(pattern, f"'{c}' is reserved", f"Pattern includes reserved character: '{c}'")
        else:
            sections[-1].append(Token("", text=c))
            i += 1
    while len(sections) > 1:  # Java closes optional sections left open
        _close(sections, dropped)
    return tuple(_merge_literals(sections[0]))


def _is_letter(c: str) -> bool:
    return "A" <= c <= "Z" or "a" <= c <= "z"


def _close(sections: list[list[Token]], dropped: list[bool]) -> None:
    inner, skip = sections.pop(), dropped.pop()
    if not skip:
        sections[-1].extend(inner)


def _run(pattern: str, i: int) -> int:
    """The end of the run of equal letters starting at ``i``."""
    j = i
    while j < len(pattern) and pattern[j] == pattern[i]:
        j += 1
    return j


def _letters(pattern: str, i: int) -> tuple[int, Token]:
    """The letter run at ``i`` (with a 'p' pad modifier before it) -> (next index, token)."""
    j = _run(pattern, i)
    pad = 0
    if pattern[i] == "p":
        if j >= len(pattern) or not _is_letter(pattern[j]):
            java = f"Pad letter 'p' must be followed by valid pad pattern: {pattern}"
            raise _error(pattern, "'p' (pad) must be followed by a pattern letter", java)
        pad, i = j - i, j
        j = _run(pattern, i)
    c, count = pattern[i], j - i
    _check_count(pattern, c, count)
    return j, Token(c, count, pad=pad)


def _check_count(pattern: str, c: str, count: int) -> None:
    if c in _ZONES:
        _check_zone_count(pattern, c, count)
        return
    if c not in _FIELDS:
        if c == "B":
            java = "Java 16+ prints day periods ('in the morning'), with texts that differ between JDK releases"
            raise _error(pattern, "'B' (day period) is not supported", java)
        raise _error(pattern, f"'{c}' is not a pattern letter{_HINTS.get(c, '')}", f"Unknown pattern letter: {c}")
    what, most = _FIELDS[c]
    if c == "c" and count == 2:
        raise _error(pattern, "'cc' is not allowed: 'c' prints a number, 'ccc' or more a name", 'Invalid pattern "cc"')
    if most is None or count <= most:
        return
    reason = f"'{c * count}': {c} ({what}) takes at most {most} letter{'s' if most > 1 else ''}"
    if c == "S":
        java = f"Minimum width must be from 0 to 9 inclusive but was {count}"
    elif most == 19:
        java = f"The minimum width must be from 1 to 19 inclusive but was {count}"
    else:
        java = f"Too many pattern letters: {c}"
    raise _error(pattern, reason, java)


def _check_zone_count(pattern: str, c: str, count: int) -> None:
    java = None
    if c == "V" and count != 2:
        java = "Pattern letter count must be 2: V"
    elif c == "v" and count not in (1, 4):
        java = "Wrong number of  pattern letters: v"
    elif c == "O" and count not in (1, 4):
        java = "Pattern letter count must be 1 or 4: O"
    elif (c == "z" and count > 4) or (c in "XxZ" and count > 5):
        java = f"Too many pattern letters: {c}"
    if java is not None:
        raise _error(pattern, f"'{c * count}': wrong number of '{c}' letters", java)


def _quoted(pattern: str, i: int) -> tuple[int, str]:
    """The literal starting with the quote at ``i`` -> (index after its closing quote, its text)."""
    j, text = i + 1, ""
    while True:
        if j >= len(pattern):
            java = f"Pattern ends with an incomplete string literal: {pattern}"
            raise _error(pattern, "a quote is not closed", java)
        if pattern[j] == "'":
            if j + 1 < len(pattern) and pattern[j + 1] == "'":
                text, j = text + "'", j + 2
                continue
            break
        text, j = text + pattern[j], j + 1
    return j + 1, text if j > i + 1 else "'"  # '' alone is one quote


def _merge_literals(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for t in tokens:
        if not t.letter and out and not out[-1].letter:
            out[-1] = Token("", text=out[-1].text + t.text)
        else:
            out.append(t)
    return out


def _zone_error(pattern: str, c: str) -> ValueError:
    what, java = _ZONES[c]
    reason = (
        f"'{c}' ({what}) needs a time zone, but date_format formats a date-time without one "
        "(Paimon's job fails at its first row"
    )
    return ValueError(f"pattern '{pattern}': {reason}: {java})")


def _error(pattern: str, reason: str, java: str) -> ValueError:
    return ValueError(f"pattern '{pattern}': {reason} ({java})")
