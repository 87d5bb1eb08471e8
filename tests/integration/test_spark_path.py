"""Spark's Python processes in a local session import the installed PySpark, not Spark's zip of it
(ingest/workers/spark_path.py): the task workers and the Python data sources' planners alike."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition


def _pyspark_file() -> str:
    import pyspark

    return pyspark.__file__ or ""


class _WhereReader(DataSourceReader):
    def partitions(self) -> list[InputPartition]:
        return [InputPartition(_pyspark_file())]  # runs in a planner process

    def read(self, partition: InputPartition) -> Iterator[tuple[str, str]]:
        yield partition.value, _pyspark_file()  # runs in a task worker


class _WhereSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "lakecdc_pyspark_where"

    def schema(self) -> str:
        return "planner string, task string"

    def reader(self, schema: Any) -> DataSourceReader:
        return _WhereReader()


def test_planners_and_task_workers_import_the_installed_pyspark(spark: Any) -> None:
    import pyspark

    spark.dataSource.register(_WhereSource)
    row = spark.read.format("lakecdc_pyspark_where").load().collect()[0]
    installed = os.path.realpath(pyspark.__file__ or "")
    assert os.path.realpath(row["planner"]) == installed, row
    assert os.path.realpath(row["task"]) == installed, row
