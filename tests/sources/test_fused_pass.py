"""The learned control variates of a continuous profile are summed in the pass that sums the
signals (:class:`slicewise.sources.fused_pass.FusedPass`): the pool is read once for both, and
the sums are those of the two separate passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pool_frames import SIGNALS, PoolData, assert_same_profile, make_pool

import slicewise as sw
from slicewise.sources import duckdb as duckdb_source
from slicewise.sources import kernel_passes


@pytest.fixture(scope="module")
def data() -> PoolData:
    return make_pool()


@pytest.fixture(scope="module")
def shards(data: PoolData, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("fused")
    for i, rows in enumerate(np.array_split(np.arange(len(data.pool)), 3)):
        data.pool.iloc[rows].to_parquet(root / f"part-{i}.parquet", index=False)
    return str(Path(root) / "*.parquet")


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the passes the DuckDB source runs, in order."""
    names: list[str] = []
    run = duckdb_source.DuckDBSource.run

    def logged(self: Any, pass_: Any) -> Any:
        names.append(type(pass_).__name__)
        return run(self, pass_)

    monkeypatch.setattr(duckdb_source.DuckDBSource, "run", logged)
    return names


@pytest.mark.parametrize(
    "options", [{"method": "auto"}, {"method": "lace_learned"}, {"method": "auto", "folds": 3}]
)
def test_learned_sums_in_the_kernel_sums_pass(
    data: PoolData, shards: str, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pass of kernel sums for the signals and the fold models' predictions, and the
    in-memory profile to 1e-9."""
    names = _passes(monkeypatch)
    ref = sw.profile(data.merged, z="z", signals=SIGNALS, label="human", **options)
    out = sw.profile(
        shards, gold=data.gold, on="id", z="z", signals=SIGNALS, label="human", **options
    )
    assert_same_profile(out, ref)
    assert out.params.get("chosen") == ref.params.get("chosen")
    assert names.count("FusedPass") == 1
    assert "MomentsPass" not in names
    assert "ColumnSumsPass" not in names
    # the learner's standardisation of Z from the statistics pass and the percentiles' first
    # aggregate, the percentiles by SQL aggregates (DuckDBSource.percentiles): no record batches
    assert "ProfileMomentsPass" not in names
    assert not {"PairPass", "HistogramPass", "CollectPass"} & set(names)


def test_methods_without_learned_sums_scan_the_signals_once(
    data: PoolData, shards: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A method that reads only the signals' sums scans them once, when it first reads them."""
    names = _passes(monkeypatch)
    ref = sw.profile(data.merged, z="z", signals=SIGNALS, label="human", method="lace_shrunk")
    out = sw.profile(
        shards, gold=data.gold, on="id", z="z", signals=SIGNALS, label="human", method="lace_shrunk"
    )
    assert_same_profile(out, ref)
    assert names.count("MomentsPass") == 1
    assert "FusedPass" not in names


def test_fused_state_equals_the_separate_passes(data: PoolData, shards: str) -> None:
    """The fused pass's state is the moments pass's and the learned pass's, to rounding (the
    fold predictions summed at h only, zeros at the other scales)."""
    from slicewise.estimators.predictors import LogisticModel
    from slicewise.methods.options import MethodOptions
    from slicewise.sources.fused_pass import FusedPass
    from slicewise.sources.pool_scan import PoolScan

    source = duckdb_source.open_duckdb(shards)
    scan = PoolScan.start(
        source, z="z", signals=SIGNALS, label="human", kind=None, gold=data.gold, on="id"
    )
    options = MethodOptions.from_arguments({"method": "auto"}, func="profile")
    ctx = scan.context(grid=None, bandwidth=None, primary=None, method="auto", options=options)
    assert ctx.sums is None  # not scanned yet
    assert ctx.reader is not None
    basis = ctx.design_basis("logistic")
    width = ctx.learner_design("logistic").block(0, 1).shape[1]
    rng = np.random.default_rng(8)
    models = tuple(
        LogisticModel(coef=rng.normal(size=width) * 0.5, intercept=float(rng.normal()))
        for _ in range(4)
    )
    columns = kernel_passes.LearnedColumns(models, "continuous", "logistic", basis, signals=False)
    reader = ctx.reader
    sums, learned = source.run(FusedPass(reader, columns))
    ref_sums = source.run(reader)
    ref_learned = source.run(kernel_passes.ColumnSumsPass(reader, reader.scales, columns))
    assert set(sums) == set(ref_sums) == set(learned) == set(reader.scales)
    folds = len(models)
    for scale in reader.scales:
        for name in ("mass", "sq_mass", "first", "second"):
            np.testing.assert_allclose(
                getattr(sums[scale], name), getattr(ref_sums[scale], name), rtol=1e-12, atol=1e-9
            )
        got, ref = learned[scale], ref_learned[scale]
        assert got.shape == ref.shape
        if scale != 1.0:  # the fold predictions are summed at h only
            assert not np.any(got[:, 1 : 1 + folds])
            ref = ref.copy()
            ref[:, 1 : 1 + folds] = 0.0
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


def test_block_sums_equal_each_kernels_blocked_sums() -> None:
    """One product per block for every kernel and the global sums gives the sums of
    ``scales_sums_with`` and ``global_sums``, over many blocks (the last one short), with a
    cluster of rows far from the grid where no kernel column counts (blocks skipped)."""
    from slicewise.locality.weights import BlockKernel
    from slicewise.moments.pool import scales_sums_with
    from slicewise.sources.block_sums import block_sums

    rng = np.random.default_rng(3)
    z = np.sort(np.concatenate([rng.normal(size=900), rng.normal(40.0, 1.0, size=301)]))[:, None]
    x = rng.normal(size=(z.shape[0], 3))
    values = rng.normal(size=(z.shape[0], 5))  # 3 summed at every kernel, 2 at the first only
    grid = np.linspace(-1.5, 1.5, 7)[:, None]
    kernels = [BlockKernel(z, grid, np.array([0.3])), BlockKernel(z, grid, np.array([0.6]))]

    def fill(start: int, stop: int, out: np.ndarray) -> None:
        out[...] = values[start:stop]

    found, (everywhere, global_values) = block_sums(
        kernels, x, fill, values.shape[1], shared=3, block_rows=128
    )
    assert any(kernel.columns(1100, 1200) == (0, 0) for kernel in kernels)  # blocks skipped
    ref = scales_sums_with(
        kernels, x, lambda start, stop: values[start:stop], values.shape[1], shared=3
    )
    assert len(found) == len(ref) == 2
    for (sums, extra), (ref_sums, ref_extra) in zip(found, ref, strict=True):
        for name in ("mass", "sq_mass", "first", "second"):
            np.testing.assert_allclose(
                getattr(sums, name), getattr(ref_sums, name), rtol=1e-12, atol=1e-12
            )
        assert extra.shape == ref_extra.shape
        np.testing.assert_allclose(extra, ref_extra, rtol=1e-12, atol=1e-12)
    ref_global = kernel_passes.global_sums(x)
    for name in ("mass", "sq_mass", "first", "second"):
        np.testing.assert_allclose(
            getattr(everywhere, name), getattr(ref_global, name), rtol=1e-12, atol=1e-12
        )
    np.testing.assert_allclose(global_values, values[:, :3].sum(axis=0)[None], rtol=1e-12)
    # the block buffers are kept for the thread's next call: the sums returned are not theirs
    kept = [extra.copy() for _, extra in found]
    block_sums(kernels, -x, fill, values.shape[1], shared=3, block_rows=128)
    for (_, extra), before in zip(found, kept, strict=True):
        np.testing.assert_array_equal(extra, before)


def test_design_basis_from_the_statistics_and_percentile_passes(
    data: PoolData, shards: str
) -> None:
    """The learner's standardisation of Z and of its square taken from the statistics pass
    and beside the percentiles' first pass is the one of the two passes over Z."""
    import dataclasses

    from slicewise.methods.options import MethodOptions
    from slicewise.sources.pool_scan import PoolScan

    source = duckdb_source.open_duckdb(shards)
    scan = PoolScan.start(
        source, z="z", signals=SIGNALS, label="human", kind=None, gold=data.gold, on="id"
    )
    options = MethodOptions.from_arguments({"method": "auto"}, func="profile")
    ctx = scan.context(grid=None, bandwidth=None, primary=None, method="auto", options=options)
    assert ctx.profile_moments is not None
    assert ctx.square_moments is not None
    passes = dataclasses.replace(ctx, profile_moments=None, square_moments=None, _cache={})
    got, ref = ctx.design_basis("logistic"), passes.design_basis("logistic")
    assert ref.z_mean is not None
    assert ref.square_mean is not None
    for name in ("z_mean", "z_scale", "square_mean", "square_scale"):
        np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-12)
    assert not np.allclose(ref.square_scale, 1.0)  # a standardisation that tells them apart
