"""Fixtures of the MySQL server tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deploy.local_mariadb import LocalMariaDB


@pytest.fixture(scope="module")
def nolog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    """A private MariaDB per test module whose row events do not name their columns (NO_LOG, MariaDB's
    default), so the job keeps its schema history beside the checkpoint."""
    bare = LocalMariaDB(str(tmp_path_factory.mktemp("nolog")), extra_args=["--binlog-row-metadata=NO_LOG"])
    try:
        yield bare
    finally:
        bare.close()
