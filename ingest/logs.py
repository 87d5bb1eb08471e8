"""structlog set-up: key=value lines on stderr (JSON with LAKECDC_LOG_FORMAT=json)."""

from __future__ import annotations

import logging
import os
import sys

import structlog

_configured = False


def configure(level: str | None = None) -> None:
    global _configured
    _configured = True
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
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level_name, logging.INFO)),
        # Resolve sys.stderr at each use: it may be replaced (test capture, daemonisers) after set-up.
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


def configure_once() -> None:
    """For Spark's Python workers, which do not run the CLI: configure on first use."""
    global _configured
    if not _configured:
        configure()
        _configured = True


def _stderr_logger(*_args: object) -> structlog.PrintLogger:
    return structlog.PrintLogger(sys.stderr)
