#!/usr/bin/env bash
# Run a lakecdc sync job on Kubernetes in cluster deploy mode (README: Deploying, Kubernetes).
#
#   deploy/kubernetes/submit.sh kafka-sync-database --warehouse /lake/wh --database ods --kafka-conf ...
#
# Needs: pyspark (spark-submit) where you run this, kubectl access (~/.kube/config) to the API server in
# K8S_MASTER, the image built from deploy/Dockerfile pushed as LAKECDC_IMAGE, the service account of rbac.yaml,
# and a warehouse and checkpoint on a volume every pod mounts at the same path (LAKE_CLAIM below): object
# storage is not supported yet. The driver pod runs `<image> driver ...`, the executors `<image> executor`
# (deploy/entrypoint.sh). LAKECDC_SUBMIT_ARGS: more spark-submit arguments (split on spaces), e.g.
# "--conf spark.kubernetes.submission.waitAppCompletion=false". LAKECDC_PRINT=1 prints the command instead.
set -euo pipefail

: "${K8S_MASTER:?set K8S_MASTER, e.g. k8s://https://kubernetes.example.com:6443}"
: "${LAKECDC_IMAGE:?set LAKECDC_IMAGE, the image built from deploy/Dockerfile}"
NAMESPACE="${NAMESPACE:-lakecdc}"
LAKE_CLAIM="${LAKE_CLAIM:-lakecdc-lake}"   # a ReadWriteMany PersistentVolumeClaim holding warehouse and checkpoints
LAKE_PATH="${LAKE_PATH:-/lake}"
EXECUTORS="${EXECUTORS:-2}"

cmd=(spark-submit
  --master "$K8S_MASTER" --deploy-mode cluster
  --name "lakecdc-${1:?a lakecdc action}"
  --conf "spark.kubernetes.namespace=$NAMESPACE"
  --conf "spark.kubernetes.container.image=$LAKECDC_IMAGE"
  --conf spark.kubernetes.authenticate.driver.serviceAccountName=lakecdc
  --conf "spark.executor.instances=$EXECUTORS"
  --conf spark.executor.cores=2 --conf spark.executor.memory=2g --conf spark.driver.memory=2g
  --conf spark.pyspark.python=/usr/local/bin/python
  # the job's state and tables: one shared volume, mounted at the same path in the driver and executors
  --conf "spark.kubernetes.driver.volumes.persistentVolumeClaim.lake.options.claimName=$LAKE_CLAIM"
  --conf "spark.kubernetes.driver.volumes.persistentVolumeClaim.lake.mount.path=$LAKE_PATH"
  --conf "spark.kubernetes.executor.volumes.persistentVolumeClaim.lake.options.claimName=$LAKE_CLAIM"
  --conf "spark.kubernetes.executor.volumes.persistentVolumeClaim.lake.mount.path=$LAKE_PATH"
  # SIGTERM on pod deletion: lakecdc stops after the batch in flight (LAKECDC_STOP_TIMEOUT, default 60 s)
  --conf spark.kubernetes.driverEnv.LAKECDC_STOP_TIMEOUT=60s
  --conf spark.kubernetes.driverEnv.LAKECDC_LOG_FORMAT=json
  ${LAKECDC_SUBMIT_ARGS:-}
  local:///opt/lakecdc/deploy/spark_submit_entry.py "$@")

if [[ "${LAKECDC_PRINT:-}" == "1" ]]; then
  printf '%q ' "${cmd[@]}"
  echo
else
  exec "${cmd[@]}"
fi
