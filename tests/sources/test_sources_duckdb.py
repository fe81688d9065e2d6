"""Out-of-core pools read by DuckDB give the in-memory profile to 1e-9."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from pool_frames import SIGNALS, PoolData, assert_same_profile, make_pool

import slicewise as sw
from slicewise.sources import kernel_passes, percentiles, scan


@pytest.fixture(scope="module")
def data() -> PoolData:
    return make_pool()


@pytest.fixture(scope="module")
def files(data: PoolData, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pool")
    single = root / "pool.parquet"
    data.pool.to_parquet(single, index=False)
    shards = root / "shards"
    shards.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(data.pool)), 4)):
        data.pool.iloc[rows].to_parquet(shards / f"part-{i}.parquet", index=False)
    hive = root / "hive"
    data.pool.to_parquet(hive, partition_cols=["part"], index=False)
    gold_csv = root / "grades.csv"
    data.gold.to_csv(gold_csv, index=False)
    return {"file": single, "shards": shards, "hive": hive, "gold": gold_csv}


def _source(kind: str, files: dict[str, Path]) -> Any:
    if kind == "file":
        return files["file"]
    if kind == "glob":
        return str(files["shards"] / "*.parquet")
    if kind == "hive":
        return files["hive"]
    con = duckdb.connect()
    if kind == "relation":
        return con.read_parquet(str(files["file"]))
    return (con, f"SELECT * FROM read_parquet('{files['shards']}/*.parquet')")


@pytest.mark.parametrize("source", ["file", "glob", "hive", "relation", "query"])
@pytest.mark.parametrize("z", ["z", "segment"])
@pytest.mark.parametrize("method", ["naive", "lace", "global_cv"])
def test_matches_in_memory(
    data: PoolData, files: dict[str, Path], source: str, z: str, method: str
) -> None:
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        _source(source, files),
        gold=data.gold,
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        method=method,
    )
    assert_same_profile(out, ref)


@pytest.mark.parametrize(
    ("z", "options"),
    [
        ("z", {"method": "lace", "nuisance_scale": 2.0, "target": "population"}),
        ("z", {"method": "lace", "grid": 7, "bandwidth": 0.4, "ridge": 0.0}),
        ("z", {"method": "lace", "grid": [-1.0, 0.0, 1.5]}),
        ("level", {"method": "lace"}),
        ("level", {"method": "global_cv", "kind": "continuous"}),
        ("segment", {"method": "per_signal_cv", "primary": "judge"}),
        ("segment", {"method": "lace", "nuisance_scale": np.inf, "grid": ["seg03", "seg01"]}),
        ("level", {"method": "global_cv", "kind": "categorical"}),
        ("level", {"method": "lace", "kind": "categorical", "grid": [4, 2]}),
    ],
)
def test_options_match_in_memory(
    data: PoolData, files: dict[str, Path], z: str, options: dict[str, Any]
) -> None:
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", **options)
    out = sw.profile(
        str(files["shards"]),
        gold=files["gold"],
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        **options,
    )
    assert_same_profile(out, ref)


@pytest.mark.parametrize("z", ["z", "segment", "level", "shop"])
@pytest.mark.parametrize("method", ["auto", "lace_shrunk", "lace_learned"])
def test_borrowing_methods_match_in_memory(
    data: PoolData, files: dict[str, Path], z: str, method: str
) -> None:
    """auto and its candidates: signal moments at the nuisance scales they try, the learned
    prediction's fold models applied to the pool in a scan, the same folds (``shop`` has more
    levels than the learner's interactions, so its design is standardised over the pool)."""
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        _source("glob", files),
        gold=data.gold,
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        method=method,
    )
    assert_same_profile(out, ref)
    assert out.params["chosen"] == ref.params["chosen"]


@pytest.mark.parametrize("source", ["hive", "query"])
@pytest.mark.parametrize(
    ("z", "options"),
    [
        ("z", {"method": "auto", "rng": 7, "folds": 4}),
        ("segment", {"method": "auto", "smooth": "none"}),
        ("level", {"method": "lace_learned", "shrinkage": 16.0, "nuisance_scale": 2.0}),
        (
            "segment",
            {"method": "lace_shrunk", "grid": ["seg05", "seg02"], "nuisance_scale": np.inf},
        ),
    ],
)
def test_borrowing_options_match_in_memory(
    data: PoolData, files: dict[str, Path], source: str, z: str, options: dict[str, Any]
) -> None:
    """Any scan order (hive partitions reorder the rows) gives the same folds: the labeled rows
    are put in the in-memory table's canonical order."""
    ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", **options)
    out = sw.profile(
        _source(source, files),
        gold=data.gold,
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        **options,
    )
    assert_same_profile(out, ref)


def test_auto_without_signals_is_naive(data: PoolData, files: dict[str, Path]) -> None:
    ref = sw.profile(data.merged, z="segment", label="human")
    out = sw.profile(_source("glob", files), gold=data.gold, on="id", z="segment", label="human")
    assert_same_profile(out, ref)
    assert out.notes[0] == ref.notes[0]


@pytest.mark.parametrize("z", ["segment", "level"])
def test_auto_smoothing_matches_in_memory(data: PoolData, files: dict[str, Path], z: str) -> None:
    """With few labels per slice auto smooths the disjoint domains: the synthetic covariate's
    prediction is applied to the pool in a scan.

    Direct and smoothed estimates agree to 1e-9. The Bayesian Fay-Herriot fit anchors its
    quadrature grid on a fixed lattice (smoothing/bayes.py), so a last-bit difference in the sums
    (batches, or DuckDB's parallel GROUP BY, add in another order) moves only the densities on
    the nodes; before, the grid followed the optimiser's mode and the smoothed values differed by
    up to 1.5e-4 (level).
    """
    gold = data.gold.iloc[:45]
    merged = data.pool.merge(gold, on="id", how="left")
    ref = sw.profile(merged, z=z, signals=SIGNALS, label="human")
    assert any(ref.params["smoothed"])
    out = sw.profile(
        _source("glob", files), gold=gold, on="id", z=z, signals=SIGNALS, label="human"
    )
    assert out.params["chosen"] == ref.params["chosen"]
    assert out.params["smoothed"] == ref.params["smoothed"]
    np.testing.assert_allclose(
        out.params["direct_estimate"], ref.params["direct_estimate"], rtol=0, atol=1e-9
    )
    assert_same_profile(out, ref, atol=1e-9)
    np.testing.assert_allclose(
        out.params["shrinkage_weight"], ref.params["shrinkage_weight"], rtol=0, atol=1e-9
    )


def test_boosting_learner_matches_in_memory(tmp_path: Path) -> None:
    small = make_pool(m=1200, n=150, seed=4)
    small.pool.to_parquet(tmp_path / "pool.parquet", index=False)
    options = {"method": "lace_learned", "learner": "boosting", "shrinkage": np.inf}
    ref = sw.profile(small.merged, z="level", signals=SIGNALS, label="human", **options)
    out = sw.profile(
        str(tmp_path),
        gold=small.gold,
        on="id",
        z="level",
        signals=SIGNALS,
        label="human",
        **options,
    )
    assert_same_profile(out, ref)


@pytest.mark.parametrize("method", ["lace", "global_cv"])
def test_categorical_sums_are_one_sql_aggregate(
    data: PoolData, files: dict[str, Path], method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-level sums come from DuckDB's GROUP BY, not from the record-batch pass."""

    def batches_not_used(self: Any, batch: Any) -> Any:
        raise AssertionError("the categorical kernel sums were computed from record batches")

    monkeypatch.setattr(kernel_passes.MomentsPass, "partial", batches_not_used)
    ref = sw.profile(data.merged, z="segment", signals=SIGNALS, label="human", method=method)
    for source in ("glob", "query"):
        out = sw.profile(
            _source(source, files),
            gold=data.gold,
            on="id",
            z="segment",
            signals=SIGNALS,
            label="human",
            method=method,
        )
        assert_same_profile(out, ref)


@pytest.mark.parametrize("source", ["glob", "relation", "query", "label"])
def test_statistics_are_sql_queries(
    data: PoolData,
    files: dict[str, Path],
    source: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The statistics pass (counts, moments, levels, labeled rows) is DuckDB SQL: a semi join
    with the gold keys on our or the caller's connection, an IN list on a bare relation, the
    rows whose label is present without gold."""

    def batches_not_used(self: Any, batch: Any) -> Any:
        raise AssertionError("the statistics were computed from record batches")

    monkeypatch.setattr(scan.StatsPass, "partial", batches_not_used)
    for z in ("z", "segment"):
        ref = sw.profile(data.merged, z=z, signals=SIGNALS, label="human", method="lace")
        if source == "label":
            data.merged.to_parquet(tmp_path / "pool.parquet", index=False)
            call: dict[str, Any] = {"table": str(tmp_path / "*.parquet")}
        else:
            call = {"table": _source(source, files), "gold": data.gold, "on": "id"}
        out = sw.profile(**call, z=z, signals=SIGNALS, label="human", method="lace")
        assert_same_profile(out, ref)


def test_float_keys_are_matched_from_record_batches(data: PoolData, tmp_path: Path) -> None:
    """Keys that are neither integers nor strings are compared as Arrow writes them."""
    pool = data.pool.assign(key=data.pool["id"] + 0.5)
    pool.to_parquet(tmp_path / "pool.parquet", index=False)
    gold = data.gold.assign(key=data.gold["id"] + 0.5)[["key", "human"]]
    ref = sw.profile(data.merged, z="segment", signals=SIGNALS, label="human", method="lace")
    out = sw.profile(
        str(tmp_path / "*.parquet"),
        gold=gold,
        on="key",
        z="segment",
        signals=SIGNALS,
        label="human",
        method="lace",
    )
    assert_same_profile(out, ref)


def test_label_column_in_the_pool(data: PoolData, tmp_path: Path) -> None:
    """Without gold=, the labeled rows are those of the pool whose label is present."""
    data.merged.to_parquet(tmp_path / "pool.parquet", index=False)
    ref = sw.profile(data.merged, z="z", signals=SIGNALS, label="human", method="lace")
    out = sw.profile(
        str(tmp_path / "*.parquet"), z="z", signals=SIGNALS, label="human", method="lace"
    )
    assert_same_profile(out, ref)


def test_two_key_columns(data: PoolData, files: dict[str, Path]) -> None:
    gold = data.gold.merge(data.pool[["id", "segment"]], on="id")
    ref = sw.profile(data.merged, z="segment", signals=SIGNALS, label="human", method="lace")
    out = sw.profile(
        files["hive"],
        gold=gold,
        on=["segment", "id"],
        z="segment",
        signals=SIGNALS,
        label="human",
        method="lace",
    )
    assert_same_profile(out, ref)


def test_gold_with_a_dataframe_pool_joins_in_memory(data: PoolData) -> None:
    ref = sw.profile(data.merged, z="z", signals=SIGNALS, label="human", method="auto")
    out = sw.profile(data.pool, gold=data.gold, on="id", z="z", signals=SIGNALS, label="human")
    np.testing.assert_allclose(out.estimate, ref.estimate, rtol=0, atol=1e-12)


def test_single_parquet_file_keeps_in_memory_methods(
    data: PoolData, files: dict[str, Path]
) -> None:
    """A single Parquet file is read into memory for a method whose pool side is not a sum."""
    ref = sw.profile(
        data.merged, z="segment", signals=SIGNALS, label="human", method="plugin_multi"
    )
    out = sw.profile(
        files["file"],
        gold=files["gold"],
        on="id",
        z="segment",
        signals=SIGNALS,
        label="human",
        method="plugin_multi",
    )
    np.testing.assert_allclose(out.estimate, ref.estimate, rtol=0, atol=1e-12)


def test_progress_bar(data: PoolData, files: dict[str, Path], capsys: Any) -> None:
    out = sw.profile(
        str(files["shards"] / "*.parquet"),
        gold=data.gold,
        on="id",
        z="z",
        signals=SIGNALS,
        label="human",
        method="lace",
        progress=True,
    )
    assert np.all(np.isfinite(out.estimate))
    assert "rows" in capsys.readouterr().err


# --- errors -------------------------------------------------------------------------------------


def test_methods_that_need_the_pool_in_memory(files: dict[str, Path], data: PoolData) -> None:
    for method in ("ppci", "plugin_multi", "local_ppi"):
        with pytest.raises(ValueError, match=f"Method '{method}' needs the whole pool in memory"):
            sw.profile(
                files["hive"],
                gold=data.gold,
                on="id",
                z="z",
                signals=SIGNALS,
                label="human",
                method=method,
            )


def test_unmatched_gold_keys(files: dict[str, Path], data: PoolData) -> None:
    gold = pd.concat([data.gold, pd.DataFrame({"id": [1, 2, 3], "human": [1.0, 0.0, 1.0]})])
    with pytest.raises(
        ValueError,
        match=r"`gold` has 3 of 403 keys that match no row of the pool \('1', '2', '3'\)",
    ):
        sw.profile(
            files["hive"],
            gold=gold,
            on="id",
            z="z",
            signals=SIGNALS,
            label="human",
            method="lace",
        )


def test_gold_key_matching_two_pool_rows(data: PoolData, tmp_path: Path) -> None:
    pool = pd.concat([data.pool, data.pool.iloc[[0, 1]]])
    pool.to_parquet(tmp_path / "pool.parquet", index=False)
    gold = pd.concat([data.gold, pd.DataFrame({"id": pool["id"].iloc[:2], "human": [1.0, 0.0]})])
    gold = gold.drop_duplicates("id")
    with pytest.raises(
        ValueError, match=r"`gold` has 2 keys that match two or more rows of the pool"
    ):
        sw.profile(
            str(tmp_path),
            gold=gold,
            on="id",
            z="z",
            signals=SIGNALS,
            label="human",
            method="lace",
        )


def test_duplicate_gold_keys(files: dict[str, Path], data: PoolData) -> None:
    gold = pd.concat([data.gold, data.gold.iloc[:2]])
    with pytest.raises(ValueError, match="`gold` has 2 duplicate keys"):
        sw.profile(
            files["hive"], gold=gold, on="id", z="z", signals=SIGNALS, label="human", method="lace"
        )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"z": "nope"}, r"The 'z' parameter of profile names column\(s\) 'nope' that are not in"),
        ({"signals": ["judge", "nope"]}, r"The 'signals' parameter of profile names column"),
        ({"on": "key"}, r"`gold` has no key \(`on`\) column 'key'"),
        ({"label": "grade"}, r"`gold` has no label \(`label`\) column 'grade'"),
        ({"gold": None}, "The 'on' parameter of profile joins a `gold` table"),
        ({"smooth": "fh"}, "The 'smooth' parameter of profile is 'fh'"),
        ({"id": "id"}, "The 'id' parameter of profile is checked in memory only"),
        ({"primary": "nope"}, "The 'primary' parameter of profile must name one of the signals"),
        ({"signals": None}, "Method 'lace' needs at least one cheap signal"),
        ({"kind": "ordinal", "z": "segment"}, "`z` column 'segment' has dtype string"),
    ],
)
def test_bad_input(
    files: dict[str, Path], data: PoolData, arguments: dict[str, Any], message: str
) -> None:
    call: dict[str, Any] = {
        "gold": data.gold,
        "on": "id",
        "z": "z",
        "signals": SIGNALS,
        "label": "human",
        "method": "lace",
    }
    call.update(arguments)
    with pytest.raises(ValueError, match=message):
        sw.profile(files["hive"], **call)


@pytest.mark.parametrize("z", ["z", "segment"])
def test_missing_and_infinite_signal_values(data: PoolData, tmp_path: Path, z: str) -> None:
    """Missing values are counted per column, infinite ones by the second query that a
    non-finite sum asks for: both are in the count the error gives, for a continuous profile
    (one aggregate) and a categorical one (grouped by the text column)."""
    pool = data.pool.copy()
    pool.loc[[3, 5], "judge"] = np.nan  # written as nulls
    pool.loc[[8], "judge"] = np.inf
    pool.loc[[9], "judge"] = -np.inf
    pool.to_parquet(tmp_path / "pool.parquet", index=False)
    with pytest.raises(ValueError, match="Signal column 'judge' has 4 missing or non-finite"):
        sw.profile(
            str(tmp_path),
            gold=data.gold,
            on="id",
            z=z,
            signals=SIGNALS,
            label="human",
            method="lace",
        )


def test_missing_profile_values(data: PoolData, tmp_path: Path) -> None:
    pool = data.pool.copy()
    pool.loc[[3], "segment"] = None
    pool.to_parquet(tmp_path / "pool.parquet", index=False)
    with pytest.raises(ValueError, match="`z` column 'segment' has 1 missing values"):
        sw.profile(
            str(tmp_path),
            gold=data.gold,
            on="id",
            z="segment",
            signals=SIGNALS,
            label="human",
            method="lace",
        )


def test_labels_outside_unit_interval(files: dict[str, Path], data: PoolData) -> None:
    gold = data.gold.assign(human=data.gold["human"] * 2)
    with pytest.raises(ValueError, match="values outside"):
        sw.profile(
            files["hive"], gold=gold, on="id", z="z", signals=SIGNALS, label="human", method="lace"
        )


# --- exact percentiles --------------------------------------------------------------------------


def _runner(x: np.ndarray) -> Any:
    import pyarrow as pa

    batches = [pa.record_batch([pa.array(c)], names=["x"]) for c in np.array_split(x, 7)]

    def run(pass_: Any) -> Any:
        state = None
        for batch in batches:
            part = pass_.partial(batch)
            state = part if state is None else pass_.merge(state, part)
        return state

    return run


def _percentile_case(case: str) -> np.ndarray:
    """A column with heavy tails, ties, one value, two values, or values near +-1e308."""
    rng = np.random.default_rng(1)
    if case == "smooth":
        return rng.standard_cauchy(20_000)
    if case == "ties":
        return rng.integers(0, 4, 20_000).astype(float)
    if case == "constant":
        return np.full(500, 2.5)
    if case == "tiny":
        return np.array([3.0, -1.0])
    return np.concatenate([[-1e308, 1e308], rng.normal(size=5_000)])


@pytest.mark.parametrize("case", ["smooth", "ties", "constant", "tiny"])
def test_exact_percentiles(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(percentiles, "BINS", 16)
    monkeypatch.setattr(percentiles, "COLLECT", 50)
    x = _percentile_case(case)
    q = [5, 50, 95, 0, 100]
    got = percentiles.exact_percentiles(
        _runner(x), "x", q, n=x.size, lo=float(x.min()), hi=float(x.max())
    )
    np.testing.assert_array_equal(got, np.percentile(x, q))


@pytest.mark.parametrize("case", ["smooth", "ties", "constant", "tiny", "wide"])
def test_sql_percentiles(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQL aggregates of a DuckDB pool give np.percentile exactly (several refinement
    rounds with 16 bins), and the moments of the squared standardised column numpy's."""
    from slicewise.sources.duckdb_percentiles import sql_percentiles
    from slicewise.sources.duckdb_sql import quote
    from slicewise.sources.kernel_passes import ProfileColumns, ProfileMomentsPass

    monkeypatch.setattr(percentiles, "BINS", 16)
    monkeypatch.setattr(percentiles, "COLLECT", 50)
    x = _percentile_case(case)
    relation = duckdb.connect().from_arrow(pa.table({"x": x}))
    center, scale = np.array([0.3]), np.array([1.7])
    squares = ProfileMomentsPass(ProfileColumns(("x",)), center, scale)
    q = [5, 50, 95, 0, 100]
    got, moments = sql_percentiles(
        relation, quote, "x", q, n=x.size, lo=float(x.min()), hi=float(x.max()), squares=squares
    )
    np.testing.assert_array_equal(got, np.percentile(x, q))
    assert moments is not None
    if case != "wide":  # the squares of 1e308 overflow
        t = ((x - center[0]) / scale[0]) ** 2
        assert moments[0] == x.size
        np.testing.assert_allclose(moments[1], [t.mean()], rtol=1e-12)
        np.testing.assert_allclose(moments[2], [((t - t.mean()) ** 2).sum()], rtol=1e-9)


def test_percentiles_share_a_histogram_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first pass counts the column once for all four ranks of the 5th and 95th percentiles
    (they share the whole range), and no pass counts one interval twice."""
    monkeypatch.setattr(percentiles, "BINS", 16)
    monkeypatch.setattr(percentiles, "COLLECT", 50)
    rng = np.random.default_rng(2)
    x = rng.normal(size=20_000)
    run = _runner(x)
    intervals: list[list[tuple[float, float]]] = []

    def counted(pass_: Any) -> Any:
        if isinstance(pass_, percentiles.HistogramPass):
            intervals.append([(float(e[0]), float(e[-1])) for e in pass_.edges])
        return run(pass_)

    got = percentiles.exact_percentiles(
        counted, "x", [5, 95], n=x.size, lo=float(x.min()), hi=float(x.max())
    )
    np.testing.assert_array_equal(got, np.percentile(x, [5, 95]))
    assert intervals[0] == [(float(x.min()), float(np.nextafter(x.max(), np.inf)))]
    assert all(len(set(found)) == len(found) for found in intervals)


@pytest.mark.parametrize("method", ["lace", "auto"])
def test_categorical_sums_come_from_the_statistics_scan(
    data: PoolData, files: dict[str, Path], method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For a text profile column the statistics' grouped aggregate gives the levels and the
    per-level sums: no DISTINCT, no third scan of the signals, the in-memory profile to 1e-9."""
    from slicewise.sources import duckdb as duckdb_source

    def not_called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the categorical kernel sums were scanned again")

    monkeypatch.setattr(duckdb_source, "category_sums", not_called)
    monkeypatch.setattr(kernel_passes.MomentsPass, "partial", not_called)
    queries: list[str] = []
    query = duckdb.DuckDBPyRelation.query

    def logged(self: Any, name: str, sql: str) -> Any:
        queries.append(sql)
        return query(self, name, sql)

    monkeypatch.setattr(duckdb.DuckDBPyRelation, "query", logged)
    ref = sw.profile(data.merged, z="segment", signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        _source("glob", files),
        gold=data.gold,
        on="id",
        z="segment",
        signals=SIGNALS,
        label="human",
        method=method,
    )
    assert_same_profile(out, ref)
    assert not any("DISTINCT" in sql for sql in queries)
    assert not any("AS VARCHAR" in sql.split("WHERE")[-1] for sql in queries)  # integer keys


@pytest.mark.parametrize("source", ["glob", "relation"])
def test_integer_keys_match_as_text_does(
    data: PoolData, files: dict[str, Path], source: str
) -> None:
    """Integer key columns are compared as integers, with the result of comparing text: a gold
    key written '007' matches no pool id (7 is written '7'), and says so."""
    gold = data.gold.assign(id=data.gold["id"].astype(str))
    padded = f"00{gold['id'].iloc[0]}"
    gold.loc[gold.index[0], "id"] = padded
    with pytest.raises(
        ValueError,
        match=rf"`gold` has 1 of {len(gold)} keys that match no row of the pool \('{padded}'\)",
    ):
        sw.profile(
            _source(source, files),
            gold=gold,
            on="id",
            z="segment",
            signals=SIGNALS,
            label="human",
            method="lace",
        )


@pytest.mark.parametrize("z", ["segment", "z"])
def test_statistics_of_a_far_from_zero_signal(
    data: PoolData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, z: str
) -> None:
    """The statistics (grouped by a text profile column, or not) shift the sums by the
    signals' mean over the first rows: with a signal 10^6 standard deviations from zero and the
    pool sorted by it (the head's mean about 1.7 sd below the pool's), the profile is still the
    in-memory one to 1e-9."""
    from slicewise.sources import duckdb_sql

    merged = data.merged.assign(length=1e6 + data.merged["agree"].to_numpy())
    merged = merged.sort_values("length", ignore_index=True)
    head = len(merged) // 10
    monkeypatch.setattr(duckdb_sql, "SHIFT_ROWS", head)
    length = merged["length"]
    assert length.iloc[:head].mean() < length.mean() - 1.5 * length.std()
    merged.drop(columns="human").to_parquet(tmp_path / "pool.parquet", index=False)
    ref = sw.profile(merged, z=z, signals=SIGNALS, label="human", method="lace")
    out = sw.profile(
        str(tmp_path / "*.parquet"),
        gold=data.gold,
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        method="lace",
    )
    assert_same_profile(out, ref)


@pytest.mark.parametrize("z", ["segment", "shop"])
@pytest.mark.parametrize(("method", "labels"), [("auto", 400), ("auto", 45), ("lace_learned", 400)])
@pytest.mark.filterwarnings("ignore::slicewise.exceptions.EmptyNeighbourhoodWarning")
def test_learned_predictions_are_one_sql_aggregate(
    data: PoolData,
    files: dict[str, Path],
    z: str,
    method: str,
    labels: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a text profile column the learned pass and the smoothing's synthetic covariate are
    SQL: no record batch reaches Python, the shop design's standardisation comes from the level
    counts, and the in-memory profile to 1e-9 (``lace_learned`` always uses the learned
    prediction, which auto may not choose). auto's criterion smooths naive's estimates on every
    slice under the slice objective (limited translation moves precise slices too), so the
    smoothing's synthetic covariate is needed before the fold models exist: a query of its own
    beside the learned pass's."""

    def not_called(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a pass read record batches")

    for name in ("ColumnSumsPass", "ProfileMomentsPass", "MomentsPass"):
        monkeypatch.setattr(getattr(kernel_passes, name), "partial", not_called)
    queries: list[str] = []
    query = duckdb.DuckDBPyRelation.query

    def logged(self: Any, name: str, sql: str) -> Any:
        queries.append(sql)
        return query(self, name, sql)

    monkeypatch.setattr(duckdb.DuckDBPyRelation, "query", logged)
    gold = data.gold.iloc[:labels]
    merged = data.pool.merge(gold, on="id", how="left")
    ref = sw.profile(merged, z=z, signals=SIGNALS, label="human", method=method)
    out = sw.profile(
        _source("glob", files),
        gold=gold,
        on="id",
        z=z,
        signals=SIGNALS,
        label="human",
        method=method,
    )
    assert out.params.get("chosen") == ref.params.get("chosen")
    assert out.params.get("smoothed") == ref.params.get("smoothed")
    assert_same_profile(out, ref)
    expected = 2 if method == "auto" else 1
    assert len([sql for sql in queries if "exp(" in sql]) == expected


@pytest.mark.parametrize("z", ["segment", "shop"])
def test_sql_predictions_equal_record_batches(
    data: PoolData, files: dict[str, Path], z: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The per-level linear predictors written into SQL give the sums of the record-batch pass
    (fold models on the learner's design, a Z-free model beside them), also where exp
    overflows (linear predictors beyond +-700)."""
    from slicewise.estimators.predictors import LogisticModel
    from slicewise.methods.options import MethodOptions
    from slicewise.sources import duckdb as duckdb_source
    from slicewise.sources.pool_scan import PoolScan

    source = duckdb_source.open_duckdb(str(files["shards"] / "*.parquet"))
    scan = PoolScan.start(
        source, z=z, signals=SIGNALS, label="human", kind=None, gold=data.gold, on="id"
    )
    options = MethodOptions.from_arguments({"method": "auto"}, func="profile")
    ctx = scan.context(grid=None, bandwidth=None, primary=None, method="auto", options=options)
    basis = ctx.design_basis("logistic")
    width = ctx.learner_design("logistic").block(0, 1).shape[1]
    rng = np.random.default_rng(3)
    models = tuple(
        LogisticModel(coef=rng.normal(size=width) * scale, intercept=float(rng.normal()))
        for scale in (0.3, 0.5, 1.0, 400.0)
    )
    k = len(SIGNALS)
    columns = kernel_passes.JoinedColumns(
        kernel_passes.LearnedColumns(models, "categorical", "logistic", basis),
        kernel_passes.PredictionColumns(LogisticModel(coef=rng.normal(size=k), intercept=-0.2)),
        split=len(models),
    )
    assert ctx.reader is not None
    pass_ = kernel_passes.ColumnSumsPass(ctx.reader, (1.0, np.inf), columns)
    in_sql = duckdb_source.learned_level_sums(source.relation, pass_)
    assert in_sql is not None
    monkeypatch.setattr(duckdb_source, "learned_level_sums", lambda *args: None)
    batches = source.run(pass_)
    assert set(in_sql) == set(batches) == {1.0, np.inf}
    for scale in in_sql:
        assert in_sql[scale].shape == batches[scale].shape
        np.testing.assert_allclose(in_sql[scale], batches[scale], rtol=1e-12, atol=1e-9)


def test_level_counts_give_the_design_basis() -> None:
    """The learner's standardisation of a discrete Z from its level counts is numpy's over the
    items."""
    from slicewise.estimators.learner_design import design_basis
    from slicewise.sources.context import counted_basis

    rng = np.random.default_rng(5)
    codes = rng.integers(0, 40, size=20_000).astype(np.float64)
    codes[:3] = 1e3  # a far level
    values, counts = np.unique(codes, return_counts=True)
    ref = design_basis(codes.reshape(-1, 1), "categorical", "logistic")
    got = counted_basis(values, counts.astype(np.float64))
    for name in ("z_mean", "z_scale", "square_mean", "square_scale"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-12)
    assert got.levels is None
    assert ref.levels is None


def test_models_sql_cannot_write_are_left_to_record_batches() -> None:
    """A constant model, a non-finite coefficient or a boosting learner has no linear predictor
    in SQL: the pass then reads record batches."""
    from slicewise.estimators.learner_design import DesignBasis
    from slicewise.estimators.predictors import LogisticModel

    codes = np.arange(3, dtype=np.float64)
    x = ["x0", "x1"]
    fine = LogisticModel(coef=np.array([0.5, -1.0]), intercept=0.1)
    assert kernel_passes.PredictionColumns(fine).linear_predictors(codes, x, "u") is not None
    for model in (
        LogisticModel(coef=np.array([0.5, np.nan]), intercept=0.1),
        LogisticModel(coef=np.array([0.5, 1.0]), intercept=np.inf),
        LogisticModel(coef=np.zeros(2), intercept=0.0, constant=0.3),
    ):
        assert kernel_passes.PredictionColumns(model).linear_predictors(codes, x, "u") is None
    basis = DesignBasis(levels=codes)
    boosting = kernel_passes.LearnedColumns((fine, fine), "categorical", "boosting", basis)
    assert boosting.linear_predictors(codes, x, "u") is None


def test_continuous_sums_equal_the_dense_kernel_sums() -> None:
    """The kernel sums of an unsorted batch taken in blocks of sorted rows (negligible grid
    points left out, the doubled bandwidth by square roots) are those of the dense kernel at
    each scale, summed apart, to rounding; items far outside the grid included."""
    from slicewise.locality.weights import Locality
    from slicewise.moments.kernel_ops import (
        column_sums,
        square_column_sums,
        weighted_products,
        weighted_sums,
    )

    rng = np.random.default_rng(11)
    m = 50_000  # several blocks of sorted rows
    z = np.concatenate([rng.normal(size=m - 2), [40.0, -25.0]]).reshape(-1, 1)
    x = rng.normal(size=(m, 3)) + z * [0.5, 0.0, -1.0]
    locality = Locality(
        kind="continuous",
        grid=np.linspace(-1.6, 1.6, 20).reshape(-1, 1),
        bandwidth=np.array([0.08]),
        labels=np.arange(20).astype(object),
    )
    scales = [1.0, 2.0, 4.0]
    got = kernel_passes.continuous_sums(locality, z, x, scales)
    for scale, sums in zip(scales, got, strict=True):
        kernel = kernel_passes.kernel_at(locality, z, scale)
        np.testing.assert_allclose(sums.mass, column_sums(kernel), rtol=1e-12)
        np.testing.assert_allclose(sums.sq_mass, square_column_sums(kernel), rtol=1e-12)
        np.testing.assert_allclose(sums.first, weighted_sums(kernel, x), rtol=1e-11, atol=1e-9)
        np.testing.assert_allclose(sums.second, weighted_products(kernel, x), rtol=1e-11, atol=1e-9)
