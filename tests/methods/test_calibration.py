"""Calibration weights in the variance of the cross-fitted control variates
(slicewise.inference.calibration): the variance given the labeled set, not only on average.

A judge that is right on most items and a coin on a few makes the estimate a post-stratified
one: the few coin items carry the variance, weighted by their share of the unlabeled items. The
plain residual variance weights them by their share of the labels, so it is smallest exactly
when few coin items were labeled, which is when the error is largest.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

import slicewise as sw
from slicewise.inference.calibration import calibration_weights, given_set_factor


@pytest.fixture(autouse=True)
def _single_blas_thread() -> Iterator[None]:
    with threadpool_limits(limits=1):
        yield


def _setting(seed: int, n: int = 300, g: int = 4, k: int = 3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    signals = rng.normal(size=(n, k)) @ rng.normal(size=(k, k))
    kernel = rng.random((n, g)) ** 2
    weights = kernel / kernel.sum(axis=0)
    pool_mean = rng.normal(0, 0.3, size=(g, k))
    fraction = rng.uniform(0.05, 0.5, size=g)
    return signals, weights, pool_mean, fraction


def test_calibrated_labels_match_the_unlabeled_items_signal_mean() -> None:
    """Without a ridge, the g-weighted labeled mean of every signal is the unlabeled items'
    mean (S-bar_T - pi S-bar_L) / (1 - pi) and the g-weights keep the total weight: the
    calibration equations that define g (Deville and Sarndal 1992)."""
    signals, weights, pool_mean, fraction = _setting(0)
    g = calibration_weights(signals, weights, pool_mean, fraction, ridge=0.0, relative=False)
    unlabeled = (pool_mean - fraction[:, None] * (weights.T @ signals)) / (1.0 - fraction[:, None])
    np.testing.assert_allclose((weights * g).sum(axis=0), 1.0, atol=1e-10)
    np.testing.assert_allclose((weights * g).T @ signals, unlabeled, atol=1e-9)


def test_cells_get_their_share_of_the_unlabeled_items_over_their_share_of_the_labels() -> None:
    """One indicator signal (a cell): its items get g = (share among the unlabeled items) /
    (share among the labels), the post-stratification weight; the other items likewise."""
    n, pool_n, in_cell, pool_in_cell = 100, 1000, 10, 200
    signals = np.zeros((n, 1))
    signals[:in_cell] = 1.0
    weights = np.full((n, 1), 1.0 / n)
    fraction = np.array([n / pool_n])
    pool_mean = np.array([[pool_in_cell / pool_n]])
    g = calibration_weights(signals, weights, pool_mean, fraction, ridge=0.0, relative=False)
    unlabeled_share = (pool_in_cell - in_cell) / (pool_n - n)
    np.testing.assert_allclose(g[:in_cell], unlabeled_share / (in_cell / n), rtol=1e-10)
    np.testing.assert_allclose(g[in_cell:], (1 - unlabeled_share) / (1 - in_cell / n), rtol=1e-10)


def test_a_fully_labeled_neighbourhood_keeps_weight_one() -> None:
    signals, weights, pool_mean, fraction = _setting(1)
    fraction[2] = 1.0
    g = calibration_weights(signals, weights, pool_mean, fraction)
    np.testing.assert_array_equal(g[:, 2], 1.0)
    assert np.all(np.isfinite(g))


def _coin_pool(rng: np.random.Generator, coin_labels: int) -> pd.DataFrame:
    """Two levels of 1,000 items; on 80% of them the judge copies the label, on the other 20%
    it is a coin. Level 'a' has 100 labels of which ``coin_labels`` are coin items (half of them
    labeled 1), level 'b' 100 labels at random."""
    frames = []
    for level in ("a", "b"):
        easy = np.r_[np.ones(800), np.zeros(200)]
        y = (rng.random(1000) < 0.5).astype(float)
        judge = np.where(easy == 1, y, (rng.random(1000) < 0.5).astype(float))
        frame = pd.DataFrame(
            {"level": level, "easy": easy, "judge": judge, "judge_easy": judge * easy, "y": y}
        )
        if level == "a":
            coin = rng.choice(np.arange(800, 1000), coin_labels, replace=False)
            frame.loc[coin, "y"] = np.r_[np.ones(coin_labels // 2), np.zeros(coin_labels // 2)]
            labeled = np.r_[rng.choice(800, 100 - coin_labels, replace=False), coin]
        else:
            labeled = rng.choice(1000, 100, replace=False)
        frame["gold"] = np.nan
        frame.loc[labeled, "gold"] = frame.loc[labeled, "y"]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("method", ["auto", "lace", "global_cv"])
def test_an_undersampled_noisy_cell_widens_the_interval(method: str) -> None:
    """Level 'a' with 10 and with 30 labeled coin items (20 expected). The estimate is about
    the post-stratified one, whose standard deviation given the labels is
    (1 - pi) (coin share of the unlabeled items) sqrt(s^2 / n_c (1 - n_c / N_c)): 0.031 with
    10 coin labels (s^2 = 0.278) and 0.015 with 30. The plain residual variance gives about
    sqrt(10 / 30) times the second for the first: the interval is narrowest where the error is
    largest. The calibrated se comes near the first (within the estimator's own departures from
    post-stratification) and is never below the plain se, so the over-sampled case keeps it.
    ``lace`` and ``global_cv`` fit their coefficient in-sample on the same signals; their plain
    se was 0.52-0.66 of the exact one with 10 coin labels (seeds 0-2)."""
    exact = 0.9 * (190 / 900) * np.sqrt(np.var(np.r_[np.ones(5), np.zeros(5)], ddof=1) / 10)
    exact *= np.sqrt(1 - 10 / 200)
    for seed in range(3):
        se = {}
        for coin_labels in (10, 30):
            table = _coin_pool(np.random.default_rng(seed), coin_labels)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = sw.profile(
                    table,
                    z="level",
                    kind="categorical",
                    signals=["judge", "easy", "judge_easy"],
                    label="gold",
                    method=method,
                    smooth="none",
                )
            assert method != "auto" or result.params.get("chosen") != "naive"
            se[coin_labels] = result.to_frame().set_index("z").loc["a", "se"]
        assert se[10] > se[30], se
        assert 0.85 < se[10] / exact < 1.35, (se, exact)


@pytest.mark.parametrize("method", ["lace", "global_cv"])
def test_the_continuous_deployment_score_widens_for_an_undersampled_noisy_cell(method: str) -> None:
    """Level 'a' of the same pool alone, with a continuous Z and equal deployment weights: the
    deployment score is then the post-stratified pool mean, whose exact standard deviation given
    the labels is the one above. Its f is fitted on the same labels (an interpolated local
    coefficient, or one ridge coefficient), so the variance is the one given the labeled set:
    the plain one was 0.49-0.61 of the exact one with 10 coin labels (seeds 0-2)."""
    exact = 0.9 * (190 / 900) * np.sqrt(np.var(np.r_[np.ones(5), np.zeros(5)], ddof=1) / 10)
    exact *= np.sqrt(1 - 10 / 200)
    for seed in range(3):
        se = {}
        for coin_labels in (10, 30):
            rng = np.random.default_rng(seed)
            table = _coin_pool(rng, coin_labels).query("level == 'a'").copy()
            table["z"] = rng.uniform(0.0, 1.0, len(table))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = sw.deployment_score(
                    table,
                    z="z",
                    signals=["judge", "easy", "judge_easy"],
                    label="gold",
                    deploy=np.ones_like,
                    method=method,
                )
            se[coin_labels] = result.se
        assert se[10] > se[30], se
        assert 0.85 < se[10] / exact < 1.35, (se, exact)


def test_design_weights_calibrate_the_residual_mean() -> None:
    """With design weights the residual mean has its own weights: the calibration equations
    hold for them, while pi(z) multiplies the unweighted labeled mean in S-bar_U."""
    signals, weights, pool_mean, fraction = _setting(2)
    inverse = weights / np.random.default_rng(3).uniform(0.2, 1.0, size=(weights.shape[0], 1))
    residual = inverse / inverse.sum(axis=0)
    g = calibration_weights(
        signals, weights, pool_mean, fraction, residual=residual, ridge=0.0, relative=False
    )
    unlabeled = (pool_mean - fraction[:, None] * (weights.T @ signals)) / (1.0 - fraction[:, None])
    np.testing.assert_allclose((residual * g).sum(axis=0), 1.0, atol=1e-10)
    np.testing.assert_allclose((residual * g).T @ signals, unlabeled, atol=1e-9)


def test_the_given_set_factor_is_the_same_under_equal_inclusion_probabilities() -> None:
    """Equal inclusion probabilities make the Hajek weights the unweighted ones, so the factor
    of a design-weighted fit is the simple-random-sampling one; it is at least 1 everywhere and
    above 1 somewhere in this setting (a labeled signal mean away from the pool's)."""
    x, weights, pool_mean, fraction = _setting(0)[:4]
    rng = np.random.default_rng(5)
    y = (rng.random(x.shape[0]) < 0.5).astype(float)
    coef = rng.normal(size=(weights.shape[1], x.shape[1]))
    plain = given_set_factor(weights, y, x, coef, x, pool_mean, fraction)
    design = given_set_factor(
        weights, y, x, coef, x, pool_mean, fraction, pi=np.full(x.shape[0], 0.2)
    )
    np.testing.assert_allclose(design, plain, rtol=1e-12)
    assert np.all(plain >= 1.0)
    assert np.any(plain > 1.0)
