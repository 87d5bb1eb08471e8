"""Start positions: Flink's specific-offsets syntax, refused with Paimon's message (#29)."""

from __future__ import annotations

import pytest

from ingest.kafka.startup import parse_specific_offsets


def test_specific_offsets_syntax() -> None:
    assert parse_specific_offsets("partition:0,offset:42;partition:1,offset:300") == {0: 42, 1: 300}
    assert parse_specific_offsets(" partition:0, offset:42;") == {0: 42}


@pytest.mark.parametrize("text", ["0:42", "", "partition:0,offset:x", "partition:0,offset:1;junk"])
def test_malformed_specific_offsets_fail_with_paimons_message(text: str) -> None:
    expected = (
        "Invalid properties 'scan.startup.specific-offsets' should follow the format "
        f"'partition:0,offset:42;partition:1,offset:300', but is '{text}'."
    )
    with pytest.raises(ValueError) as info:
        parse_specific_offsets(text)
    assert str(info.value) == expected
