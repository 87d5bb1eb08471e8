"""Pass-through option tables: what lakecdc does with each key a Paimon script may give in
``--mysql-conf``, ``--kafka-conf``, ``--catalog-conf`` or ``--table-conf``.

Paimon ignores keys it does not read; lakecdc states, for every key Paimon or Flink CDC knows, one of
three treatments (README, "Paimon options"): **honoured** (lakecdc has the behaviour), **no effect**
(accepted and logged once: it only tunes something lakecdc does differently), or **refused** (accepting
it would silently change the result). A key in no table is refused too, naming the closest keys: a
typo such as ``scan.startup.mdoe`` must not silently start the job somewhere else.
"""

from __future__ import annotations

import difflib
import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass


class Treatment(enum.StrEnum):
    HONOURED = "honoured"
    NO_EFFECT = "no effect"
    REFUSED = "refused"


@dataclass(frozen=True)
class ConfOption:
    """One key (or a prefix ending in ``*``, such as ``properties.*``) and its treatment.

    ``check`` validates a value: it returns why the value is refused, as "is ..." or "must ..." (or
    raises ``ValueError``), and ``None`` for a value it accepts. ``refused_example`` is a value
    ``check`` refuses, for an option honoured only for some values (README's walking test tries both).
    """

    key: str
    treatment: Treatment
    what: str
    example: str
    check: Callable[[str], str | None] | None = None
    refused_example: str | None = None

    def matches(self, key: str) -> bool:
        return key.startswith(self.key[:-1]) if self.key.endswith("*") else key == self.key


@dataclass(frozen=True)
class OptionTable:
    """The options of one ``--xxx-conf`` flag, looked up exact key first, then longest prefix."""

    flag: str
    options: Sequence[ConfOption]

    def lookup(self, key: str) -> ConfOption | None:
        exact = [o for o in self.options if o.key == key]
        if exact:
            return exact[0]
        prefixes = [o for o in self.options if o.key.endswith("*") and o.matches(key)]
        return max(prefixes, key=lambda o: len(o.key), default=None)

    def review(self, conf: Mapping[str, str]) -> list[str]:
        """Refuse (``ValueError``) refused, unknown or invalid keys; return the keys that have no effect."""
        no_effect = []
        for key, value in conf.items():
            option = self.lookup(key)
            if option is None:
                raise ValueError(self._unknown(key))
            if option.treatment is Treatment.REFUSED:
                raise ValueError(f"{self.flag} {key} is refused: {option.what}")
            reason = option.check(value) if option.check is not None else None
            if reason is not None:
                raise ValueError(f"{self.flag} {key}='{value}' {reason}")
            if option.treatment is Treatment.NO_EFFECT:
                no_effect.append(key)
        return no_effect

    def _unknown(self, key: str) -> str:
        names = [o.key for o in self.options]
        close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else f"; known keys: {', '.join(sorted(names))}"
        return (
            f"{self.flag} {key} is not supported: not an option lakecdc knows (Paimon would ignore it; lakecdc "
            f"refuses it so that a misspelt key cannot silently change what the job does){hint}"
        )


def one_of(values: Iterable[str], *, case_sensitive: bool = False) -> Callable[[str], str | None]:
    """A ``check`` that accepts only ``values``."""
    allowed = tuple(values)

    def check(value: str) -> str | None:
        v = value.strip() if case_sensitive else value.strip().lower()
        return None if v in allowed else f"must be one of {', '.join(allowed)}"

    return check


def regex(value: str) -> str | None:
    try:
        re.compile(value)
    except re.error as exc:
        return f"is not a valid regular expression: {exc}"
    return None


def whole_number(value: str) -> str | None:
    return None if value.strip().isdigit() else "is not a whole number"


def boolean(value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "must be true or false"
