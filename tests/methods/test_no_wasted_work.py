"""Work a profile does not need is not done, and what is done is the same arithmetic as before:
naive never standardises the signals, the signals' moments are the exact ones to rounding, and the
table's signals are the input's in canonical order."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import sim_frames
from slicewise.data.column_stats import MOMENT_ROWS, STANDARDIZE_ROWS, column_moments, standardize
from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet, PoolContext
from slicewise.methods.options import MethodOptions
from slicewise.methods.run import Problem, build_context, run


def _frame(seed: int = 0, m: int = 3000, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    y = (rng.random(m) < 1 / (1 + np.exp(-z))).astype(float)
    frame = pd.DataFrame(
        y[:, None] * [1.0, 0.5, 0.2] + rng.normal(size=(m, 3)), columns=["a", "b", "c"]
    )
    frame["b"] = frame["b"].round()  # ties beyond Z's
    frame.loc[rng.random(m) < 0.1, "c"] = np.nan
    frame["z"] = np.round(z, 1)
    y[rng.permutation(m)[n:]] = np.nan
    frame["y"] = y
    return frame


def _context(frame: pd.DataFrame) -> PoolContext:
    table = make_table(
        frame, z="z", signals=["a", "b", "c"], label="y", kind="continuous", canonical=True
    )
    return build_context(table)


@pytest.mark.parametrize(
    "shape",
    [
        (1, 3),
        (5, 2),
        (STANDARDIZE_ROWS, 4),
        (3 * STANDARDIZE_ROWS + 7, 6),
        (40_000, 1),
        (MOMENT_ROWS + 1, 2),  # blocks: one full, one of a single row
        (7 * MOMENT_ROWS, 3),
        (250_003, 9),
    ],
)
def test_column_moments_are_the_exact_moments_to_rounding(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[0])
    values = rng.normal(size=shape) * rng.uniform(0.1, 100, shape[1]) + rng.uniform(-1e3, 1e3)
    values[:, 0] = np.round(values[:, 0])  # integers: every partial sum is exact
    mean, sd = column_moments(values)
    # exact references: math.fsum rounds the exact sum once
    exact_mean = np.array([math.fsum(column) for column in values.T]) / shape[0]
    exact_sd = np.sqrt(
        [
            math.fsum((c - m) ** 2 for c in column) / shape[0]
            for column, m in zip(values.T, exact_mean, strict=True)
        ]
    )
    assert mean[0] == exact_mean[0]
    np.testing.assert_allclose(mean, exact_mean, rtol=1e-14, atol=0)
    np.testing.assert_allclose(sd, exact_sd, rtol=1e-13, atol=1e-13)
    fortran = np.asfortranarray(values)
    np.testing.assert_allclose(column_moments(fortran)[1], exact_sd, rtol=1e-13, atol=1e-13)


def test_a_constant_column_has_sd_exactly_zero() -> None:
    values = np.column_stack([np.full(3 * MOMENT_ROWS + 5, 0.1), np.arange(3 * MOMENT_ROWS + 5.0)])
    _, sd = column_moments(values)
    assert sd[0] == 0.0
    assert sd[1] > 0


def test_naive_never_standardises_the_signals() -> None:
    ctx = _context(_frame())
    labeled = LabeledSet.from_table(ctx.table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(Problem(ctx, labeled), "naive", MethodOptions(), level=0.95, target="pool")
    assert "features" not in ctx.__dict__
    assert "signal_moments" not in ctx.table.__dict__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(Problem(ctx, labeled), "lace", MethodOptions(), level=0.95, target="pool")
    assert "features" in ctx.__dict__


def test_the_standardisation_made_on_first_use_is_standardize() -> None:
    ctx = _context(_frame(1))
    features, mean, scale = standardize(ctx.table.signals)
    np.testing.assert_array_equal(ctx.signal_scale, scale)  # asked first: all three are made
    np.testing.assert_array_equal(ctx.features, features)
    np.testing.assert_array_equal(ctx.signal_mean, mean)
    expected = (ctx.table.signals - ctx.table.signals.mean(axis=0)) / ctx.table.signals.std(axis=0)
    # numpy's std of the 0/1 indicator column is 2.4e-14 (relative) off the exact one
    np.testing.assert_allclose(ctx.features, expected, rtol=1e-13, atol=1e-13)
    with pytest.raises(AttributeError, match="no attribute 'feature'"):
        getattr(ctx, "feature")  # noqa: B009


def test_table_signals_are_the_inputs_in_canonical_order() -> None:
    frame = _frame(2)
    columns = ["a", "b", "c"]
    kwargs = {"z": "z", "signals": columns, "label": "y", "kind": "continuous"}
    table = make_table(frame, canonical=True, **kwargs)
    plain = make_table(frame, canonical=False, **kwargs)
    assert table.rows is not None
    assert plain.rows is None
    raw = frame[columns].to_numpy()[table.rows]
    observed = ~np.isnan(raw)
    np.testing.assert_array_equal(table.signals[:, :3][observed], raw[observed])
    np.testing.assert_array_equal(table.signals[:, 3], np.isnan(raw[:, 2]))  # the indicator
    np.testing.assert_allclose(table.signals[:, :3], plain.signals[table.rows][:, :3], rtol=1e-15)
    np.testing.assert_array_equal(table.z, plain.z[table.rows])
    np.testing.assert_array_equal(table.label, plain.label[table.rows])


def test_standardize_in_blocks_is_the_plain_formula() -> None:
    rng = np.random.default_rng(4)
    values = rng.normal(size=(3 * STANDARDIZE_ROWS + 7, 4)) * [1.0, 3.0, 0.5, 1.0] + 2.0
    values[:, 3] = 7.0  # constant: scale 1
    features, mean, scale = standardize(values)
    np.testing.assert_allclose(mean, values.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(scale[:3], values.std(axis=0)[:3], rtol=1e-13)
    assert scale[3] == 1.0
    np.testing.assert_array_equal(features, (values - mean) / scale)
    np.testing.assert_array_equal(features[:, 3], 0.0)


@pytest.mark.parametrize("same", [True, False])
@pytest.mark.parametrize("design", [False, True])
def test_labeled_sums_of_dense_rows_are_the_sparse_ones(
    same: bool, design: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import scipy.sparse as sp

    from slicewise.moments import kernel_ops
    from slicewise.moments.sums import LabeledMoments

    rng = np.random.default_rng(9)
    n, g = 400, 7
    k = np.exp(-0.5 * rng.normal(size=(n, g)) ** 2) * (rng.random((n, g)) < 0.7)
    kb = k if same else np.exp(-0.1 * rng.normal(size=(n, g)) ** 2)
    y, x = rng.random(n), rng.normal(size=(n, 3))
    pi = rng.uniform(0.2, 1.0, n) if design else None
    dense = LabeledMoments.from_rows(k, kb, y, x, pi=pi)
    monkeypatch.setattr(kernel_ops, "DENSE_LIMIT", 0)  # sparse rows stay sparse
    k_sparse = sp.csr_array(k)
    kb_sparse = k_sparse if same else sp.csr_array(kb)
    sparse = LabeledMoments.from_rows(k_sparse, kb_sparse, y, x, pi=pi)
    for name in ("mass", "mass_b", "mean", "second", "second_sq", "mean_b", "second_b"):
        np.testing.assert_allclose(getattr(dense, name), getattr(sparse, name), rtol=1e-12)
    for name in ("sum_w2", "sum_w2_wb", "sum_wb2", "sum_w4"):
        np.testing.assert_allclose(getattr(dense, name), getattr(sparse, name), rtol=1e-12)


def test_float32_signals_are_read_as_their_float64_values() -> None:
    # float32 columns are converted as they are written into the table, not copied first
    frame = _frame(5)
    frame["z"] = frame["z"].astype("category")  # categorical: codes first in canonical order
    single = frame.astype({"a": np.float32, "c": np.float32})
    double = single.astype({"a": np.float64, "c": np.float64})
    kwargs = {"z": "z", "signals": ["a", "b", "c"], "label": "y", "kind": "categorical"}
    for canonical in (False, True):
        got = make_table(single, canonical=canonical, **kwargs)
        want = make_table(double, canonical=canonical, **kwargs)
        assert got.signals.dtype == np.float64
        np.testing.assert_array_equal(got.signals, want.signals)
        np.testing.assert_array_equal(got.z, want.z)
        assert got.notes == want.notes
        if canonical:
            assert got.rows is not None
            assert want.rows is not None
            np.testing.assert_array_equal(got.rows, want.rows)


def test_indicator_kernel_is_the_dense_indicator() -> None:
    from slicewise.locality.weights import indicator_kernel

    rng = np.random.default_rng(11)
    codes = rng.integers(0, 9, 5000)
    grid = np.array([7, 0, 3, 12])  # in any order; 12 is no item's code, 1 .. 8 not all kept
    kernel = indicator_kernel(codes, grid)
    np.testing.assert_array_equal(kernel.toarray(), (codes[:, None] == grid[None, :]) * 1.0)
    assert kernel.has_canonical_format


@pytest.mark.parametrize("with_design", [False, True])
def test_variance_terms_with_the_factor_made_once_are_the_formula(with_design: bool) -> None:
    # auto scores every candidate with one term_factor; the terms are the module's formula
    from slicewise.estimators.centered import CoefficientFit
    from slicewise.inference.cv_variance import cross_validated, term_factor

    rng = np.random.default_rng(12)
    n, g, p = 300, 6, 2
    weights, fraction, design = sim_frames.kernel_weights(rng, n, g, with_design=with_design)
    y, x = rng.random(n), rng.normal(size=(n, p))
    fold = np.arange(n) % 4
    coef = rng.normal(size=(g, p))

    def rule(rows: np.ndarray) -> CoefficientFit:
        return CoefficientFit.fixed(coef * rows.size / n)

    made = cross_validated(weights, fraction, y, x, fold, rule, design=design)
    factor = term_factor(weights, fraction, design=design)
    given = cross_validated(weights, fraction, y, x, fold, rule, design=design, factor=factor)
    np.testing.assert_array_equal(given.terms, made.terms)
    w = weights if design is None else design.weights
    centring = weights if design is None else design.residual
    top = (1.0 - fraction) if design is None else design.fpc
    ebar = (centring * made.resid).sum(axis=0)
    expected = top / (1.0 - (w**2).sum(axis=0)) * w**2 * (made.resid - ebar) ** 2
    np.testing.assert_allclose(made.terms, expected, rtol=1e-12)


@pytest.mark.parametrize("same", [True, False])
@pytest.mark.parametrize("design", [False, True])
def test_labeled_sums_of_folds_add_up_to_those_of_their_union(same: bool, design: bool) -> None:
    # auto's cross-validation makes the labeled sums once per fold and adds the training folds
    from functools import reduce
    from operator import add

    from slicewise.moments.row_sums import LabeledRowSums
    from slicewise.moments.sums import LabeledMoments

    rng = np.random.default_rng(13)
    n, g = 500, 7
    k = np.exp(-0.5 * rng.normal(size=(n, g)) ** 2) * (rng.random((n, g)) < 0.8)
    kb = k if same else np.exp(-0.1 * rng.normal(size=(n, g)) ** 2)
    y, x = rng.random(n), rng.normal(size=(n, 3))
    pi = rng.uniform(0.2, 1.0, n) if design else None
    fold = rng.integers(0, 5, n)
    train = np.flatnonzero(fold != 2)

    def row_sums(index: np.ndarray) -> LabeledRowSums:
        rows = k[index]  # kb is k itself when b = h, as the cache passes it
        rows_b = rows if same else kb[index]
        return LabeledRowSums.of(
            rows, rows_b, y[index], x[index], pi=None if pi is None else pi[index]
        )

    parts = [row_sums(np.flatnonzero(fold == f)) for f in (0, 1, 3, 4)]
    added = LabeledMoments.from_row_sums(reduce(add, parts))
    kt = k[train]
    whole = LabeledMoments.from_rows(
        kt, kt if same else kb[train], y[train], x[train], pi=None if pi is None else pi[train]
    )
    for name in (
        "mass",
        "mass_b",
        "mean",
        "second",
        "second_sq",
        "mean_b",
        "second_b",
        "sum_w2",
        "sum_w2_wb",
        "sum_wb2",
        "sum_w4",
        "sample_mass",
        "pi_max",
        "second_sq_pi",
    ):
        got, want = getattr(added, name), getattr(whole, name)
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("inclusion", [None, "pi"])
def test_auto_from_fold_sums_is_auto_from_each_training_set(
    inclusion: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import slicewise as sw
    from slicewise.methods.candidates import CoefficientCache

    frame = _frame(6, m=4000, n=600)
    frame["pi"] = np.where(frame["a"] > 0, 0.2, 0.1)
    kwargs = {"z": "z", "signals": ["a", "b", "c"], "label": "y", "inclusion": inclusion}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folds = sw.profile(frame, **kwargs)
        monkeypatch.setattr(CoefficientCache, "_by_folds", lambda self, scale, rows: None)
        each = sw.profile(frame, **kwargs)
    np.testing.assert_allclose(folds.estimate, each.estimate, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(folds.se, each.se, rtol=1e-12, atol=1e-14)
    assert folds.params["cv_variance_ratio"] == each.params["cv_variance_ratio"]
