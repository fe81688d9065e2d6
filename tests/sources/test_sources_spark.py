"""A Spark DataFrame pool (local mode) gives the in-memory profile to 1e-9.

The Spark tests need Java 17+. Without it they fail, saying so: they are never skipped silently.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pool_frames import SIGNALS, PoolData, assert_same_profile, java_problem, make_pool

import slicewise as sw

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    problem = java_problem()
    if problem is not None:
        pytest.fail(
            f"The Spark pool-source tests need Java 17+ (install openjdk-17-jre-headless): "
            f"{problem}."
        )
    os.environ["PYSPARK_PYTHON"] = sys.executable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pyspark.sql import SparkSession

        session = (
            SparkSession.builder.master("local[2]")
            .appName("slicewise-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.driver.memory", "1g")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data() -> PoolData:
    return make_pool(m=3000, n=300, seed=3)


@pytest.fixture(scope="module")
def frame(spark: Any, data: PoolData) -> Any:
    return spark.createDataFrame(data.pool).repartition(3).cache()


@pytest.mark.parametrize(
    ("z", "method"), [("z", "lace"), ("segment", "global_cv"), ("level", "naive")]
)
def test_matches_in_memory(frame: Any, data: PoolData, z: str, method: str) -> None:
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        frame, gold=data.gold, on="id", z=z, signals=SIGNALS, label="human", method=method
    )
    assert_same_profile(out, ref)


@pytest.mark.parametrize(
    ("z", "method"),
    [("z", "auto"), ("segment", "auto"), ("level", "lace_learned"), ("shop", "lace_shrunk")],
)
def test_borrowing_methods_match_in_memory(frame: Any, data: PoolData, z: str, method: str) -> None:
    """The fold models and the smoothing's model run on the executors; the labeled rows come
    back in the canonical order, so the repartitioned frame gives the same folds."""
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        frame, gold=data.gold, on="id", z=z, signals=SIGNALS, label="human", method=method
    )
    assert_same_profile(out, ref)
    assert out.params["chosen"] == ref.params["chosen"]


def test_errors(frame: Any, data: PoolData) -> None:
    gold = pd.concat([data.gold, pd.DataFrame({"id": [7], "human": [1.0]})])
    with pytest.raises(ValueError, match="`gold` has 1 of 301 keys that match no row"):
        sw.profile(frame, gold=gold, on="id", z="z", signals=SIGNALS, label="human", method="lace")
    with pytest.raises(ValueError, match="Method 'plugin_multi' needs the whole pool in memory"):
        sw.profile(
            frame,
            gold=data.gold,
            on="id",
            z="z",
            signals=SIGNALS,
            label="human",
            method="plugin_multi",
        )
    assert np.isfinite(data.gold["human"]).all()


@pytest.mark.parametrize(("z", "method"), [("segment", "auto"), ("shop", "lace_learned")])
def test_learned_predictions_are_one_spark_sql_aggregate(
    frame: Any, data: PoolData, z: str, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a text profile column the fold models' (and the smoothing's) predictions are Spark
    SQL over a temporary view, not Python on the executors, and give the in-memory profile."""
    from slicewise.sources import learned_sql

    states: list[Any] = []
    level_state = learned_sql.level_state

    def spied(*args: Any) -> Any:
        state = level_state(*args)
        states.append(state)
        return state

    monkeypatch.setattr(learned_sql, "level_state", spied)
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        frame, gold=data.gold, on="id", z=z, signals=SIGNALS, label="human", method=method
    )
    assert_same_profile(out, ref)
    assert out.params.get("chosen") == ref.params.get("chosen")
    assert states
    assert all(state is not None for state in states)
