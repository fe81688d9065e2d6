"""Paired model gaps (unbiased, more precise than separate profiles, covering) and rank_models."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from models_sim import (
    GROUPS,
    ability,
    check_coverage,
    mask_rows,
    shared_difficulty_pool,
    to_long,
    z_stat,
)
from scipy import stats

import slicewise as sw

LABELS = {"a": "y0", "b": "y1"}
SIGNALS = {"a": ["s0", "diff"], "b": ["s1", "diff"]}


def _truth(wide: pd.DataFrame, a: str = "y0", b: str = "y1") -> np.ndarray:
    return (wide[a] - wide[b]).groupby(wide["g"]).mean().loc[GROUPS].to_numpy()


@pytest.mark.slow
def test_paired_gap_unbiased_precise_and_covering_pool_target() -> None:
    """Fixed pool of 2,400 items, 1,000 seeded draws of 600 items labeled for both models.

    Measured (seed 61): z of the mean error [1.49, -0.16, -1.46, -1.49]; pooled coverage 0.946;
    Var(gap) / (Var(theta_a) + Var(theta_b)) = [0.53, 0.46, 0.64, 0.57] per group (0.55 pooled)
    over the first 300 draws, with both separate profiles using their own judge and the
    difficulty proxy.
    """
    rng = np.random.default_rng(61)
    wide = shared_difficulty_pool(rng, m=2400, noise=0.5, proxy_noise=1.0)
    truth = _truth(wide)
    errors, covered, separate = [], [], []
    for rep in range(1000):
        data = mask_rows(wide, ["y0", "y1"], rng.permutation(len(wide))[:600])
        res = sw.gap(
            data,
            z="g",
            model_a="a",
            model_b="b",
            label=LABELS,
            signals=SIGNALS,
            kind="categorical",
            method="lace",
        )
        errors.append(res.estimate - truth)
        low, high = res.ci()
        covered.append((low <= truth) & (truth <= high))
        if rep < 300:
            each = [
                sw.profile(
                    data,
                    z="g",
                    signals=SIGNALS[m],
                    label=LABELS[m],
                    kind="categorical",
                    method="lace",
                )
                for m in ("a", "b")
            ]
            separate.append(np.vstack([each[0].estimate, each[1].estimate, res.estimate]))
    err = np.array(errors)
    print("gap pool: z", z_stat(err), "coverage", np.mean(covered))
    assert np.all(np.abs(z_stat(err)) < 3.3), z_stat(err)
    check_coverage(np.array(covered))
    draws = np.array(separate)
    var = draws.var(axis=0)  # (3, G): theta_a, theta_b, gap
    ratio = var[2] / (var[0] + var[1])
    print("variance ratio", ratio, var[2].sum() / (var[0] + var[1]).sum())
    assert np.all(ratio < 1.0), ratio
    assert var[2].sum() / (var[0] + var[1]).sum() < 0.75, ratio


@pytest.mark.slow
def test_paired_gap_coverage_population_target() -> None:
    """A fresh pool per draw; truth Phi(ability_a / s) - Phi(ability_b / s), s = sqrt(1.36).

    Measured (seed 62): pooled coverage 0.945 over 1,000 draws.
    """
    rng = np.random.default_rng(62)
    scale = np.sqrt(1 + 0.6**2)
    truth = stats.norm.cdf(ability(0) / scale) - stats.norm.cdf(ability(1) / scale)
    covered = []
    for _ in range(1000):
        wide = shared_difficulty_pool(rng, m=1200)
        data = mask_rows(wide, ["y0", "y1"], rng.permutation(len(wide))[:400])
        res = sw.gap(
            data,
            z="g",
            model_a="a",
            model_b="b",
            label=LABELS,
            signals=SIGNALS,
            kind="categorical",
            target="population",
            method="lace",
        )
        low, high = res.ci()
        covered.append((low <= truth) & (truth <= high))
    print("gap population coverage", np.mean(covered))
    check_coverage(np.array(covered))


def test_gap_is_the_exact_affine_image_of_a_profile_of_the_paired_difference() -> None:
    rng = np.random.default_rng(63)
    wide = mask_rows(shared_difficulty_pool(rng, m=1500), ["y0", "y1"], np.arange(300))
    res = sw.gap(
        wide,
        z="g",
        model_a="a",
        model_b="b",
        label=LABELS,
        signals=SIGNALS,
        kind="categorical",
        method="lace",
    )
    paired = wide.assign(d=(wide["y0"] - wide["y1"] + 1) / 2)
    direct = sw.profile(
        paired, z="g", signals=["diff", "s0", "s1"], label="d", kind="categorical", method="lace"
    )
    np.testing.assert_allclose(res.estimate, 2 * direct.estimate - 1, rtol=0, atol=1e-14)
    np.testing.assert_allclose(res.se, 2 * direct.se, rtol=1e-14)
    np.testing.assert_allclose(res.naive_se, 2 * direct.naive_se, rtol=1e-14)
    assert res.params["signals"] == ["diff", "a:s0", "b:s1"]
    assert res.params["n_pairs"] == 300
    # population target: the same estimate, a larger se
    pop = sw.gap(
        wide,
        z="g",
        model_a="a",
        model_b="b",
        label=LABELS,
        signals=SIGNALS,
        kind="categorical",
        target="population",
        method="lace",
    )
    np.testing.assert_array_equal(pop.estimate, res.estimate)
    assert np.all(pop.se > res.se)


def test_long_table_paired_signals_and_unpaired_labels_are_reported() -> None:
    rng = np.random.default_rng(64)
    wide = shared_difficulty_pool(rng, m=1200)
    long = to_long(wide, 2)
    y = long["y"].to_numpy().copy()
    long["model"].to_numpy()
    both = rng.permutation(1200)[:300]
    only_a = rng.permutation(np.setdiff1d(np.arange(1200), both))[:50]
    keep = np.zeros(len(long), dtype=bool)
    keep[both] = keep[1200 + both] = True
    keep[only_a] = True
    y[~keep] = np.nan
    long["y"] = y
    kwargs = {"z": "g", "label": "y", "model": "model", "id": "id", "kind": "categorical"}
    with pytest.warns(sw.UnpairedLabelsWarning, match="50 item\\(s\\) labeled only for 'm0'"):
        res = sw.gap(
            long, model_a="m0", model_b="m1", signals=["judge", "diff"], **kwargs, method="lace"
        )
    assert res.params["n_pairs"] == 300
    assert res.params["n_only_a"] == 50
    assert any("were not used" in n for n in res.notes)
    assert res.params["signals"] == ["diff", "m0:judge", "m1:judge"]
    with pytest.warns(sw.UnpairedLabelsWarning):
        diff = sw.gap(
            long,
            model_a="m0",
            model_b="m1",
            signals=["judge", "diff"],
            paired_signals="difference",
            **kwargs,
            method="lace",
        )
    assert diff.params["signals"] == ["diff", "judge (m0 - m1)"]
    assert not np.allclose(diff.estimate, res.estimate)
    # swapping the pair flips the sign exactly
    with pytest.warns(sw.UnpairedLabelsWarning):
        flipped = sw.gap(
            long, model_a="m1", model_b="m0", signals=["judge", "diff"], **kwargs, method="lace"
        )
    np.testing.assert_allclose(flipped.estimate, -res.estimate, atol=1e-12)


def _four_models(rng: np.random.Generator, m: int, n: int) -> tuple[pd.DataFrame, dict[str, str]]:
    wide = shared_difficulty_pool(rng, m=m, n_models=4)
    data = mask_rows(wide, [f"y{k}" for k in range(4)], rng.permutation(m)[:n])
    return data, {f"m{k}": f"y{k}" for k in range(4)}


def test_rank_models_estimates_equal_gap_and_maxt_is_below_bonferroni() -> None:
    rng = np.random.default_rng(65)
    data, labels = _four_models(rng, 1600, 500)
    signals = {f"m{k}": [f"s{k}", "diff"] for k in range(4)}
    rank = sw.rank_models(
        data, z="g", label=labels, signals=signals, kind="categorical", rng=1, method="lace"
    )
    assert rank.pairs[0] == ("m0", "m1")
    assert len(rank.pairs) == 6
    for p, (a, b) in enumerate(rank.pairs):
        one = sw.gap(
            data, z="g", model_a=a, model_b=b, label=labels, signals=signals, method="lace"
        )
        np.testing.assert_allclose(rank.estimate[p], one.estimate, atol=1e-13)
        np.testing.assert_allclose(rank.se[p], one.se, rtol=1e-12)
    bonf = stats.norm.ppf(1 - 0.05 / (2 * 24))
    assert 1.96 < rank.critical_value() < bonf
    frame = rank.to_frame()
    assert frame.shape == (24, 11)
    named = {f"{a} > {b}" for a in rank.models for b in rank.models if a != b}
    assert set(frame["verdict"]) <= named | {"unresolved"}
    ranks = rank.rank_frame()
    assert ranks.shape == (16, 7)
    assert np.all(ranks["rank_best"] <= ranks["rank_worst"])
    b = sw.rank_models(
        data,
        z="g",
        label=labels,
        signals=signals,
        kind="categorical",
        correction="bonferroni",
        method="lace",
    )
    assert b.critical_value() == pytest.approx(bonf)
    t_bonf = stats.t.isf(0.05 / (2 * 24), b.df)
    np.testing.assert_allclose(b.critical_values(), t_bonf, rtol=1e-10)


def test_rank_models_continuous_profile_accounts_for_grid_correlation() -> None:
    rng = np.random.default_rng(66)
    data, labels = _four_models(rng, 1600, 600)
    rank = sw.rank_models(
        data,
        z="diff",
        label=labels,
        signals=["s0"],
        grid=24,
        bandwidth=0.5,
        rng=2,
        n_draws=4000,
        method="lace",
    )
    bonf = stats.norm.ppf(1 - 0.05 / (2 * rank.n_family))
    # neighbouring grid points share items, so max-t is well below Bonferroni (3.17 vs 3.58)
    assert 1.96 < rank.critical_value() < bonf - 0.2  # t quantiles with Satterthwaite df


@pytest.mark.slow
def test_rank_models_joint_correlation_matches_the_draws() -> None:
    """The influence-based correlation of all (pair, grid point) estimates vs 200 label draws.

    Measured (seed 68): RMS difference 0.082 (largest 0.21) over the off-diagonal of the 36 x 36
    matrix, against an RMS correlation of 0.35
    (Monte-Carlo standard error of one empirical correlation from 200 draws: up to 0.07).
    """
    from slicewise.inference.influence import correlation
    from slicewise.models import ranking

    rng = np.random.default_rng(68)
    wide = shared_difficulty_pool(rng, m=1600, n_models=3)
    labels = {f"m{k}": f"y{k}" for k in range(3)}
    kwargs = {"z": "diff", "label": labels, "signals": ["s0"], "grid": 12, "bandwidth": 0.5}
    first = mask_rows(wide, list(labels.values()), rng.permutation(1600)[:600])
    pieces_cov: list[np.ndarray] = []
    original = ranking._joint_covariance

    def capture(*args: object) -> np.ndarray:
        cov = original(*args)  # type: ignore[arg-type]
        pieces_cov.append(cov)
        return cov

    ranking._joint_covariance = capture  # type: ignore[assignment]
    try:
        sw.rank_models(first, n_draws=200, rng=0, **kwargs, method="lace")
    finally:
        ranking._joint_covariance = original  # type: ignore[assignment]
    predicted = correlation(pieces_cov[0])
    draws = []
    for _ in range(200):
        data = mask_rows(wide, list(labels.values()), rng.permutation(1600)[:600])
        draws.append(
            sw.rank_models(data, n_draws=100, rng=0, **kwargs, method="lace").estimate.ravel()
        )
    empirical = np.corrcoef(np.array(draws).T)
    off = ~np.eye(predicted.shape[0], dtype=bool)
    rms = float(np.sqrt(np.mean((predicted - empirical)[off] ** 2)))
    assert rms < 0.12, rms
    # the structure is real: far from independence (RMS of the predicted correlations)
    assert float(np.sqrt(np.mean(predicted[off] ** 2))) > 0.3


@pytest.mark.slow
def test_rank_models_family_wise_coverage() -> None:
    """800 draws, 3 models, 3 pairs x 4 groups = 12 simultaneous intervals per draw.

    Measured (seeds 67 and 670; min-P over Student t since issue 11): family-wise coverage max-t
    0.945, Bonferroni 0.946, unadjusted 0.624. (With normal max-|t| and seed 67 alone: 0.944,
    0.951, 0.606.)
    Two separate runs (pool of 3,000, 1,200 labels, 1,000 draws each, seeds 1 and 2) gave 0.946 and
    0.946 for max-t: at |t| ~ 2.83 the normal approximation of a local control variate with ~300
    labels per group is slightly heavy-tailed (per-interval miss rate 0.0051 against the nominal
    0.0046). With ~100 labels per group (4 models, pool 1,600, 400 labels, 600 draws) max-t gave
    0.923 and Bonferroni 0.930: simultaneous intervals need larger groups than pointwise ones.
    """
    rng = np.random.default_rng(67)
    # the critical values' draws have their own stream, so the label draws do not depend on them
    draws_rng = np.random.default_rng(670)
    wide = shared_difficulty_pool(rng, m=2400, n_models=3)
    truth = {(f"m{i}", f"m{j}"): _truth(wide, f"y{i}", f"y{j}") for i in range(3) for j in range(3)}
    labels = {f"m{k}": f"y{k}" for k in range(3)}
    signals = {f"m{k}": [f"s{k}", "diff"] for k in range(3)}
    reps = 800
    hits = np.zeros((reps, 3), dtype=bool)
    for rep in range(reps):
        data = mask_rows(wide, list(labels.values()), rng.permutation(len(wide))[:1200])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rank = sw.rank_models(
                data,
                z="g",
                label=labels,
                signals=signals,
                kind="categorical",
                n_draws=2000,
                rng=draws_rng,
                method="lace",
            )
        true = np.vstack([truth[p] for p in rank.pairs])
        sim = rank.ci()
        point = rank.pointwise_ci()
        bonf_half = stats.norm.ppf(1 - 0.05 / (2 * rank.n_family)) * rank.se
        hits[rep] = [
            np.all((sim.low <= true) & (true <= sim.high)),
            np.all(np.abs(rank.estimate - true) <= bonf_half),
            np.all((point.low <= true) & (true <= point.high)),
        ]
    fwer = hits.mean(axis=0)
    print("family-wise coverage (maxt, bonferroni, pointwise)", fwer)
    floor = 0.95 - 2.33 * np.sqrt(0.95 * 0.05 / reps)
    assert fwer[0] >= floor, fwer
    assert fwer[1] >= fwer[0], fwer
    assert fwer[2] < 0.85, fwer  # the correction is needed
