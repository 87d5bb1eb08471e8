"""The job's Spark configuration: what spark-submit or ``spark-defaults.conf`` set wins; lakecdc's local
defaults (``local[*,4]``, loopback binding, the driver's JVM options, a quiet log4j profile) apply only
when nothing else set a master (README: Deploying).

Two ways to start a job:

- ``lakecdc ...`` (or ``python -m ingest``): PySpark launches the driver JVM itself, through Spark's
  launcher, which reads ``spark-defaults.conf`` (``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``) and
  ``PYSPARK_SUBMIT_ARGS``. lakecdc looks at both before it adds a master of its own.
- ``spark-submit deploy/spark_submit_entry.py ...``: spark-submit's JVM is already running and hands
  PySpark its gateway (``PYSPARK_GATEWAY_PORT``); it always sets a master (``local[*]`` when
  ``--master`` is not given), and the deploy mode and confs are spark-submit's. lakecdc adds only
  defaults for keys spark-submit left unset, never a master or driver JVM options.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from ingest.workers.spark_path import with_site_hook

log = structlog.get_logger(__name__)

# The local-mode driver JVM is the executor too, and it only moves chunks (large binary values)
# between Python workers and its cache (~100 MiB live), bench/README.md:
# - C1 only: C2's optimising compiler spent 19 s of CPU per 1M-message run on the two cores the
#   Python workers need (C1 only: start-up -3 s, steady state -12%).
# - The serial collector from a 64 MiB heap with a 64 MiB young generation: G1 grew the heap to
#   580-650 MiB committed (JDK 17 starts it at 1/64 of RAM and rarely gives memory back), serial keeps
#   it near the live set: the JVM held ~600 MiB instead of 770-1040 MiB, the 1M-message command as fast.
# - MetaspaceSize: Spark loads ~135 MiB of classes; the default 21 MiB threshold ran four full
#   collections during start-up.
LOCAL_DRIVER_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms64m -Xmn64m -XX:MetaspaceSize=160m"

# The local driver's log4j profile: warnings and errors only, and without the loggers that print a
# failed task's whole Java and Python trace (three times: the task, its task set, the query), or, as the
# JVM stops after a failure, traces of tasks it can no longer schedule or that it cut short (a task still
# running, the workers' warm-up, fails its completion listener once its broadcast block is gone:
# TaskContextImpl). lakecdc reports the cause itself; ``-v`` keeps those loggers at WARN.
LOG4J2_PROPERTIES = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = error
logger.task.name = org.apache.spark.executor.Executor
logger.task.level = {task_errors}
logger.taskset.name = org.apache.spark.scheduler
logger.taskset.level = {task_errors}
logger.streaming.name = org.apache.spark.sql.execution.streaming
logger.streaming.level = {task_errors}
logger.taskcontext.name = org.apache.spark.TaskContextImpl
logger.taskcontext.level = {task_errors}
logger.nativeloader.name = org.apache.hadoop.util.NativeCodeLoader
logger.nativeloader.level = error
# (PySpark's driver is a "shell" to Spark: the root level becomes that of the first class that logs,
# PythonGatewayServer; an "off" on org.apache.spark.api.python silenced every warning.)
"""

# lakecdc's own local master: all cores, and a failed task is tried up to four times, as on a cluster
# (``spark.task.maxFailures``' default), where plain ``local[*]`` fails the query at a task's first
# failure (a Python worker slow to connect back on a loaded host, a broker or server hiccup). A retried
# write task is still exactly-once: only the successful attempt's commit messages reach the driver's
# commit (``ingest.streaming.micro_batch``); a failed attempt's files are orphans no snapshot names.
LOCAL_MASTER = "local[*,4]"

# Set whatever the master: they only tune lakecdc's own work, a user's value replaces them.
COMMON_DEFAULTS = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.stopGracefullyOnShutdown": "true",
    # A Python worker's connection to its JVM waits 15 s by default; on a busy host (two cores under a
    # load of 10+) workers took longer to start and the query failed with CANNOT_OPEN_SOCKET.
    "spark.python.authenticate.socketTimeout": "120s",
}


def launched_by_spark_submit() -> bool:
    """Whether spark-submit (or ``pyspark``) started this process and its JVM: PySpark then joins that
    JVM's gateway instead of launching one."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_defaults_file() -> Path:
    """The ``spark-defaults.conf`` Spark's launcher reads."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if conf_dir:
        return Path(conf_dir) / "spark-defaults.conf"
    home = os.environ.get("SPARK_HOME")
    if not home:
        import pyspark

        home = str(Path(pyspark.__file__).parent)
    return Path(home) / "conf" / "spark-defaults.conf"


def read_properties(text: str) -> dict[str, str]:
    """``spark-defaults.conf``'s lines: ``key value`` or ``key=value``; ``#`` comments."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        for i, ch in enumerate(line):
            if ch in " \t=:":
                key, value = line[:i], line[i:].lstrip(" \t")
                if value[:1] in ("=", ":"):
                    value = value[1:].lstrip(" \t")
                break
        else:
            key, value = line, ""
        out[key] = value
    return out


def spark_defaults() -> dict[str, str]:
    path = spark_defaults_file()
    return read_properties(path.read_text()) if path.is_file() else {}


def submit_args_master(args: str | None) -> str | None:
    """``--master`` of ``PYSPARK_SUBMIT_ARGS`` (PySpark passes them to the launcher)."""
    words = shlex.split(args or "")
    for i, word in enumerate(words):
        if word == "--master" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("--master="):
            return word.split("=", 1)[1]
    return None


def log4j_file(verbose: bool = False) -> str:
    """The local driver's log4j profile, written once into the temporary directory."""
    text = LOG4J2_PROPERTIES.replace("{task_errors}", "warn" if verbose else "off")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"lakecdc-log4j2-{digest}-{os.getuid()}.properties"
    if not path.is_file() or path.read_text() != text:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(path)
    return str(path)


def local_java_options(verbose: bool) -> str:
    return f"{LOCAL_DRIVER_JAVA_OPTIONS} -Dlog4j2.configurationFile=file:{log4j_file(verbose)}"


def session_conf(
    spark_conf: Mapping[str, str],
    verbose: bool = False,
    submitted: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The confs lakecdc passes to ``SparkSession.builder`` on top of ``--spark-conf``.

    ``submitted``: the confs spark-submit set (None when lakecdc launches the JVM itself);
    ``defaults``: ``spark-defaults.conf`` (read when None)."""
    env = os.environ if environ is None else environ
    conf = dict(spark_conf)
    if submitted is not None:
        given = {**submitted, **conf}
    else:
        given = {**(spark_defaults() if defaults is None else defaults), **conf}
        master = given.get("spark.master") or submit_args_master(env.get("PYSPARK_SUBMIT_ARGS"))
        if master is None:
            master = env.get("LAKECDC_SPARK_MASTER", LOCAL_MASTER)
            conf["spark.master"] = master
        if master.startswith("local"):
            if environ is None:
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
                # the Python processes this JVM starts import PySpark installed, not from its zip
                os.environ["PYTHONPATH"] = with_site_hook(os.environ.get("PYTHONPATH"))
            local = {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.ui.enabled": "false",
                # A user's own driver options replace these (and the log4j profile with them).
                "spark.driver.extraJavaOptions": local_java_options(verbose),
            }
            conf.update({k: v for k, v in local.items() if k not in given})
    common = {
        **COMMON_DEFAULTS,
        # glibc gives each thread that allocates its own heap arena (up to 8 per core), and a Python
        # worker's arenas keep what librdkafka's and Arrow's threads freed between tasks: two arenas kept
        # the bench command's busiest workers ~20-60 MiB smaller at its peak (bench/README.md).
        "spark.executorEnv.MALLOC_ARENA_MAX": "2",
        "spark.sql.shuffle.partitions": str(max(os.cpu_count() or 2, 2)),
    }
    conf.update({k: v for k, v in common.items() if k not in given})
    return conf


def submitted_conf() -> dict[str, str] | None:
    """Under spark-submit, the confs it set (read from its JVM); None otherwise."""
    if not launched_by_spark_submit():
        return None
    from pyspark import SparkConf
    from pyspark.core.context import SparkContext

    SparkContext._ensure_initialized()  # joins spark-submit's gateway; launches nothing
    return dict(SparkConf().getAll())


def running_spark() -> Any:
    """This process's SparkContext, if one runs (None without importing PySpark when none can)."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark.core.context import SparkContext

    return SparkContext._active_spark_context


def stop_spark(context: Any) -> None:
    """Stop a SparkContext before a failed job's last lines are printed.

    Otherwise Spark stops in the JVM's shutdown hook after Python has exited, and whatever it prints
    then (a task it cut short, a worker it lost) lands on stderr after lakecdc's error, which must be
    the last line. Best effort: a context that cannot stop cleanly still ends with the process."""
    try:
        context.stop()
    except Exception as exc:  # the cause is reported already; only the order of the lines is at stake
        log.debug("spark did not stop cleanly", error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
