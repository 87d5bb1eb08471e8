"""The one check every format's malformed-message tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from formats.events import MessageContext
from schema_evolution.errors import MalformedMessage


def assert_malformed(
    parse: Callable[..., Any], fmt: str, value: bytes | None, ctx: MessageContext, reason: str
) -> None:
    """``parse`` refuses ``value`` with a ``MalformedMessage`` that names the format, the message's
    topic/partition/offset and ``reason``."""
    with pytest.raises(MalformedMessage) as info:
        parse(value, None, ctx)
    text = str(info.value)
    pos = ctx.position
    assert f"malformed {fmt} message at topic '{pos.topic}', partition {pos.partition}, offset {pos.offset}" in text
    assert reason in text
    assert info.value.format == fmt
    assert info.value.position == pos
