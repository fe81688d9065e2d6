"""The SQL floor of ``auto`` in ``benchmarks/bench_pool_sources.py`` (one DuckDB aggregate of the
pool sums ``auto``'s pool side computes, given its fitted models) sums what the DuckDB source
sums: otherwise it would be the floor of some other computation."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

import slicewise as sw
from benchmarks import bench_pool_sources as bench
from slicewise.sources import duckdb as duckdb_source

ROWS = 40_000


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("floor")
    bench.generate(root, ROWS, 2_000)
    return root


@pytest.mark.parametrize(("z", "learned"), [("segment", "ColumnSumsPass"), ("z", "FusedPass")])
def test_auto_floor_sums_equal_the_sources_sums(
    pool: Path, z: str, learned: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every named sum of the floor's query equals the source's to 1e-9 (relative; absolute
    1e-12 per pool row for the sums of centred signals, which are near zero)."""
    # restored at teardown: capture_passes replaces the source's run
    monkeypatch.setattr(duckdb_source.DuckDBSource, "run", duckdb_source.DuckDBSource.run)
    captured = bench.capture_passes()
    files = str(pool / "pool" / "*.parquet")
    sw.profile(
        files,
        gold=pool / "gold.parquet",
        on="id",
        z=z,
        signals=bench.SIGNALS,
        label="human",
        method="auto",
    )
    assert learned in [type(p).__name__ for p, _ in captured]
    spec = bench.auto_spec(captured)
    found = bench.floor_sums(
        duckdb.connect().sql(bench.auto_floor_sql(files, spec)).fetchall(), spec
    )
    source = bench.slicewise_sums(captured, spec["kind"])
    assert set(found) == set(source)
    for name, value in source.items():
        np.testing.assert_allclose(found[name], value, rtol=1e-9, atol=1e-12 * ROWS, err_msg=name)
    # the floor reads the models: other coefficients give other prediction sums
    if spec["kind"] == "categorical":
        spec["logits"] = (np.asarray(spec["logits"]) * 1.1).tolist()
        moved = ["p", "a"]
    else:
        spec["models"] = (np.asarray(spec["models"]) * 1.1).tolist()
        moved = ["1.0:p", "1.0:a"]
    other = bench.floor_sums(
        duckdb.connect().sql(bench.auto_floor_sql(files, spec)).fetchall(), spec
    )
    for name in moved:
        assert not np.allclose(other[name], source[name], rtol=1e-6)
