"""Worker memory helpers, each run in a fresh interpreter: the test process has pandas loaded."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_pa_array_no_longer_imports_pandas() -> None:
    out = _run(
        """
        import sys
        import pyarrow as pa
        from ingest.workers.memory import keep_pandas_out
        keep_pandas_out()
        keep_pandas_out()  # idempotent
        arr = pa.array(["a", None, "c"], pa.string())
        ints = pa.array((1, 2, None))
        finders = [type(f).__name__ if not isinstance(f, type) else f.__name__ for f in sys.meta_path]
        print("pandas" in sys.modules, arr.to_pylist(), ints.type, ints.null_count, "_NoPandas" in finders)
        """
    )
    assert out == "False ['a', None, 'c'] int64 1 False"


def test_without_the_call_pyarrow_imports_pandas() -> None:
    # The behaviour keep_pandas_out exists for; if pyarrow stops doing this, the call can go.
    out = _run(
        """
        import sys
        import pyarrow as pa
        pa.array([1])
        print("pandas" in sys.modules)
        """
    )
    assert out == "True"


def test_pandas_still_works_when_asked_for() -> None:
    out = _run(
        """
        import pyarrow as pa
        from ingest.workers.memory import keep_pandas_out
        keep_pandas_out()
        pa.array([1])
        import pandas as pd
        table = pa.Table.from_pandas(pd.DataFrame({"a": [1, 2]}))
        frame = table.to_pandas()
        series = pa.array(pd.Series([1.5, None]))
        print(frame["a"].tolist(), series.to_pylist())
        """
    )
    assert out == "[1, 2] [1.5, None]"


def test_a_process_with_pandas_is_left_alone() -> None:
    out = _run(
        """
        import pandas as pd
        import pyarrow as pa
        from ingest.workers.memory import keep_pandas_out
        keep_pandas_out()
        print(pa.array(pd.Series([1.5, None])).to_pylist())
        """
    )
    assert out == "[1.5, None]"
