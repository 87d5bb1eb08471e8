"""The site hook that makes Spark's Python processes import the installed PySpark instead of Spark's zip of
it (ingest/workers/spark_path.py): which zips it drops, and what a process started with it sees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyspark

from ingest.workers.spark_path import SITE_HOOK, installed_copies, with_site_hook

SITE = str(Path(pyspark.__file__).parent.parent)
LIB = os.path.join(SITE, "pyspark", "python", "lib")
ZIPS = sorted(str(p) for p in Path(LIB).glob("*.zip"))


def test_the_installed_pysparks_own_zips_are_dropped() -> None:
    assert len(ZIPS) == 2  # pyspark.zip and py4j-<version>-src.zip, as Spark puts them on the path
    assert installed_copies([*ZIPS, "/somewhere", SITE]) == set(ZIPS)


def test_zips_of_a_pyspark_not_installed_on_the_path_stay(tmp_path: Path) -> None:
    # the installed PySpark's zips while its folder is not on the path (a cluster's own SPARK_HOME)
    assert installed_copies(ZIPS) == set()
    other = tmp_path / "pyspark" / "python" / "lib"
    other.mkdir(parents=True)
    zips = [str(other / "pyspark.zip"), str(other / "py4j-0.10.9.9-src.zip")]
    # its folder is on the path but holds no PySpark nor py4j
    assert installed_copies([*zips, str(tmp_path)]) == set()


def test_a_py4j_zip_of_another_version_than_the_installed_one_stays() -> None:
    other = os.path.join(LIB, "py4j-0.0.1-src.zip")
    assert installed_copies([other, SITE]) == set()


def test_the_hook_is_added_once() -> None:
    assert with_site_hook(None) == SITE_HOOK
    assert with_site_hook(f"/a{os.pathsep}") == f"/a{os.pathsep}{SITE_HOOK}"
    twice = with_site_hook(with_site_hook("/a"))
    assert twice.split(os.pathsep) == ["/a", SITE_HOOK]


def _start(pythonpath: list[str], code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_a_process_started_as_spark_starts_workers_imports_the_installed_pyspark(tmp_path: Path) -> None:
    code = "import sys, pyspark, py4j; print(pyspark.__file__); print(py4j.__file__); print(*sys.path, sep='|')"
    without = _start(ZIPS, code)
    assert without[0].startswith(os.path.join(LIB, "pyspark.zip"))  # Spark's own order: the zip first
    pyspark_file, py4j_file, path = _start([*ZIPS, SITE_HOOK], code)
    assert pyspark_file == pyspark.__file__
    assert py4j_file.startswith(SITE) and ".zip" not in py4j_file
    assert not set(path.split("|")) & {*ZIPS, SITE_HOOK}


def test_a_sitecustomize_the_hook_hides_still_runs(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.lakecdc_probe = 'ran'\n")
    out = _start([*ZIPS, SITE_HOOK, str(tmp_path)], "import sys; print(getattr(sys, 'lakecdc_probe', None))")
    assert out == ["ran"]
