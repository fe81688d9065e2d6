"""Issue 11, items 1-3: the default is never confidently wrong, per slice.

Each test reproduces a failure measured on the round-1 default (noted in its docstring) against
known truth, seeded.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.datasets import DEMO_SIGNALS, load_demo
from slicewise.inference.bounded import interval_bounds
from slicewise.smoothing.objective import PRECISE_LABELS, TRANSLATION, borrow


def _noise_frame(
    seed: int, m: int = 1500, n: int = 100, k: int = 120
) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.95 - 0.15 * (level - 1)).astype(float)
    frame = pd.DataFrame(rng.normal(size=(m, k)), columns=[f"n{j}" for j in range(k)])
    frame["judge"] = y + rng.normal(0, 0.7, m)
    frame["level"] = level
    frame["y"] = y
    truth = frame.groupby("level")["y"].mean().to_numpy()
    labeled = np.zeros(m, dtype=bool)
    labeled[rng.choice(m, n, replace=False)] = True
    frame.loc[~labeled, "y"] = np.nan
    return frame, ["judge", *(f"n{j}" for j in range(k))], truth


@pytest.mark.slow
def test_many_noise_signals_few_labels_is_never_worse_than_gold_only() -> None:
    """1 useful judge and 120 pure-noise signals, 100 labels, 5 levels (K > n). Round 1: auto's
    RMSE about 2x the gold-only mean's, coverage about 0.8, a reversed trend in one draw. Now:
    every candidate's labels are adjusted out of fold and naive is kept unless a candidate is
    reliably better, so per level the error is not above gold-only's beyond Monte-Carlo error,
    the bias is within 3 MC standard errors and the intervals cover."""
    reps = 30
    err, err_naive, covered = [], [], []
    for seed in range(reps):
        frame, signals, truth = _noise_frame(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sw.profile(frame, z="level", signals=signals, label="y", kind="ordinal")
        low, high = res.ci()
        err.append(res.estimate - truth)
        err_naive.append(res.naive_estimate - truth)
        covered.append((low <= truth) & (truth <= high))
    e, en = np.array(err), np.array(err_naive)
    diff = e**2 - en**2
    assert np.all(diff.mean(0) <= 2 * diff.std(0, ddof=1) / np.sqrt(reps)), diff.mean(0)
    assert np.all(np.abs(e.mean(0)) <= 3 * e.std(0, ddof=1) / np.sqrt(reps)), e.mean(0)
    assert np.mean(covered) >= 0.9, np.mean(covered, axis=0)


def _outlier_frame(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """15 benchmarks whose accuracy the judge tracks; on the largest one (index 0, 40% of the
    pool) the model is 0.08 worse than the judge says, so its truth departs from the judge
    regression that fits the other 14 tightly (a small between-domain variance)."""
    rng = np.random.default_rng(seed)
    sizes = np.array([4000, *([420] * 14)])
    bench = np.repeat(np.arange(15), sizes)
    base = np.linspace(0.5, 0.75, 15)[bench]
    y_p = np.where(bench == 0, base - 0.08, base)
    y = (rng.random(bench.size) < y_p).astype(float)
    judge_y = np.where(bench == 0, (rng.random(bench.size) < base).astype(float), y)
    judge = judge_y + rng.normal(0, 0.6, bench.size)
    frame = pd.DataFrame({"bench": [f"b{b:02d}" for b in bench], "judge": judge, "y": y})
    truth = frame.groupby("bench")["y"].mean().to_numpy()
    keep = np.zeros(bench.size, dtype=bool)
    keep[rng.choice(bench.size, 800, replace=False)] = True
    frame.loc[~keep, "y"] = np.nan
    return frame, truth


@pytest.mark.slow
def test_smoothing_does_not_hide_the_slice_that_departs_from_the_others() -> None:
    """Round 1 shrank every benchmark toward the synthetic regression: on PSN-IRT the largest
    benchmark (about 270 labels) was biased by 8 MC standard errors and worse than gold-only.
    Here the largest benchmark (about 330 labels) departs from the judge regression by -0.08
    (3.3 of its standard errors)."""
    reps = 60
    err, err_naive, covered = [], [], []
    for seed in range(reps):
        frame, truth = _outlier_frame(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sw.profile(frame, z="bench", signals=["judge"], label="y", kind="categorical")
        low, high = res.ci()
        err.append(res.estimate - truth)
        err_naive.append(res.naive_estimate - truth)
        covered.append((low <= truth) & (truth <= high))
    e, en, cov = np.array(err), np.array(err_naive), np.array(covered)
    big = 0  # 'b00', the largest benchmark
    # the slice objective moves it by at most TRANSLATION standard errors toward the others:
    # its bias stays below 0.35 sd (measured: 0.32 sd; 0.66 sd without the cap)
    sd = e[:, big].std(ddof=1)
    assert abs(e[:, big].mean()) <= 0.35 * sd + 2 * sd / np.sqrt(reps), e[:, big].mean() / sd
    diff = e[:, big] ** 2 - en[:, big] ** 2
    assert diff.mean() <= 2 * diff.std(ddof=1) / np.sqrt(reps)
    assert cov[:, big].mean() >= 0.9, cov[:, big].mean()
    assert cov.mean() >= 0.93, cov.mean(axis=0)


def test_the_objectives_limit_or_take_the_smoothed_estimate() -> None:
    rng = np.random.default_rng(0)
    direct = rng.uniform(0.2, 0.8, 40)
    direct_se = rng.uniform(0.02, 0.1, 40)
    smoothed = direct + rng.normal(0, 0.1, 40)
    n_lab = rng.integers(1, 60, 40).astype(float)
    weight = rng.uniform(0.05, 0.95, 40)
    out = borrow(direct, direct_se, smoothed, np.full(40, 0.01), weight, n_lab, 1.96, "slice")
    precise = n_lab >= PRECISE_LABELS
    shift = smoothed - direct
    # a precise slice moves toward the model by at most TRANSLATION standard errors
    cap = TRANSLATION * direct_se[precise]
    np.testing.assert_allclose(
        out.estimate[precise], direct[precise] + np.clip(shift[precise], -cap, cap)
    )
    np.testing.assert_array_equal(out.capped[precise], np.abs(shift[precise]) > cap)
    np.testing.assert_array_equal(out.estimate[~precise], smoothed[~precise])
    np.testing.assert_allclose(out.bias_bound, np.abs(out.estimate - direct), atol=1e-15)
    half = out.bias_bound + 1.96 * out.se
    assert np.all(out.estimate - half <= direct - 1.96 * direct_se + 1e-12)
    assert np.all(out.estimate + half >= direct + 1.96 * direct_se - 1e-12)
    np.testing.assert_array_equal(out.disagree, np.abs(shift) > 1.96 * direct_se)
    # the own weight: the model's where the slice takes its estimate, more where held back
    np.testing.assert_allclose(out.own_weight[~precise], weight[~precise])
    assert np.all(out.own_weight[precise] >= weight[precise] - 1e-12)
    ens = borrow(direct, direct_se, smoothed, np.full(40, 0.01), weight, n_lab, 1.96, "ensemble")
    np.testing.assert_array_equal(ens.estimate, smoothed)
    np.testing.assert_array_equal(ens.se, np.full(40, 0.01))
    np.testing.assert_array_equal(ens.bias_bound, 0.0)
    np.testing.assert_array_equal(ens.own_weight, weight)


def test_smoothed_profile_intervals_contain_the_direct_intervals() -> None:
    """A categorical profile with many small slices: smoothed slices report a bias bound, and the
    reported interval contains the slice's direct (unsmoothed) interval."""
    frame, _ = _outlier_frame(1)
    labeled = frame.index[frame["y"].notna()].to_numpy()
    drop = np.random.default_rng(1).permutation(labeled)[200:]
    frame.loc[drop, "y"] = np.nan  # 200 labels: several slices below 20
    kwargs = {"z": "bench", "signals": ["judge"], "label": "y", "kind": "categorical"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sw.profile(frame, **kwargs)
        direct = sw.profile(frame, smooth="none", **kwargs)
    smoothed = np.asarray(res.params["smoothed"], dtype=bool)
    own = np.asarray(res.params["direct_estimate"])
    own_se = np.asarray(res.params["direct_se"])
    assert smoothed.any()
    precise = res.n_labeled_eff >= PRECISE_LABELS
    assert precise.any()
    assert (~precise).any()
    assert np.all(np.abs(res.estimate - own)[precise] <= TRANSLATION * own_se[precise] + 1e-12)
    np.testing.assert_allclose(res.bias_bound[~smoothed], 0.0)
    np.testing.assert_allclose(res.estimate[~smoothed], own[~smoothed], rtol=1e-12)
    np.testing.assert_allclose(res.bias_bound, np.abs(res.estimate - own), atol=1e-12)
    q = sw.results.critical_value(res.level, res.df)
    plain = res.to_frame(bounded=False)
    assert np.all(plain["lower"] <= own - q * res.se + 1e-12)
    assert np.all(plain["upper"] >= own + q * res.se - 1e-12)
    # the default (Wilson-type, labels in [0, 1]) interval contains the direct Wilson interval
    wilson = res.to_frame()
    low, high = interval_bounds(
        own, res.se, q, naive_estimate=res.naive_estimate, n_labeled_eff=res.n_labeled_eff
    )
    assert np.all(wilson["lower"] <= low + 1e-12)
    assert np.all(wilson["upper"] >= high - 1e-12)
    assert np.any(wilson["lower"] > plain["lower"] + 1e-3)  # the two kinds differ here
    # smoothing helps the point estimate of small slices on average, never the interval width
    assert direct.size == res.size


@pytest.mark.slow
def test_auto_on_the_demo_length_profile_is_centered_and_covers() -> None:
    """The shipped demo's continuous profile, over 60 label draws of the demo's size (80 labels)
    from the full pool (truth known). Round 1's plug-in blend was not centered (one draw: RMSE
    0.054, 85% of grid points covered, against LACE's 0.022 and 100%). auto is now a
    cross-fitted centered estimate with no blend: at every grid point the bias is within 3 MC
    standard errors, and its intervals cover at least as often as the gold-only mean's (which
    undercover at the short-instruction end, 0.77 at n_eff 18: skewed labels near 0)."""
    frame = load_demo()
    kwargs = {"z": "log_instruction_len", "kind": "continuous", "signals": DEMO_SIGNALS}
    full = frame.assign(gold=frame["truth"])
    truth = sw.profile(full, label="truth", method="naive", **kwargs).estimate
    n_lab = int(frame["gold"].notna().sum())
    rng = np.random.default_rng(7)
    reps = 60
    err, covered, naive_covered = [], [], []
    for _ in range(reps):
        draw = full.copy()
        draw.loc[rng.permutation(len(draw))[n_lab:], "gold"] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sw.profile(draw, label="gold", **kwargs)
        assert "composite_weight" not in res.params
        low, high = res.ci()
        err.append(res.estimate - truth)
        covered.append((low <= truth) & (truth <= high))
        q = sw.results.critical_value(res.level, res.df)
        naive_covered.append(np.abs(res.naive_estimate - truth) <= q * res.naive_se)
    e, cov, cov_naive = np.array(err), np.array(covered), np.array(naive_covered)
    assert np.all(np.abs(e.mean(0)) <= 3 * e.std(0, ddof=1) / np.sqrt(reps)), e.mean(0)
    assert cov.mean() >= cov_naive.mean(), (cov.mean(), cov_naive.mean())
    assert cov.mean() >= 0.9, cov.mean()


@pytest.mark.slow
def test_intervals_near_a_boundary_do_not_collapse() -> None:
    """Labels piled at 1 over most of Z, failures only far away in the kernel's tail (PSN-IRT by
    difficulty: gold-only and auto covered 0.31 where the truth is about 0.99). The local sample
    variance collapses there; the Agresti-Coull floor keeps the gold-only intervals honest."""
    rng = np.random.default_rng(11)
    m, n, reps = 3000, 150, 100
    z = rng.random(m)
    p = np.where(z > 0.4, 0.995, 0.6)
    covered = []
    for _ in range(reps):
        y = (rng.random(m) < p).astype(float)
        frame = pd.DataFrame({"z": z, "y": y})
        truth = sw.profile(frame, z="z", label="y", method="naive", grid=10).estimate
        frame.loc[rng.permutation(m)[n:], "y"] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sw.profile(frame, z="z", label="y", method="naive", grid=10)
        low, high = res.ci()
        covered.append((low <= truth) & (truth <= high))
    per_point = np.mean(covered, axis=0)
    assert per_point.min() >= 0.85, per_point
    assert per_point.mean() >= 0.93, per_point
