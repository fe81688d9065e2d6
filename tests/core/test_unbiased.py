"""Group LACE with a fixed coefficient is exactly unbiased for the pool profile (Theorem 1)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import slicewise as sw


def test_exact_unbiasedness_by_enumerating_every_labeled_set() -> None:
    """Average over all C(8, 5) = 56 labeled sets equals the pool group means, to round-off.

    Two groups of four items; any 5 labels leave at least one labeled item in each group, so every
    draw is defined. The coefficient is fixed (not estimated), as in Theorem 1.
    """
    rng = np.random.default_rng(11)
    group = np.array(["a"] * 4 + ["b"] * 4)
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    s = rng.normal(size=(8, 2)) + y[:, None]
    truth = np.array([y[:4].mean(), y[4:].mean()])
    coef = np.array([[0.7, -0.2], [0.1, 0.4]])
    estimates = []
    for subset in itertools.combinations(range(8), 5):
        labels = np.full(8, np.nan)
        labels[list(subset)] = y[list(subset)]
        data = pd.DataFrame({"g": group, "s1": s[:, 0], "s2": s[:, 1], "y": labels})
        res = sw.profile(
            data,
            z="g",
            signals=["s1", "s2"],
            label="y",
            kind="categorical",
            method="lace_oracle",
            coef=coef,
        )
        estimates.append(res.estimate)
    np.testing.assert_allclose(np.mean(estimates, axis=0), truth, atol=1e-12)
    # and the estimator is not trivially the naive mean: the adjustment moves single draws
    naive_draw = np.array(estimates).std(axis=0)
    assert np.all(naive_draw > 0.01)


@pytest.mark.slow
def test_monte_carlo_unbiasedness_ordinal_pool_target() -> None:
    """Fixed pool, 2,000 seeded label draws: mean error of oracle-coefficient LACE is zero."""
    rng = np.random.default_rng(2024)
    m, n = 3000, 300
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.15 * level).astype(float)
    s = np.column_stack([y * level + rng.normal(0, 1, m), rng.normal(0, 1, m) - y])
    truth = pd.Series(y).groupby(level).mean().to_numpy()
    coef = np.tile([0.2, -0.3], (5, 1))
    errors = []
    for _ in range(2000):
        labels = np.full(m, np.nan)
        idx = rng.choice(m, n, replace=False)
        labels[idx] = y[idx]
        data = pd.DataFrame({"lvl": level, "s1": s[:, 0], "s2": s[:, 1], "y": labels})
        res = sw.profile(
            data,
            z="lvl",
            signals=["s1", "s2"],
            label="y",
            kind="ordinal",
            method="lace_oracle",
            coef=coef,
        )
        errors.append(res.estimate - truth)
    err = np.array(errors)
    z_stat = err.mean(0) / (err.std(0, ddof=1) / np.sqrt(len(err)))
    assert np.all(np.abs(z_stat) < 3.3), z_stat
