"""The learner's pool side made block by block equals the stored path: the whole (M x p) design,
the (F x M) fold predictions and the standardised average kept, and dense kernel products."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.table import make_table
from slicewise.estimators.learned import CrossFit, cross_fit
from slicewise.estimators.learner_design import learner_design
from slicewise.locality.weights import BlockKernel
from slicewise.methods.base import PoolContext
from slicewise.methods.run import build_context
from slicewise.moments.pool import LearnedSums


def curved_frame(m: int, n: int, seed: int = 0) -> pd.DataFrame:
    """A judge whose usefulness changes along Z (the learner's Z x signal terms matter)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    y = (rng.random(m) < 1 / (1 + np.exp(-z))).astype(float)
    s1 = y * (1.0 + np.tanh(2 * z)) + rng.normal(size=m)
    s2 = y + rng.normal(0, 1.5, m)
    s3 = rng.normal(size=m)
    frame = pd.DataFrame({"z": z, "s1": s1, "s2": s2, "s3": s3, "y": y})
    frame.loc[rng.permutation(m)[n:], "y"] = np.nan
    return frame


def stored_learned_sums(ctx: PoolContext, fit: CrossFit, scales: Sequence[float]) -> LearnedSums:
    """The obvious path: the whole design, every fold model's pool predictions and the
    standardised average stored, each sum one dense kernel product."""
    design = learner_design(ctx.table.z, ctx.locality.kind, ctx.features, fit.learner)
    predictions = np.stack([model.predict(design) for model in fit.models])  # (F, M)
    average = predictions.mean(axis=0)
    mean, sd = float(average.mean()), float(average.std())
    scale = sd if sd > 0 else 1.0
    c = (average - mean) / scale
    products = np.column_stack([c, c * c, c[:, None] * ctx.features])

    def dense(s: float) -> np.ndarray:
        if math.isinf(s):
            return np.ones((ctx.n_pool, ctx.grid_size))
        kernel = ctx.kernel(s)
        return kernel.toarray() if hasattr(kernel, "toarray") else np.asarray(kernel)

    at_h = dense(1.0).T @ np.column_stack([predictions.T, products])
    at_b = {s: dense(s).T @ products for s in sorted({*scales, math.inf}) if s != 1.0}
    return LearnedSums(mean=mean, scale=scale, at_h=at_h, at_b=at_b)


def assert_same_sums(got: LearnedSums, want: LearnedSums) -> None:
    assert got.mean == pytest.approx(want.mean, rel=1e-12)
    assert got.scale == pytest.approx(want.scale, rel=1e-12)
    np.testing.assert_allclose(
        got.at_h, want.at_h, rtol=1e-12, atol=1e-12 * np.abs(want.at_h).max()
    )
    assert sorted(got.at_b) == sorted(want.at_b)
    for s, value in want.at_b.items():
        np.testing.assert_allclose(got.at_b[s], value, rtol=1e-12, atol=1e-12 * np.abs(value).max())


@pytest.mark.parametrize("kind", ["continuous", "categorical"])
def test_learned_sums_by_block_match_the_stored_predictions(kind: str) -> None:
    """M = 220,000 at 20 grid points is above the stored-kernel limit: the pool kernel is a
    BlockKernel of 16,384-item blocks (sparse indicators for the categorical profile), and
    the fold models predict each block inside the passes."""
    frame = curved_frame(220_000, 600, seed=1)
    if kind == "categorical":
        frame["z"] = np.digitize(frame["z"], [-1.0, 0.0, 1.0]).astype(str)
    table = make_table(frame, z="z", signals=["s1", "s2", "s3"], label="y", kind=kind)
    ctx = build_context(table)
    if kind == "continuous":
        assert isinstance(ctx.pool_kernel(1.0), BlockKernel)
    index = table.labeled_index
    fit = cross_fit(
        ctx.learner_design("logistic"),
        index,
        table.label[index],
        learner="logistic",
        folds=5,
        c=1.0,
        categorical=kind == "categorical",
        rng=np.random.default_rng(0),
    )
    assert fit.stored is None  # logistic fold models predict the pool when a pass needs them
    scales = [1.0, 2.0] if kind == "continuous" else [1.0]
    got = ctx.learned_sums(fit, scales)
    assert_same_sums(got, stored_learned_sums(ctx, fit, scales))


def test_stored_predictions_give_the_same_sums() -> None:
    """The kept (F x M) predictions (boosting's default) give the sums of the blocks."""
    frame = curved_frame(30_000, 500, seed=2)
    table = make_table(frame, z="z", signals=["s1", "s2", "s3"], label="y", kind="continuous")
    ctx = build_context(table)
    index = table.labeled_index
    kwargs = {
        "learner": "logistic",
        "folds": 5,
        "c": 1.0,
        "categorical": False,
    }
    design = ctx.learner_design("logistic")
    blocks = cross_fit(design, index, table.label[index], rng=np.random.default_rng(4), **kwargs)
    stored = cross_fit(
        design, index, table.label[index], rng=np.random.default_rng(4), store=True, **kwargs
    )
    assert stored.stored is not None
    assert stored.stored.shape == (5, 30_000)
    np.testing.assert_array_equal(blocks.oof, stored.oof)
    assert_same_sums(ctx.learned_sums(blocks, [1.0, 2.0]), ctx.learned_sums(stored, [1.0, 2.0]))


def test_auto_profile_equals_the_stored_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """sw.profile(method='auto') with the learner's pool side by block, and again with the
    stored path in its place: the same estimates, standard errors and candidate scores."""
    frame = curved_frame(60_000, 1_500, seed=3)
    kwargs = {"z": "z", "signals": ["s1", "s2", "s3"], "label": "y", "kind": "continuous"}
    blocks = sw.profile(frame, method="auto", rng=0, **kwargs)
    monkeypatch.setattr(PoolContext, "learned_sums", stored_learned_sums)
    stored = sw.profile(frame, method="auto", rng=0, **kwargs)
    assert blocks.params["chosen"].startswith("learned")  # the learned sums decide the estimate
    assert blocks.params["chosen"] == stored.params["chosen"]
    assert blocks.params["cv_variance_ratio"] == stored.params["cv_variance_ratio"]
    np.testing.assert_allclose(blocks.estimate, stored.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(blocks.se, stored.se, rtol=1e-12)


@pytest.mark.parametrize(
    ("kind", "q", "levels"),
    [("continuous", 1, 0), ("continuous", 2, 0), ("categorical", 1, 6), ("ordinal", 1, 40)],
)
def test_factored_predictions_equal_the_design_rows_products(
    kind: str, q: int, levels: int
) -> None:
    """The fold models' predictions from the factored linear predictor equal those of the
    design rows (predict_all), for a continuous profile of one and two columns, one-hot
    levels (rows in any order, a value outside the pool's levels included) and an ordinal
    profile with too many levels for interactions."""
    from slicewise.estimators.learner_design import design_basis, predict_factored
    from slicewise.estimators.predictors import LogisticModel, predict_all

    rng = np.random.default_rng(3)
    m, k = 3_000, 4
    z = rng.normal(size=(m, q)) if not levels else rng.integers(0, levels, size=(m, 1)) * 1.0
    features = rng.normal(size=(m, k))
    basis = design_basis(z, kind, "logistic")  # type: ignore[arg-type]
    rows = rng.permutation(m)[:700]
    z_rows = z[rows].copy()
    if levels and basis.levels is not None:
        z_rows[:5] = levels + 7.0  # not a level of the pool: no level or interaction terms
    design = learner_design(z_rows, kind, features[rows], "logistic", basis)  # type: ignore[arg-type]
    models = [
        LogisticModel(coef=rng.normal(0, 0.4, design.shape[1]), intercept=0.2 * f) for f in range(5)
    ]
    got = predict_factored(models, z_rows, features[rows], "logistic", basis)
    assert got is not None
    np.testing.assert_allclose(got, predict_all(models, design), rtol=1e-13, atol=1e-15)
    constant = [
        *models[:4],
        LogisticModel(coef=np.zeros(design.shape[1]), intercept=0, constant=0.5),
    ]
    assert predict_factored(constant, z_rows, features[rows], "logistic", basis) is None
