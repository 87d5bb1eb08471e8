"""Real servers for integration tests (a pytest plugin that tests/conftest.py registers): a
Kafka-protocol broker (tansu) and a MariaDB server, each on a free loopback port in a temporary
directory, and a local Spark session (local[2]); all started on first use and stopped at the end."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deploy.local_kafka import LocalKafka
from deploy.local_mariadb import LocalMariaDB
from ingest.workers.spark_path import with_site_hook


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafka]:
    log = tmp_path_factory.mktemp("tansu") / "tansu.log"
    broker = LocalKafka(log_path=str(log))
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def mariadb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMariaDB]:
    # The server's own clock zone is not UTC, so TIMESTAMP handling is really exercised.
    server = LocalMariaDB(str(tmp_path_factory.mktemp("mariadb")), time_zone="+02:00")
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # as lakecdc's local sessions: Spark's Python processes import the installed PySpark, not its zip
    os.environ["PYTHONPATH"] = with_site_hook(os.environ.get("PYTHONPATH"))
    # Split Kafka ranges into many small tasks, so every test also checks that a table's rows are
    # written in Kafka order across splits (the Python planner inherits the JVM's environment).
    os.environ.setdefault("LAKECDC_SPLIT_MESSAGES", "40")
    from pyspark.sql import SparkSession

    from ingest.kafka.source import KafkaCdcDataSource
    from ingest.mysql.source import MySqlCdcDataSource
    from ingest.paimon.source import PaimonDataSource

    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakecdc-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.showConsoleProgress", "false")
        # as lakecdc's own default (ingest/spark_conf.py): workers starting under load connect late
        .config("spark.python.authenticate.socketTimeout", "120s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    session.dataSource.register(KafkaCdcDataSource)
    session.dataSource.register(MySqlCdcDataSource)
    session.dataSource.register(PaimonDataSource)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")


_topics = 0


@pytest.fixture
def topic_name() -> str:
    global _topics
    _topics += 1
    return f"t{os.getpid()}_{_topics}"
