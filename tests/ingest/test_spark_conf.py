"""The job's Spark configuration (ingest.spark_conf): spark-submit's and spark-defaults.conf's master
and confs win; lakecdc's local defaults only when nothing else set a master."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingest.spark_conf import (
    LOCAL_DRIVER_JAVA_OPTIONS,
    launched_by_spark_submit,
    log4j_file,
    read_properties,
    session_conf,
    spark_defaults_file,
    submit_args_master,
)
from ingest.workers.spark_path import with_site_hook

NO_ENV: dict[str, str] = {}


def test_nothing_set_a_master_local_defaults() -> None:
    conf = session_conf({}, defaults={}, environ=NO_ENV)
    assert conf["spark.master"] == "local[*,4]"  # a failed task is retried (up to four attempts)
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"
    assert conf["spark.driver.extraJavaOptions"].startswith(LOCAL_DRIVER_JAVA_OPTIONS)
    assert "-Dlog4j2.configurationFile=file:" in conf["spark.driver.extraJavaOptions"]


def test_lakecdc_spark_master_variable() -> None:
    conf = session_conf({}, defaults={}, environ={"LAKECDC_SPARK_MASTER": "local[2]"})
    assert conf["spark.master"] == "local[2]"


def test_a_cluster_master_from_spark_conf_gets_no_local_defaults() -> None:
    conf = session_conf({"spark.master": "spark://h:7077"}, defaults={}, environ=NO_ENV)
    assert conf["spark.master"] == "spark://h:7077"
    assert not {"spark.driver.bindAddress", "spark.driver.extraJavaOptions", "spark.ui.enabled"} & set(conf)
    assert conf["spark.ui.showConsoleProgress"] == "false"  # lakecdc's own tuning stays


def test_spark_defaults_conf_master_wins_and_is_not_overridden() -> None:
    defaults = {"spark.master": "spark://h:7077", "spark.sql.shuffle.partitions": "64"}
    conf = session_conf({}, defaults=defaults, environ=NO_ENV)
    # nothing passed that would replace the file's values
    assert "spark.master" not in conf and "spark.sql.shuffle.partitions" not in conf
    assert "spark.driver.extraJavaOptions" not in conf


def test_spark_defaults_local_master_keeps_the_files_driver_options() -> None:
    defaults = {"spark.master": "local[2]", "spark.driver.extraJavaOptions": "-Xmx1g"}
    conf = session_conf({}, defaults=defaults, environ=NO_ENV)
    assert "spark.master" not in conf and "spark.driver.extraJavaOptions" not in conf
    assert conf["spark.driver.bindAddress"] == "127.0.0.1"


def test_pyspark_submit_args_master() -> None:
    env = {"PYSPARK_SUBMIT_ARGS": "--master spark://h:7077 --conf a=b pyspark-shell"}
    conf = session_conf({}, defaults={}, environ=env)
    assert "spark.master" not in conf and "spark.driver.bindAddress" not in conf
    assert submit_args_master("--master=yarn pyspark-shell") == "yarn"
    assert submit_args_master(None) is None


def test_under_spark_submit_nothing_it_set_is_replaced() -> None:
    submitted = {"spark.master": "local[*]", "spark.submit.deployMode": "client", "spark.sql.shuffle.partitions": "7"}
    conf = session_conf({"spark.executor.memory": "1g"}, submitted=submitted, environ=NO_ENV)
    # spark-submit always sets a master (local[*] without --master): lakecdc adds none, nor driver options
    assert "spark.master" not in conf and "spark.driver.extraJavaOptions" not in conf
    assert "spark.sql.shuffle.partitions" not in conf
    assert conf["spark.executor.memory"] == "1g" and conf["spark.ui.showConsoleProgress"] == "false"


def test_spark_submit_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    assert not launched_by_spark_submit()
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40000")
    assert launched_by_spark_submit()


def test_spark_defaults_file_and_its_syntax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert spark_defaults_file() == tmp_path / "spark-defaults.conf"
    text = "# comment\nspark.master   spark://h:7077\nspark.a=b\nspark.c : d e\n\nspark.flag\n"
    assert read_properties(text) == {
        "spark.master": "spark://h:7077",
        "spark.a": "b",
        "spark.c": "d e",
        "spark.flag": "",
    }


def test_log4j_profile_is_quiet_unless_verbose() -> None:
    quiet, verbose = Path(log4j_file(False)).read_text(), Path(log4j_file(True)).read_text()
    assert "rootLogger.level = warn" in quiet
    assert "logger.task.level = off" in quiet and "logger.task.level = warn" in verbose


def test_a_local_master_starts_its_python_processes_with_the_site_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    # PySpark passes this process's environment to the JVM it launches, and Spark adds its PYTHONPATH
    # to every Python process it starts (ingest/workers/spark_path.py)
    for name in ("LAKECDC_SPARK_MASTER", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    monkeypatch.setenv("PYTHONPATH", "/a")
    session_conf({}, defaults={})
    assert os.environ["PYTHONPATH"] == with_site_hook("/a")
    monkeypatch.setenv("PYTHONPATH", "/a")
    session_conf({"spark.master": "spark://h:7077"}, defaults={})
    assert os.environ["PYTHONPATH"] == "/a"  # a cluster's executors start their workers themselves
