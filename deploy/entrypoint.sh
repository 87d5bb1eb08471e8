#!/usr/bin/env bash
# The lakecdc image's entrypoint (deploy/Dockerfile).
#
#   <image> kafka-sync-table ...    runs lakecdc (any lakecdc command; the default)
#   <image> driver <spark-submit arguments>
#   <image> executor
#
# The last two are what Spark on Kubernetes asks of spark.kubernetes.container.image: the driver pod runs
# `driver --properties-file <file> --class org.apache.spark.deploy.PythonRunner <app.py> <args>`, each executor pod
# runs `executor` with its settings in SPARK_* variables. Spark's own images do this in their entrypoint.sh;
# lakecdc's image is a Python image with pyspark from PyPI (SPARK_HOME is pyspark's directory), so it carries
# its own. LAKECDC_ENTRYPOINT_PRINT=1 prints the command instead of running it.
set -euo pipefail

SPARK_HOME="${SPARK_HOME:-$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')}"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

run() {
  if [[ "${LAKECDC_ENTRYPOINT_PRINT:-}" == "1" ]]; then
    printf '%q ' "$@"
    echo
  else
    exec "$@"
  fi
}

case "${1:-}" in
  driver)
    shift
    # The driver pod is the client of its own cluster-mode submission: client mode, bound to the pod's address.
    run "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS:-0.0.0.0}" \
      --deploy-mode client "$@"
    ;;
  executor)
    shift
    # Java options Spark passes one per SPARK_JAVA_OPT_<n> variable, in n's order.
    mapfile -t java_opts < <(env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | sed 's/^[^=]*=//')
    classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}:$SPARK_HOME/jars/*${SPARK_EXTRA_CLASSPATH:+:$SPARK_EXTRA_CLASSPATH}"
    run "$JAVA" "${java_opts[@]}" \
      "-Xms${SPARK_EXECUTOR_MEMORY:?}" "-Xmx${SPARK_EXECUTOR_MEMORY}" \
      -cp "$classpath" org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL:?}" \
      --executor-id "${SPARK_EXECUTOR_ID:?}" \
      --cores "${SPARK_EXECUTOR_CORES:?}" \
      --app-id "${SPARK_APPLICATION_ID:?}" \
      --hostname "${SPARK_EXECUTOR_POD_IP:?}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}" \
      --podName "${SPARK_EXECUTOR_POD_NAME:-$HOSTNAME}"
    ;;
  *)
    run lakecdc "$@"
    ;;
esac
