"""A pool kernel evaluated block by block (never stored) gives the stored kernel's profiles."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.table import make_table
from slicewise.locality import weights
from slicewise.locality.weights import BlockKernel
from slicewise.methods.run import build_context

base = importlib.import_module("slicewise.methods.base")

SIGNALS = ["s0", "s1", "s2"]


def _frame(seed: int = 3, m: int = 3000, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    y = (rng.random(m) < 1 / (1 + np.exp(-z))).astype(float)
    frame = pd.DataFrame(y[:, None] * [1.0, 0.5, 0.2] + rng.normal(size=(m, 3)), columns=SIGNALS)
    frame["z"] = z
    y[rng.permutation(m)[n:]] = np.nan
    frame["y"] = y
    return frame


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("naive", {}),
        ("lace", {}),
        ("lace", {"nuisance_scale": 2.0}),
        ("global_cv", {}),
        ("lace_learned", {}),
        ("auto", {}),
    ],
)
def test_block_kernel_profile_equals_stored_kernel(
    method: str, extra: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _frame()
    kwargs = {"z": "z", "signals": SIGNALS, "label": "y", "kind": "continuous", **extra}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stored = sw.profile(frame, method=method, **kwargs)
        monkeypatch.setattr(base, "STORED_KERNEL_LIMIT", 0)
        monkeypatch.setattr(weights, "BLOCK_ROWS", 700)  # several blocks, the last one short
        blocked = sw.profile(frame, method=method, **kwargs)
    np.testing.assert_allclose(blocked.estimate, stored.estimate, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.se, stored.se, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.n_pool_eff, stored.n_pool_eff, rtol=1e-12)
    assert blocked.params.get("chosen") == stored.params.get("chosen")


def test_a_large_dense_pool_kernel_is_never_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "STORED_KERNEL_LIMIT", 0)
    items = make_table(_frame(), z="z", signals=SIGNALS, label="y", kind="continuous")
    ctx = build_context(items)
    pool = ctx.moments("signals", nuisance_scale=2.0)
    assert isinstance(pool.kernel, BlockKernel)
    assert isinstance(pool.kernel_b, BlockKernel)
    rows = np.arange(0, 3000, 7)
    np.testing.assert_array_equal(pool.kernel.rows(rows), ctx.kernel(1.0)[rows])


@pytest.mark.parametrize("q", [1, 2])
def test_blocks_are_the_stored_kernels_rows(q: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weights, "BLOCK_ROWS", 700)  # several blocks, the last one short
    rng = np.random.default_rng(q)
    kernel = BlockKernel(rng.normal(size=(3000, q)), rng.normal(size=(9, q)), np.full(q, 0.4))
    blocks = [(start, block.copy()) for start, block in kernel.blocks()]  # one buffer: copied
    assert [start for start, _ in blocks] == list(range(0, 3000, 700))
    stored = weights.gaussian_kernel(kernel.z, kernel.grid, kernel.bandwidth)
    np.testing.assert_array_equal(np.vstack([block for _, block in blocks]), stored)
    np.testing.assert_array_equal(kernel.toarray(), stored)
    centred = (kernel.z[:, None, :] - kernel.grid[None, :, :]) / kernel.bandwidth
    expected = np.exp(-0.5 * (centred**2).sum(axis=2))
    np.testing.assert_allclose(stored, expected, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize(
    ("points", "h", "ratios"),
    [
        (np.linspace(-1.6, 1.6, 20), 0.1, True),  # the default grid's shape
        (np.linspace(-2.0, 2.0, 7), 0.1, True),  # step / h = 6.7: factors down to 1e-19
        (np.linspace(0.0, 1.0, 3), 1e-3, False),  # step / h = 500: exponentials
        (np.array([-1.0, 0.0, 0.5, 2.0]), 0.3, False),  # unequal steps: exponentials
    ],
)
def test_an_equally_spaced_grid_kernel_is_the_exponential(
    points: np.ndarray, h: float, ratios: bool
) -> None:
    rng = np.random.default_rng(points.size)
    z = rng.normal(size=(4000, 1)) * rng.choice([0.5, 3.0, 40.0], size=(4000, 1))
    grid, bandwidth = points[:, None], np.full(1, h)
    kernel = weights.gaussian_kernel(z, grid, bandwidth)
    expected = np.exp(-0.5 * ((z - points[None, :]) / h) ** 2)
    np.testing.assert_allclose(kernel, expected, rtol=1e-12, atol=1e-15)
    assert (weights._grid_step(grid, bandwidth) is not None) == ratios
    # each row depends on its item alone: sorted, one by one, column-major, all the same
    order = np.argsort(z[:, 0])
    np.testing.assert_array_equal(weights.gaussian_kernel(z[order], grid, bandwidth), kernel[order])
    for i in rng.choice(z.shape[0], 25, replace=False):
        np.testing.assert_array_equal(
            weights.gaussian_kernel(z[i : i + 1], grid, bandwidth)[0], kernel[i]
        )
    column_major = np.empty((points.size, z.shape[0])).T
    weights.gaussian_kernel(z[order], grid, bandwidth, out=column_major)
    np.testing.assert_array_equal(column_major, kernel[order])


def test_scale_sums_are_the_direct_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    from slicewise.moments.pool import scale_sums_with

    monkeypatch.setattr(weights, "BLOCK_ROWS", 700)
    rng = np.random.default_rng(5)
    kernel = BlockKernel(rng.normal(size=(3000, 1)), rng.normal(size=(9, 1)), np.full(1, 0.4))
    x = rng.normal(size=(3000, 3))
    extra = rng.normal(size=(3000, 2))
    sums, sums_extra = scale_sums_with(kernel, x, lambda a, b: extra[a:b], 2)
    k = kernel.toarray()
    rows, cols = np.triu_indices(3)
    np.testing.assert_allclose(sums.mass, k.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(sums.sq_mass, (k**2).sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(sums.first, k.T @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums.second, k.T @ (x[:, rows] * x[:, cols]), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sums_extra, k.T @ extra, rtol=1e-12, atol=1e-12)
    stored, _ = scale_sums_with(k, x)  # a stored kernel: the same pass in blocks of CHUNK rows
    np.testing.assert_allclose(stored.mass, sums.mass, rtol=1e-14)
    np.testing.assert_allclose(stored.second, sums.second, rtol=1e-12, atol=1e-12)


def test_global_sums_are_the_column_sums() -> None:
    from slicewise.moments.pool import block_sums, scale_sums_with

    rng = np.random.default_rng(6)
    m = 150_000  # more than one block of CHUNK rows, the last one short
    x = rng.normal(size=(m, 2))
    extra = rng.normal(size=(m, 3))
    kernel = np.broadcast_to(np.ones((1, 4)), (m, 4))  # one global neighbourhood, G = 4
    sums, sums_extra = scale_sums_with(kernel, x, lambda a, b: extra[a:b], 3)
    np.testing.assert_array_equal(sums.mass, np.full(4, float(m)))
    np.testing.assert_array_equal(sums.sq_mass, np.full(4, float(m)))
    np.testing.assert_allclose(sums.first, np.tile(x.sum(axis=0), (4, 1)), rtol=1e-12, atol=1e-9)
    products = np.column_stack([x[:, 0] ** 2, x[:, 0] * x[:, 1], x[:, 1] ** 2]).sum(axis=0)
    np.testing.assert_allclose(sums.second, np.tile(products, (4, 1)), rtol=1e-12)
    expected = np.tile(extra.sum(axis=0), (4, 1))
    np.testing.assert_allclose(sums_extra, expected, rtol=1e-12, atol=1e-9)
    alone = block_sums(kernel, lambda a, b: extra[a:b], items=m)
    np.testing.assert_allclose(alone, expected, rtol=1e-12, atol=1e-9)


def test_one_pass_at_several_kernels_is_one_pass_per_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from slicewise.moments.pool import scale_sums_with, scales_sums_with

    monkeypatch.setattr(weights, "BLOCK_ROWS", 700)
    rng = np.random.default_rng(8)
    z, grid = rng.normal(size=(3000, 1)), rng.normal(size=(9, 1))
    kernels = [
        BlockKernel(z, grid, np.full(1, 0.4)),
        weights.gaussian_kernel(z, grid, np.full(1, 0.8)),  # stored
        np.broadcast_to(np.ones((1, 9)), (3000, 9)),  # global
        BlockKernel(z, grid, np.full(1, 0.8)),  # twice the first's bandwidth
    ]
    x = rng.normal(size=(3000, 3))
    extra = rng.normal(size=(3000, 5))
    merged = scales_sums_with(kernels, x, lambda a, b: extra[a:b], 5, shared=2)
    for i, (kernel, (sums, sums_extra)) in enumerate(zip(kernels, merged, strict=True)):
        part = extra[:, : 5 if i == 0 else 2]
        alone, alone_extra = scale_sums_with(
            kernel, x, lambda a, b, part=part: part[a:b], part.shape[1]
        )
        for name in ("mass", "sq_mass", "first", "second"):
            np.testing.assert_allclose(
                getattr(sums, name), getattr(alone, name), rtol=1e-12, atol=1e-10
            )
        np.testing.assert_allclose(sums_extra, alone_extra, rtol=1e-12, atol=1e-10)


def test_pool_sums_leave_out_only_negligible_kernel_entries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a sorted Z spread over many bandwidths, with a gap around one grid point: each block of
    # items is far from most grid points, whose columns the pass leaves out
    from slicewise.moments import pool

    rng = np.random.default_rng(8)
    z = np.sort(np.concatenate([rng.uniform(0, 40, 6000), rng.uniform(60, 100, 6000)]))
    x = rng.normal(size=(z.size, 3)) + np.array([0.0, 5.0, -2.0])
    grid = np.linspace(0.0, 100.0, 21)[:, None]  # 50 is 10 bandwidths from every item
    kernel = BlockKernel(z=z[:, None], grid=grid, bandwidth=np.array([1.0]))
    monkeypatch.setattr(pool, "BLOCK_ROWS", 1000)
    spans = [kernel.columns(s, min(s + 1000, z.size)) for s in range(0, z.size, 1000)]
    assert max(hi - lo for lo, hi in spans) < 21  # the pass does leave columns out
    blocked = pool.scale_sums(kernel, x)
    full = weights.gaussian_kernel(z[:, None], grid, np.array([1.0]))
    np.testing.assert_allclose(blocked.mass, full.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(blocked.sq_mass, (full**2).sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(blocked.first, full.T @ x, rtol=1e-12)
    assert blocked.mass[10] > 0  # the grid point in the gap keeps its nearest items
    # the local means at the isolated grid point too (its mass is about 1e-22)
    np.testing.assert_allclose(
        blocked.first[10] / blocked.mass[10], (full.T @ x)[10] / full[:, 10].sum(), rtol=1e-12
    )
    shuffled = BlockKernel(z=z[rng.permutation(z.size), None], grid=grid, bandwidth=np.array([1.0]))
    assert shuffled.columns(0, 1000) == (0, 21)  # unsorted: every column


def test_kernel_columns_are_the_whole_kernels_entries() -> None:
    rng = np.random.default_rng(9)
    z = np.sort(rng.uniform(-1, 12, 4000))[:, None]
    grid = np.linspace(0.0, 10.0, 21)[:, None]
    h = np.array([0.4])
    whole = weights.gaussian_kernel(z, grid, h)
    for lo, hi in [(0, 21), (3, 9), (12, 21), (0, 1), (20, 21)]:
        part = weights.gaussian_kernel(z, grid, h, columns=(lo, hi))
        nearest = np.clip(np.rint(z[:, 0] / 0.5), 0, 20)
        inside = (nearest >= lo) & (nearest < hi)
        np.testing.assert_array_equal(part[inside], whole[inside, lo:hi])  # to the bit
        np.testing.assert_allclose(part, whole[:, lo:hi], rtol=1e-11, atol=0)
