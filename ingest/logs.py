"""structlog set-up: key=value lines on stderr (JSON with LAKECDC_LOG_FORMAT=json), secrets redacted.

Redaction (README, Secrets) has two parts, both applied to every line before it is rendered: the
value of any field whose name looks like a secret's (``password``, ``sasl.jaas.config``,
``s3.secret-key``, ... at any depth of a logged dict) is masked, and every secret value registered at
start-up (``register_secret``: the CLI registers each value of a secret option and each value read
through ``${env:...}`` / ``${file:...}``) is masked wherever it appears in text, exception tracebacks
included. ``redact_text`` applies the second part to text printed outside structlog (the CLI's error
lines)."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

import structlog

_configured = False
_verbose = os.environ.get("LAKECDC_VERBOSE", "").strip().lower() in ("1", "true", "yes")

MASK = "*****(redacted)"
# Option and field names whose values are secrets: passwords, SASL/JAAS configuration, tokens, client
# secrets, credentials, object-store keys (s3.secret-key, fs.s3a.secret.key, s3.access-key, ...).
SECRET_NAME = re.compile(
    r"(?i)pass(word|wd)|pwd|secret|jaas|token|credential|access[._-]?key|private[._-]?key|api[._-]?key|"
    r"signature|session[._-]?key|key[._-]?pem|keystore[._-]?key|oauthbearer[._-]?config|user[._-]?info"
)
# Shorter values would mask ordinary words; such secrets are still masked by field name.
MIN_SECRET_LENGTH = 4
_secrets: set[str] = set()


def is_secret_name(name: str) -> bool:
    """Whether an option or field called ``name`` holds a secret."""
    return SECRET_NAME.search(name) is not None


def register_secret(value: str) -> None:
    """Mask ``value`` wherever it appears in this process's log lines and ``redact_text``."""
    if len(value) >= MIN_SECRET_LENGTH:
        _secrets.add(value)


def register_secrets(values: Iterable[str]) -> None:
    for value in values:
        register_secret(value)


def redact_text(text: str) -> str:
    """``text`` with every registered secret masked (longest first, so none is left half masked)."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _redact(value: Any, name: str = "") -> Any:
    if name and is_secret_name(name) and value not in (None, ""):
        return MASK
    if isinstance(value, str):
        return redact_text(value) if _secrets else value
    if isinstance(value, Mapping):
        return {k: _redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    if _secrets and value is not None and not isinstance(value, int | float | bool):
        text = str(value)
        redacted = redact_text(text)
        return redacted if redacted != text else value
    return value


def redact_event(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The structlog processor: secret-named fields and registered secret values masked."""
    for key in list(event_dict):
        event_dict[key] = _redact(event_dict[key], "" if key == "event" else key)
    return event_dict


def configure(level: str | None = None, verbose: bool | None = None) -> None:
    """``verbose`` (the CLI's ``-v``, or ``LAKECDC_VERBOSE=1``): failures with their tracebacks, and
    Spark's task errors in the local driver's log."""
    global _configured, _verbose
    _configured = True
    if verbose is not None:
        _verbose = verbose
    level_name = (level or os.environ.get("LAKECDC_LOG_LEVEL", "INFO")).upper()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if os.environ.get("LAKECDC_LOG_FORMAT", "").lower() == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            # Tracebacks become text here, so that redact_event sees (and masks) them.
            structlog.processors.format_exc_info,
            redact_event,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level_name, logging.INFO)),
        # Resolve sys.stderr at each use: it may be replaced (test capture, daemonisers) after set-up.
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


def is_verbose() -> bool:
    return _verbose


def configure_once() -> None:
    """For Spark's Python workers, which do not run the CLI: configure on first use."""
    global _configured
    if not _configured:
        configure()
        _configured = True


def _stderr_logger(*_args: object) -> structlog.PrintLogger:
    return structlog.PrintLogger(sys.stderr)
