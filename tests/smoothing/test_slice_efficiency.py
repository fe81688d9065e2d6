"""The slice objective keeps the papers' efficiency where the per-slice guard switched it off,
and ``auto`` keeps the signals where cross-validation favours them (issue 29, items 3-4)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.smoothing.objective import TRANSLATION


def _regression_domains(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """24 domains of 200 items whose accuracies follow the judge closely (spread 0.02 around
    the regression), a judge that tracks each item's label weakly."""
    rng = np.random.default_rng(seed)
    n_dom, size = 24, 200
    dom = np.repeat(np.arange(n_dom), size)
    level = np.linspace(0.3, 0.8, n_dom) + rng.normal(0, 0.02, n_dom)
    y = (rng.random(dom.size) < level[dom]).astype(float)
    judge = level[dom] + 0.3 * (y - level[dom]) + rng.normal(0, 0.3, dom.size)
    frame = pd.DataFrame({"d": dom, "judge": judge, "y": y})
    truth = frame.groupby("d")["y"].mean().to_numpy()
    return frame, truth


@pytest.mark.slow
def test_the_slice_objective_borrows_where_every_domain_has_ten_labels() -> None:
    """Every domain has 14 labels, so round 2's guard kept every direct estimate (total MSE
    equal to the direct one). The slice objective moves each by at most TRANSLATION standard
    errors toward the regression: the total error falls by a fifth or more, every domain stays
    covered and within 0.35 sd of bias (seeded, 80 draws)."""
    frame, truth = _regression_domains(0)
    rng = np.random.default_rng(1)
    reps = 80
    err = {"slice": [], "direct": []}
    covered = []
    for _ in range(reps):
        drawn = sw.sample(frame, strata="d", fraction=0.07, rng=rng.integers(2**31))
        labeled = drawn.apply(frame, label="y")
        common = {"domain": "d", "label": "y", "signals": ["judge"], "strata": "stratum"}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sw.domains(labeled, method="pp-s", **common)
        assert np.all(res.n_labeled >= 10)
        low, high = res.ci()
        err["slice"].append(res.estimate - truth)
        err["direct"].append(res.direct_estimate - truth)
        covered.append((low <= truth) & (truth <= high))
        shift = np.abs(res.estimate - res.direct_estimate)
        assert np.all(shift <= TRANSLATION * res.se + 1e-12)
    e, d, cov = np.array(err["slice"]), np.array(err["direct"]), np.array(covered)
    assert np.mean(e**2) <= 0.8 * np.mean(d**2), np.mean(e**2) / np.mean(d**2)
    sd = e.std(axis=0, ddof=1)
    assert np.all(np.abs(e.mean(axis=0)) <= 0.35 * sd + 3 * sd / np.sqrt(reps))
    assert cov.mean(axis=0).min() >= 0.9, cov.mean(axis=0)


def _moderate_signals_pool() -> tuple[pd.DataFrame, list[str]]:
    """A continuous profile whose four noisy judges each carry a little of the label."""
    rng = np.random.default_rng(0)
    m = 1200
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.35 + 0.4 * z).astype(float)
    frame = pd.DataFrame({"z": z, "y": y})
    signals = [f"s{k}" for k in range(4)]
    for name in signals:
        frame[name] = y + rng.normal(0, 1.6, m)
    return frame, signals


@pytest.mark.slow
def test_auto_keeps_the_signals_when_cross_validation_favours_them() -> None:
    """Four judges that together cut the variance by about a fifth, 60 labels: round 2's
    one-sided 5% test against the gold-only mean failed by the luck of the folds in 10 of 60
    draws (and reported the gold-only mean there); auto now keeps naive only where
    cross-validation says the signals do not help (1 of the same 60 draws)."""
    frame, signals = _moderate_signals_pool()
    items = make_table(frame, z="z", signals=signals, label="y", kind="continuous")
    ctx = build_context(items)
    y = np.asarray(items.label, dtype=np.float64)
    rng = np.random.default_rng(1)
    naive = 0
    for r in range(60):
        index = np.sort(rng.permutation(items.n_pool)[:60])
        labeled = LabeledSet(index=index, y=y[index])
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = METHODS["auto"].fit(ctx, labeled, MethodOptions(rng=r))
        naive += fit.params["chosen"] == "naive"
    assert naive <= 4, naive
