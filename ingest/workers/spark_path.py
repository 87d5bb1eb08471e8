"""Spark's Python processes in local mode import PySpark from the installed package, not from Spark's zip
of it.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` and py4j's zip first on the path of every Python
process it starts (task workers, the daemon that forks them, the data-source planners, the streaming
source's runner). When PySpark is installed by pip, ``SPARK_HOME`` is the installed package and the zip
holds the very modules installed beside it, but Python caches no bytecode for a zip: each such process
compiled PySpark's sources again (Python 3.11's zipimport compiles a module twice, once to name its file
and once to run it). Importing PySpark's worker modules took 4.0-4.5 s from the zip against 1.1-1.6 s
installed (load ~6), and a 500k-row MySQL snapshot job spent a fifth of its Python CPU compiling
(bench/README.md, "Job start-up").

A local-mode job puts ``site_hook`` (a ``sitecustomize``) on the path of the processes its Spark starts
(``with_site_hook``); it drops the zips that ``installed_copies`` names. A zip of any other Spark (a
cluster's own ``SPARK_HOME``) stays first on the path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

# the zips under an installed PySpark (<dir>/pyspark/python/lib/...) that Spark adds to the path
_LIB = os.path.join("pyspark", "python", "lib")


def installed_copies(path: Sequence[str]) -> set[str]:
    """The entries of ``path`` that are an installed PySpark's own zips: ``<dir>/pyspark/python/lib/
    pyspark.zip`` or ``py4j-<version>-src.zip`` where ``<dir>`` is itself on ``path`` and holds that
    PySpark (and, for py4j's zip, the same py4j version)."""
    dirs = {os.path.normpath(p) for p in path if p}
    out: set[str] = set()
    for entry in path:
        lib, name = os.path.split(os.path.normpath(entry))
        if not lib.endswith(os.sep + _LIB):
            continue
        site = lib[: -len(_LIB) - 1]
        if site not in dirs:
            continue
        installed_pyspark = name == "pyspark.zip" and os.path.isfile(os.path.join(site, "pyspark", "__init__.py"))
        installed_py4j = name.startswith("py4j-") and name.endswith("-src.zip") and _py4j_version(site) == name[5:-8]
        if installed_pyspark or installed_py4j:
            out.add(entry)
    return out


def _py4j_version(site: str) -> str | None:
    """The version of the py4j installed in ``site`` (PySpark pins one exact version), read without
    importing it."""
    try:
        with open(os.path.join(site, "py4j", "version.py"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    found = re.search(r"__version__\s*=\s*[\"']([^\"']+)[\"']", text)
    return found.group(1) if found else None


# the folder whose ``sitecustomize`` applies ``installed_copies`` at a process's start
SITE_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site_hook")


def with_site_hook(pythonpath: str | None) -> str:
    """``PYTHONPATH`` for the processes a local-mode Spark starts: ``SITE_HOOK`` added once."""
    parts = [p for p in (pythonpath or "").split(os.pathsep) if p]
    return os.pathsep.join(parts if SITE_HOOK in parts else [*parts, SITE_HOOK])
