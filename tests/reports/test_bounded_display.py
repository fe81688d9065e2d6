"""Intervals a person sees stay where the quantity lives (issue 31, item 5): the gold-only
bars of a plot are bounded as the table's intervals are (inside [0, 1] for a mean of labels),
and a gap's or a ranking's intervals lie inside [-1, 1] (a Student t quantile of df 1 gave
+-248, the gold-only bars ran from -1.75 to 3.75 on PSN-IRT)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.reports.plot import _naive_interval


def _sparse(seed: int = 3, m: int = 400, labels: int = 40) -> pd.DataFrame:
    """Four slices with means near 0 and 1 and about ten labels each."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, m)
    y = (rng.random(m) < np.array([0.04, 0.5, 0.9, 0.97])[g]).astype(float)
    frame = pd.DataFrame({"g": g, "judge": y + rng.normal(0, 1.0, m), "y": y})
    frame.loc[rng.permutation(m)[labels:], "y"] = np.nan
    return frame


def test_gold_only_bars_are_bounded_like_the_table() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sw.profile(_sparse(), z="g", kind="categorical", label="y", signals=["judge"],
                         method="lace")  # fmt: skip
    low, high = _naive_interval(res, res.level)
    assert np.all(low >= 0.0)
    assert np.all(high <= 1.0)
    # the symmetric t interval of the gold-only mean leaves [0, 1] here: the case this covers
    from slicewise.results import normal_interval

    sym = normal_interval(res.naive_estimate, res.naive_se, res.level, res.df)
    assert np.any((sym.low < 0.0) | (sym.high > 1.0))


def _pair_table(seed: int = 0, m: int = 12, labels: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    level = np.repeat([1, 2, 3], m // 3)
    parts = []
    for model in ("a", "b", "c"):
        y = (rng.random(m) < 0.5).astype(float)
        part = pd.DataFrame(
            {"item": np.arange(m), "level": level, "model": model,
             "acc": y, "acc_norm": np.where(rng.random(m) < 0.8, y, 1 - y), "y": y}
        )  # fmt: skip
        part.loc[labels:, "y"] = np.nan
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def test_gap_and_ranking_intervals_stay_inside_minus_one_one() -> None:
    opts = dict(z="level", kind="ordinal", bandwidth=2.0, signals=["acc", "acc_norm"],
                label="y", id="item", model="model", method="lace", rng=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gap = sw.gap(_pair_table(), model_a="a", model_b="b", **opts)
        ranking = sw.rank_models(_pair_table(), **opts)
    for interval, estimate in ((gap.ci(), gap.estimate), (ranking.ci(), ranking.estimate),
                               (ranking.pointwise_ci(), ranking.estimate)):  # fmt: skip
        finite = np.isfinite(interval.low)
        assert np.all(interval.low[finite] >= -1.0)
        assert np.all(interval.high[finite] <= 1.0)
        assert np.all(interval.low[finite] <= estimate[finite])
        assert np.all(interval.high[finite] >= estimate[finite])
    # unclipped, these t intervals leave [-1, 1] (the case this covers)
    half = ranking.critical_values() * ranking.se
    assert np.nanmax(np.abs(ranking.estimate) + half) > 1.0
    simultaneous, pointwise = ranking.ci(), ranking.pointwise_ci()
    both = np.isfinite(simultaneous.low) & np.isfinite(pointwise.low)
    assert np.all(simultaneous.low[both] <= pointwise.low[both] + 1e-12)
