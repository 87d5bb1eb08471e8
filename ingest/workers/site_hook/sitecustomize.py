"""Run by Python's ``site`` at the start of each Python process a local-mode lakecdc job's Spark starts:
drops the installed PySpark's own zips from the path (``ingest.workers.spark_path``), then runs the
``sitecustomize`` this one hides, if there is one."""

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _apply() -> None:
    from ingest.workers.spark_path import installed_copies

    drop = installed_copies(sys.path)
    sys.path[:] = [p for p in sys.path if p not in drop and os.path.abspath(p or ".") != _HERE]
    for entry in drop:  # else importlib.invalidate_caches() (PySpark's workers call it) reads the zips again
        sys.path_importer_cache.pop(entry, None)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is not None and spec.loader is not None and spec.origin != __file__:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


try:
    _apply()
except Exception as e:  # never stop a worker from starting: the zips only cost time
    print(f"lakecdc: PySpark's zips stay on the path ({e!r})", file=sys.stderr)
