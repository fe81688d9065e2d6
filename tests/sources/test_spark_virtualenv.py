"""Spark from a virtualenv, as a user runs it (issue 31): no ``PYSPARK_PYTHON``, and ``python3``
on the PATH is not the interpreter that has slicewise. Each case runs in a fresh interpreter,
so that no earlier Spark session or environment variable of the test run helps.

Before the fix the workers started Spark's default ``python3`` and every pass failed inside
them with ``PythonException ... No module named 'slicewise'`` (or 'numpy').
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest
from pool_frames import java_problem

HERE = Path(__file__).resolve().parent

SCRIPT = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    sys.path.insert(0, {here!r})
    from pool_frames import SIGNALS, make_pool
    import slicewise as sw
    from pyspark.sql import SparkSession

    warnings.simplefilter("ignore")
    spark = (
        SparkSession.builder.master("local[2]").appName("slicewise-venv")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g").getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    data = make_pool(m=1000, n=150, seed=3)
    frame = spark.createDataFrame(data.pool).repartition(2)
    try:
        out = sw.profile(frame, gold=data.gold, on="id", z="z", signals=SIGNALS,
                         label="human", method="lace")
    except ImportError as error:
        print("IMPORT-ERROR:", error)
        raise SystemExit(3)
    ref = sw.profile(data.merged, z="z", signals=SIGNALS, label="human", method="lace")
    print("MAXDIFF", float(np.max(np.abs(out.estimate - ref.estimate))))
    spark.stop()
    """
)


def _run(tmp_path: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    problem = java_problem()
    if problem is not None:
        pytest.fail(f"The Spark tests need Java 17+ (install openjdk-17-jre-headless): {problem}.")
    script = tmp_path / "spark_pool.py"
    script.write_text(SCRIPT.format(here=str(HERE)), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    # the PATH a user has outside the virtualenv: its bin/ (where `python3` is slicewise's) removed
    own_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != own_bin)
    env.update(extra_env)
    return subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600
    )


def test_spark_local_mode_without_pyspark_python(tmp_path: Path) -> None:
    """The workers use the driver's interpreter and give the in-memory profile."""
    done = _run(tmp_path, {})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("MAXDIFF"))
    assert float(line.split()[1]) < 1e-9


def test_spark_workers_without_the_dependencies_say_what_they_need(tmp_path: Path) -> None:
    """PYSPARK_PYTHON names an interpreter without numpy (a bare virtualenv): the package is
    shipped, the worker fails on numpy, and the error says what the executors need."""
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    done = _run(tmp_path, {"PYSPARK_PYTHON": str(bare / "bin" / "python")})
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-3000:]
    message = next(x for x in done.stdout.splitlines() if x.startswith("IMPORT-ERROR"))
    assert "The Spark executors' Python cannot import 'numpy'" in message
    assert "with numpy, pandas, pyarrow, scipy and scikit-learn" in message
    assert "PYSPARK_PYTHON" in message
