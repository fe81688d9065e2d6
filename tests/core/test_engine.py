"""The vectorised engine agrees with a slow, obvious per-grid-point loop, and its invariances hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from sim_frames import continuous_frame

SIGNALS = ["s1", "s2", "s3"]


def slow_lace(
    data: pd.DataFrame, grid: np.ndarray, h: float, b: float, ridge: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LACE written out per grid point with explicit weights (no shared code with the engine)."""
    z = data["z"].to_numpy()
    s_raw = data[SIGNALS].to_numpy()
    s = (s_raw - s_raw.mean(0)) / s_raw.std(0)
    y = data["y"].to_numpy()
    lab = ~np.isnan(y)
    est, var_pool, var_pop = [], [], []
    for point in grid:
        k = np.exp(-0.5 * ((z - point) / h) ** 2)
        kb = np.exp(-0.5 * ((z - point) / b) ** 2)
        w_t = k / k.sum()
        w_l = k[lab] / k[lab].sum()
        wb_t = kb / kb.sum()
        wb_l = kb[lab] / kb[lab].sum()
        mean_b_t = wb_t @ s
        sigma_ss = (s - mean_b_t).T @ np.diag(wb_t) @ (s - mean_b_t)
        sl, yl = s[lab], y[lab]
        sigma_sy = (sl - wb_l @ sl).T @ (wb_l * (yl - wb_l @ yl))
        beta = np.linalg.solve(sigma_ss + ridge * np.eye(len(SIGNALS)), sigma_sy)
        est.append(w_l @ yl - beta @ (w_l @ sl - w_t @ s))
        e = yl - sl @ beta
        hat = np.linalg.eigvalsh(sigma_ss)
        hat = hat / (hat + ridge)
        df, df2 = hat.sum(), (hat**2).sum()
        a2 = (w_l**2).sum()
        kappa = 1 / (1 - a2 - (2 * df * (w_l**2 * wb_l).sum() - df2 * a2 * (wb_l**2).sum()) / a2)
        frac = k[lab].sum() / k.sum()
        r2 = w_l**2 * (e - w_l @ e) ** 2
        # the variance given the labeled set: calibration weights g_i on the signals (labeled
        # covariance plus ridge K / n_eff, labeled mean moved to the unlabeled items' mean),
        # relative to their root mean square, taken where they raise the residual variance
        mean_l = w_l @ sl
        cov_l = (sl - mean_l).T @ np.diag(w_l) @ (sl - mean_l)
        gap = (w_t @ s - frac * mean_l) / (1 - frac) - mean_l
        g = 1 + (sl - mean_l) @ np.linalg.solve(cov_l + len(SIGNALS) * a2 * np.eye(3), gap)
        g = g / np.sqrt((w_l**2 * g**2).sum() / a2)
        factor = max((r2 * g**2).sum() / r2.sum(), 1.0)
        v_pool = (1 - frac) * kappa * r2.sum() * factor
        v_t = frac * (w_l**2 * (yl - w_l @ yl) ** 2).sum() / (1 - a2)
        var_pool.append(v_pool)
        var_pop.append(v_pool + v_t)
    return np.array(est), np.array(var_pool), np.array(var_pop)


@pytest.mark.parametrize(("b_scale", "ridge"), [(1.0, 0.3), (2.0, 0.0), (1.5, 3.0)])
def test_engine_matches_slow_loop(b_scale: float, ridge: float) -> None:
    data = continuous_frame()
    grid = np.linspace(0.1, 0.9, 7)
    h = 0.08
    kwargs = {
        "z": "z",
        "signals": SIGNALS,
        "label": "y",
        "kind": "continuous",
        "grid": grid,
        "method": "lace",
    }
    pool = sw.profile(data, bandwidth=h, nuisance_scale=b_scale, ridge=ridge, **kwargs)
    pop = sw.profile(
        data, bandwidth=h, nuisance_scale=b_scale, ridge=ridge, target="population", **kwargs
    )
    est, v_pool, v_pop = slow_lace(data, grid, h, h * b_scale, ridge)
    np.testing.assert_allclose(pool.estimate, est, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pool.se**2, v_pool, rtol=1e-8)
    np.testing.assert_allclose(pop.se**2, v_pop, rtol=1e-8)


def test_naive_matches_direct_weighted_mean_and_ratio_variance() -> None:
    data = continuous_frame()
    grid = np.linspace(0.1, 0.9, 5)
    res = sw.profile(data, z="z", label="y", method="naive", grid=grid, bandwidth=0.1)
    z, y = data["z"].to_numpy(), data["y"].to_numpy()
    lab = ~np.isnan(y)
    for g, point in enumerate(grid):
        k = np.exp(-0.5 * ((z - point) / 0.1) ** 2)
        w = k[lab] / k[lab].sum()
        mean = w @ y[lab]
        frac = k[lab].sum() / k.sum()
        var = (1 - frac) * (w**2 * (y[lab] - mean) ** 2).sum() / (1 - (w**2).sum())
        assert res.estimate[g] == pytest.approx(mean, rel=1e-12)
        assert res.se[g] ** 2 == pytest.approx(var, rel=1e-10)
        assert res.n_labeled_eff[g] == pytest.approx(1 / (w**2).sum(), rel=1e-10)


def test_item_order_does_not_matter() -> None:
    data = continuous_frame()
    shuffled = data.sample(frac=1.0, random_state=3).reset_index(drop=True)
    kwargs = {"z": "z", "signals": SIGNALS, "label": "y", "kind": "continuous", "method": "lace"}
    a = sw.profile(data, **kwargs)
    b = sw.profile(shuffled, **kwargs)
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-10)
    np.testing.assert_allclose(a.se, b.se, rtol=1e-9)


def test_affine_rescaling_of_a_signal_with_zero_ridge() -> None:
    data = continuous_frame()
    scaled = data.assign(s1=lambda f: -40.0 * f["s1"] + 7.0, s3=lambda f: 0.01 * f["s3"] - 2)
    kwargs = {
        "z": "z",
        "signals": SIGNALS,
        "label": "y",
        "kind": "continuous",
        "ridge": 0.0,
        "method": "lace",
    }
    a = sw.profile(data, **kwargs)
    b = sw.profile(scaled, **kwargs)
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-9)
    np.testing.assert_allclose(a.se, b.se, rtol=1e-8)
    # with a ridge, rescaling is absorbed by the pool standardisation: still invariant
    c = sw.profile(data, **{**kwargs, "ridge": 0.3})
    d = sw.profile(scaled, **{**kwargs, "ridge": 0.3})
    np.testing.assert_allclose(c.estimate, d.estimate, rtol=1e-9)


def test_adding_pure_noise_signal_leaves_the_mean_unchanged() -> None:
    """Over label draws the estimate with an extra noise signal has the same mean (seeded)."""
    rng = np.random.default_rng(7)
    data = continuous_frame(m=1500, n=1500, seed=7)  # fully labeled pool
    truth_y = data["y"].to_numpy()
    data["noise"] = rng.normal(size=len(data))
    grid = np.linspace(0.15, 0.85, 5)
    kwargs = {
        "z": "z",
        "label": "y",
        "kind": "continuous",
        "grid": grid,
        "bandwidth": 0.1,
        "method": "lace",
    }
    diffs = []
    for _ in range(300):
        masked = data.copy()
        y = truth_y.copy()
        y[rng.permutation(len(y))[300:]] = np.nan
        masked["y"] = y
        with_noise = sw.profile(masked, signals=[*SIGNALS, "noise"], **kwargs)
        without = sw.profile(masked, signals=SIGNALS, **kwargs)
        diffs.append(with_noise.estimate - without.estimate)
    diffs_arr = np.array(diffs)
    z_stat = diffs_arr.mean(0) / (diffs_arr.std(0, ddof=1) / np.sqrt(len(diffs_arr)))
    assert np.all(np.abs(z_stat) < 3.5), z_stat


def test_ci_level_and_frozen_result() -> None:
    res = sw.profile(continuous_frame(), z="z", signals=SIGNALS, label="y", kind="continuous")
    low90, high90 = res.ci(0.90, bounded=False)
    low95, high95 = res.ci(bounded=False)
    assert np.all(high90 - low90 < high95 - low95)
    # Student t with the reported residual degrees of freedom (n_eff - 1 - df of the coefficient)
    assert np.all((res.df > 1) & (res.df < res.n_labeled_eff))
    np.testing.assert_allclose((high95 - low95) / (2 * res.se), stats.t.ppf(0.975, res.df))
    with pytest.raises(ValueError, match="read-only"):
        res.estimate[0] = 1.0
    frame = res.with_level(0.8).to_frame(bounded=False)
    required = {"z", "estimate", "se", "lower", "upper", "n_labeled_eff", "r2", "gain"}
    assert required <= set(frame.columns)
    np.testing.assert_allclose(
        frame["upper"] - frame["lower"], 2 * stats.t.ppf(0.9, res.df) * res.se
    )
    np.testing.assert_allclose(frame["n_equivalent"], res.n_labeled_eff * res.gain)


def test_multidimensional_profile_uses_product_kernel() -> None:
    rng = np.random.default_rng(5)
    m = 800
    data = pd.DataFrame({"a": rng.uniform(0, 1, m), "b": rng.uniform(0, 1, m)})
    data["y"] = (rng.random(m) < 0.3 + 0.4 * data["a"] * data["b"]).astype(float)
    data["s"] = data["y"] + rng.normal(0, 1, m)
    data.loc[rng.permutation(m)[200:], "y"] = np.nan
    grid = np.array([[0.3, 0.3], [0.7, 0.5]])
    res = sw.profile(
        data,
        z=["a", "b"],
        signals=["s"],
        label="y",
        method="naive",
        grid=grid,
        bandwidth=[0.2, 0.3],
    )
    lab = data["y"].notna().to_numpy()
    for g, (pa, pb) in enumerate(grid):
        k = np.exp(-0.5 * (((data["a"] - pa) / 0.2) ** 2 + ((data["b"] - pb) / 0.3) ** 2))
        expected = (k[lab] * data["y"][lab]).sum() / k[lab].sum()
        assert res.estimate[g] == pytest.approx(expected, rel=1e-12)
    assert list(res.to_frame().columns[:2]) == ["a", "b"]
    assert res.size == 2
