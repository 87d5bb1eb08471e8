"""The folder a local-mode job adds to the ``PYTHONPATH`` of the Python processes its Spark starts, for
its ``sitecustomize`` (``ingest.workers.spark_path``). Nothing imports this package."""
