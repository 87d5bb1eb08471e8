#!/usr/bin/env bash
# Run a lakecdc sync job on YARN with lakecdc in a packed environment (README: Deploying, YARN).
#
#   venv-pack -p /path/to/venv-with-lakecdc -o lakecdc-env.tar.gz    # once per lakecdc version
#   deploy/yarn/submit.sh kafka-sync-database --warehouse /mnt/lake/wh --database ods --kafka-conf ...
#
# Needs: a Spark distribution built with YARN support (SPARK_HOME; pyspark from PyPI has no YARN client),
# HADOOP_CONF_DIR or YARN_CONF_DIR, and a warehouse and checkpoint every node sees at the same path (object
# storage is not supported yet). Python applications run in client or cluster deploy mode on YARN
# (DEPLOY_MODE). In client mode the driver runs here, from LAKECDC_DRIVER_PYTHON (an environment with
# lakecdc installed), and its JVM starts Python workers with ./environment/bin/python too (the sources' planning):
# run this from a directory where the archive is unpacked as ./environment (README: Deploying). In cluster mode
# the driver runs in the archive as well. LAKECDC_PRINT=1 prints the command.
set -euo pipefail

: "${SPARK_HOME:?set SPARK_HOME to a Spark distribution with YARN support}"
: "${HADOOP_CONF_DIR:=${YARN_CONF_DIR:?set HADOOP_CONF_DIR or YARN_CONF_DIR}}"
ARCHIVE="${LAKECDC_ARCHIVE:-lakecdc-env.tar.gz}"
DEPLOY_MODE="${DEPLOY_MODE:-cluster}"
ENTRY="${LAKECDC_ENTRY:-$(dirname "$0")/../spark_submit_entry.py}"

cmd=("$SPARK_HOME/bin/spark-submit"
  --master yarn --deploy-mode "$DEPLOY_MODE"
  --name "lakecdc-${1:?a lakecdc action}"
  --archives "$ARCHIVE#environment"
  --conf spark.pyspark.python=./environment/bin/python
  --conf spark.executor.instances="${EXECUTORS:-2}" --conf spark.executor.cores=2 --conf spark.executor.memory=2g
  # a streaming job: retry the application after a failure (it restarts from its checkpoint, exactly once)
  --conf spark.yarn.maxAppAttempts=4 --conf spark.yarn.am.attemptFailuresValidityInterval=1h)
if [[ "$DEPLOY_MODE" == "client" ]]; then
  cmd+=(--conf "spark.pyspark.driver.python=${LAKECDC_DRIVER_PYTHON:?set LAKECDC_DRIVER_PYTHON in client mode}")
else
  cmd+=(--conf spark.yarn.appMasterEnv.PYSPARK_PYTHON=./environment/bin/python)
fi
cmd+=("$ENTRY" "$@")

if [[ "${LAKECDC_PRINT:-}" == "1" ]]; then
  printf '%q ' "${cmd[@]}"
  echo
else
  exec "${cmd[@]}"
fi
