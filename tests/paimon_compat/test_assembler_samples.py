"""canal-json's bulk path gives exactly what the per-event path gives on every one of Apache Paimon's canal
samples (read in place); the project's own messages are checked in tests/ingest/pipeline/test_assembler.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.pipeline.routing import TableRouter
from tests.ingest.pipeline.test_assembler import _assembled
from tests.paimon_compat.samples import sample_files, sample_messages


@pytest.mark.parametrize("path", sample_files("canal"))
def test_bulk_path_equals_event_path_on_paimon_samples(path: Path) -> None:
    values = sample_messages(path)
    if not values:
        pytest.skip("licence header only")
    router = TableRouter(database="ods", table="t")  # table sync: incomplete samples route too
    try:
        expected = _assembled(values, False, router)
    except Exception as exc:  # a sample the job refuses must be refused the same way by both paths
        with pytest.raises(type(exc)):
            _assembled(values, True, router)
        return
    assert _assembled(values, True, router) == expected
