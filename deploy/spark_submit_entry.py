"""The ``lakecdc`` command as a file for ``spark-submit`` (which runs a .py file, not a module):

    spark-submit --master spark://host:7077 [--conf ...] deploy/spark_submit_entry.py \\
        kafka-sync-table --warehouse ... --database ... --table ... --kafka-conf ...

The master, deploy mode and confs are spark-submit's (and ``spark-defaults.conf``'s); lakecdc adds no
master and no driver JVM options of its own (``ingest.spark_conf``). The driver's Python must have
lakecdc installed (``PYSPARK_DRIVER_PYTHON``, or a packed environment: README, Deploying). Python
applications run in client deploy mode on a standalone cluster: Spark refuses cluster deploy mode
for them ("Cluster deploy mode is currently not supported for python applications on standalone
clusters").
"""

from __future__ import annotations

import sys

from ingest.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
