"""``--config job.yaml`` (or ``.toml``): a sync job's options in a file (README: Configuration files).

Precedence: the command line, then ``LAKECDC_*`` environment variables, then the file. Keys are the
command line's option names, with ``-`` or ``_`` (``primary-keys``, ``kafka_conf``); the ``--xxx-conf``
options are mappings, merged key by key with the same option from the environment and the command
line (a key given on the command line wins). A key that is not an option of the job is refused, naming
the file and the key.

A relative ``warehouse`` or ``checkpoint`` in the file is relative to the file's own directory, so a
job file means the same tables wherever the job is started from (a relative path on the command line
or in the environment stays relative to the working directory).
"""

from __future__ import annotations

import contextvars
import difflib
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, InitSettingsSource

# Command-line option names whose setting is named differently (repeatable options, plural settings).
OPTION_FIELDS = {"computed_column": "computed_columns", "metadata_column": "metadata_columns"}
# Not settings: the file itself, and the command line's own switches.
NOT_IN_FILE = frozenset({"action", "config", "verbose"})
PATH_KEYS = ("warehouse", "checkpoint")
_LIST_KEYS = ("partition_keys", "primary_keys", "metadata_columns")
_MAPPINGS = ("kafka_conf", "mysql_conf", "catalog_conf", "table_conf", "spark_conf")

_file_values: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("lakecdc_file", default=None)


class ConfigFileError(ValueError):
    """A configuration file that cannot be read, or that holds a key no option has."""


def _parse(path: Path) -> Any:
    suffix = path.suffix.lower()
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigFileError(f"--config {path}: {exc.strerror or exc}") from None
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigFileError(f"--config {path}: not valid TOML: {exc}") from None
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigFileError(f"--config {path}: not valid YAML: {exc}") from None
    raise ConfigFileError(f"--config {path}: give a .yaml, .yml or .toml file")


def _text(value: Any) -> str:
    """A scalar of a ``--xxx-conf`` mapping as the command line would give it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _value(path: Path, key: str, value: Any) -> Any:
    if key in _MAPPINGS or key in ("table_mapping", "table_prefix_db", "table_suffix_db"):
        if not isinstance(value, Mapping):
            raise ConfigFileError(f"--config {path}: '{key}' is a mapping of option keys to values")
        return {str(k): _text(v) for k, v in value.items()}
    if key == "multiple_table_partition_keys":
        if not isinstance(value, Mapping):
            raise ConfigFileError(f"--config {path}: '{key}' is a mapping of table names to partition keys")
        return {str(k): _names(v) for k, v in value.items()}
    if key in _LIST_KEYS:
        return _names(value)
    if key in ("computed_columns", "skip_offsets") and isinstance(value, str):
        return (value,)
    if key in PATH_KEYS and isinstance(value, str) and "://" not in value and not value.startswith("file:"):
        return str((path.parent / value).resolve()) if not Path(value).is_absolute() else value
    return value


def _names(value: Any) -> tuple[str, ...]:
    """A list, or the command line's comma-separated text."""
    items = value.split(",") if isinstance(value, str) else value
    return tuple(str(v).strip() for v in items if str(v).strip())


def load(path_text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The file's settings, named as ``fields`` (the settings model's) names them."""
    path = Path(path_text)
    data = _parse(path)
    if not isinstance(data, Mapping):
        raise ConfigFileError(f"--config {path}: the file holds a mapping of option names to values")
    out: dict[str, Any] = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        key = OPTION_FIELDS.get(key, key)
        if key not in fields or key in NOT_IN_FILE:
            known = sorted(k.replace("_", "-") for k in fields if k not in NOT_IN_FILE)
            close = difflib.get_close_matches(str(raw_key).replace("_", "-"), known, n=2, cutoff=0.6)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            raise ConfigFileError(f"--config {path}: '{raw_key}' is not an option of the job{hint}")
        if value is None:
            continue
        out[key] = _value(path, key, value)
    return out


@contextmanager
def values(file_values: dict[str, Any]) -> Iterator[None]:
    """The file's values for the settings built inside (``file_source`` reads them)."""
    token = _file_values.set(file_values)
    try:
        yield
    finally:
        _file_values.reset(token)


def file_source(settings_cls: type[BaseSettings]) -> InitSettingsSource:
    """The settings source of the file: after the command line and the environment."""
    return InitSettingsSource(settings_cls, init_kwargs=dict(_file_values.get() or {}))
