"""Paimon's action command lines, read the way Paimon reads them, before argparse sees them.

Paimon's ``ActionFactory`` (over Flink's ``MultipleParameterTool``) takes the action name in any case
and with ``_`` or ``-``; keys with ``--`` or ``-`` and either spelling; a key's value is the next token
unless that starts with ``-`` and is not a number; booleans as ``true``/``false`` values; a single-valued
key given twice is an error. ``normalise`` turns such a line into the ``--key=value`` tokens of
lakecdc's argparse parser, after checking every key against ``ACTION_OPTIONS``: each Paimon option is
honoured, accepted with no effect (logged once), or refused with the reason (README, "Paimon options").

Where lakecdc departs from Paimon, on purpose and documented: a key Paimon does not know is refused
(Paimon ignores it, so a misspelt ``--primary_kyes`` silently runs without keys); a boolean's value
must be ``true`` or ``false`` (Paimon reads anything else as false); both spellings of a repeated
key are all taken (Paimon drops the ``-`` ones when the ``_`` one is present).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ingest.cli.paimon_actions import ACTION_OPTIONS, ActionOption, Kind
from ingest.conf_options import Treatment

NO_VALUE = None
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[lLdDfF]?$")


class PaimonArgsError(ValueError):
    """A command line Paimon's rules (or lakecdc's stricter ones) refuse."""


@dataclass(frozen=True)
class Normalised:
    argv: list[str]
    no_effect: list[str]  # options accepted for compatibility that change nothing here
    notes: list[str]  # where lakecdc read a line differently from Paimon (logged as warnings)


def action_name(token: str) -> str:
    """Paimon's R1: lower case, every ``_`` a ``-`` (``MYSQL_SYNC_TABLE`` is ``mysql-sync-table``)."""
    return token.lower().replace("_", "-")


def _is_key(token: str) -> bool:
    return token.startswith("-") and not _NUMBER.match(token)


def tokenize(args: Sequence[str]) -> list[tuple[str, str | None]]:
    """Paimon's R2/R3: ``[(key in - spelling, value or NO_VALUE)]`` in order."""
    out: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        token = args[i]
        if not _is_key(token):
            raise PaimonArgsError(
                f"'{token}' is not an option: options start with -- (Paimon: Error parsing arguments "
                f"'{list(args)}' on '{token}'. Please prefix keys with -- or -.)"
            )
        key, eq, inline = token.lstrip("-").partition("=")
        if not key:
            raise PaimonArgsError(f"'{token}' is an empty option name")
        key = key.replace("_", "-")
        if eq:  # --key=value, argparse's spelling (Paimon would read it as a key named 'key=value')
            out.append((key, inline))
            i += 1
        elif i + 1 < len(args) and not _is_key(args[i + 1]):
            out.append((key, args[i + 1]))
            i += 2
        else:
            out.append((key, NO_VALUE))
            i += 1
    return out


def _find(action: str, key: str) -> ActionOption | None:
    for option in ACTION_OPTIONS:
        if option.name == key and action in option.actions:
            return option
    return None


def _unknown(action: str, key: str) -> PaimonArgsError:
    names = sorted({o.name for o in ACTION_OPTIONS if action in o.actions})
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join('--' + c for c in close)}?" if close else f"; see lakecdc {action} --help"
    return PaimonArgsError(
        f"--{key} is not an option of {action} (Paimon would ignore it; lakecdc refuses it so that a misspelt "
        f"option cannot silently change what the job does){hint}"
    )


def _boolean(action: str, option: ActionOption, value: str | None, notes: list[str]) -> str:
    paimon = option.name.replace("-", "_")
    if value is NO_VALUE:
        if option.bare is None:
            raise PaimonArgsError(
                f"--{option.name} needs a value, true or false (Paimon reads a bare --{paimon} as false; "
                f"write --{option.name} false if that is what you mean)"
            )
        if option.treatment is not Treatment.NO_EFFECT and option.paimon:
            notes.append(f"a bare --{option.name} is read as true here; Paimon reads a bare --{paimon} as false")
        return str(option.bare).lower()
    if value.strip().lower() not in ("true", "false"):
        raise PaimonArgsError(f"--{option.name} '{value}' must be true or false")
    return value.strip().lower()


def normalise(action: str, args: Sequence[str]) -> Normalised:
    """``args`` (after the action name) as lakecdc's argparse tokens; raises ``PaimonArgsError``."""
    argv: list[str] = []
    no_effect: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for key, value in tokenize(args):
        if key in ("help", "h"):
            argv.append("--help")
            continue
        option = _find(action, key)
        if option is None:
            raise _unknown(action, key)
        if option.treatment is Treatment.REFUSED:
            raise PaimonArgsError(f"--{key} is refused: {option.what}")
        if option.kind is not Kind.REPEATED and key in seen:
            raise PaimonArgsError(
                f"--{key} is given more than once; it takes one value "
                f"(Paimon: Key {key.replace('-', '_')} should has only one value.)"
            )
        seen.add(key)
        if option.kind is Kind.BOOLEAN:
            value = _boolean(action, option, value, notes)
        elif value is NO_VALUE and option.kind is not Kind.FLAG:
            raise PaimonArgsError(f"--{key} needs a value")
        if option.treatment is Treatment.NO_EFFECT:
            no_effect.append(f"--{key}")
            continue
        argv.append(f"--{key}" if value is NO_VALUE else f"--{key}={value}")
    return Normalised(argv, no_effect, notes)
