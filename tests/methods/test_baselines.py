"""The baseline methods of the LACE paper's comparison: consistency, identities, PPI reference.

Run the Setting C table with ``.venv/bin/python -m pytest tests/methods/test_baselines.py -k
setting_c -s`` (it prints the RE table recorded in docs/results/setting_c_methods.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.polynomial.hermite_e import hermegauss
from threadpoolctl import threadpool_limits

import sim_frames
import slicewise as sw
from slicewise.data.table import make_table
from slicewise.estimators.predictors import pool_predictions, standardize_columns
from slicewise.methods.base import LabeledSet, PoolContext
from slicewise.methods.local_ppi import fit_local_ppi
from slicewise.methods.options import MethodOptions
from slicewise.methods.predictions import (
    fit_plugin_judge,
    fit_scalar_prediction,
    prediction_moments,
)
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.studies.paper_designs import setting_c

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "ppi_reference.json"


@pytest.fixture(autouse=True)
def _single_blas_thread() -> Iterator[None]:
    """One BLAS thread: two test workers on two cores otherwise oversubscribe and spin."""
    with threadpool_limits(limits=1):
        yield


def expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def context(
    frame: pd.DataFrame, *, signals: list[str], kind: str, primary: str | None = None, grid=None
) -> tuple[PoolContext, LabeledSet]:
    table = make_table(frame, z="z", signals=signals, label="y", kind=kind)  # type: ignore[arg-type]
    ctx = build_context(table, grid=grid, primary=primary)
    return ctx, LabeledSet.from_table(table)


# --------------------------------------------------------------------------------------------
# Design A: ordinal Z, Y | S logistic in the judge signal only (every plug-in is well specified).
# theta(g) = E[expit(a + b S) | Z = g] with S | Z = g ~ N(mu_g, 1), by Gauss-Hermite quadrature.
# --------------------------------------------------------------------------------------------
MU = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
A, B = 0.2, 1.5


def design_a_truth() -> np.ndarray:
    nodes, weights = hermegauss(60)
    p = expit(A + B * (MU[:, None] + nodes[None, :]))
    return (p * weights).sum(axis=1) / weights.sum()


def design_a(rng: np.random.Generator, m: int, n: int) -> pd.DataFrame:
    z = rng.integers(1, 6, m)
    s = MU[z - 1] + rng.standard_normal(m)
    y = (rng.random(m) < expit(A + B * s)).astype(float)
    frame = pd.DataFrame(
        {"z": z, "judge": s, "other": 0.5 * s + 0.3 * z + rng.standard_normal(m), "y": y}
    )
    frame.loc[rng.permutation(m)[n:], "y"] = np.nan
    return frame


# Design B: continuous Z ~ U(0, 1), linear theta(z) = 0.3 + 0.4 z, judge with a Z-dependent offset.
GRID_B = np.linspace(0.3, 0.7, 5)


def design_b(rng: np.random.Generator, m: int, n: int) -> pd.DataFrame:
    z = rng.uniform(0.0, 1.0, m)
    y = (rng.random(m) < 0.3 + 0.4 * z).astype(float)
    frame = pd.DataFrame(
        {
            "z": z,
            "judge": y + 0.5 * np.sin(3 * z) + 0.7 * rng.standard_normal(m),
            "other": y * z + rng.standard_normal(m),
            "y": y,
        }
    )
    frame.loc[rng.permutation(m)[n:], "y"] = np.nan
    return frame


def monte_carlo(draw, truth, methods, *, reps, kind, grid=None, coef=None, seed=0):
    """Mean estimate over independent (pool, label) draws and its Monte-Carlo standard error."""
    rng = np.random.default_rng(seed)
    estimates = {name: [] for name in methods}
    for r in range(reps):
        frame = draw(rng)
        ctx, labeled = context(
            frame, signals=["judge", "other"], kind=kind, primary="judge", grid=grid
        )
        options = MethodOptions(coef=coef, rng=np.random.default_rng([seed, r]))
        for name in methods:
            estimates[name].append(METHODS[name].fit(ctx, labeled, options).estimate)
    out = {}
    for name, values in estimates.items():
        values = np.asarray(values)
        out[name] = (values.mean(axis=0) - truth, values.std(axis=0, ddof=1) / np.sqrt(reps))
    return out


@pytest.mark.parametrize(
    "method",
    [
        "naive",
        "lace",
        "lace_oracle",
        "global_cv",
        "per_signal_cv",
        "plugin_judge",
        "plugin_multi",
        "aug_plugin",
        "scalar_pred_cv",
    ],
)
def test_recovers_profile_design_a(method: str, design_a_results) -> None:
    """Bias against the closed-form theta(g) is within 4 Monte-Carlo SE + O(1/n) slack."""
    bias, mcse = design_a_results[method]
    assert np.all(np.abs(bias) <= 4 * mcse + 0.004), (method, bias, mcse)


@pytest.fixture(scope="module")
def design_a_results():
    methods = [
        "naive",
        "lace",
        "lace_oracle",
        "global_cv",
        "per_signal_cv",
        "plugin_judge",
        "plugin_multi",
        "aug_plugin",
        "scalar_pred_cv",
    ]
    with threadpool_limits(limits=1):
        return monte_carlo(
            lambda rng: design_a(rng, 20_000, 4_000),
            design_a_truth(),
            methods,
            reps=24,
            kind="ordinal",
            coef=np.array([1.0, -0.5]),  # any fixed coefficient keeps the oracle form unbiased
            seed=11,
        )


@pytest.mark.parametrize("method", ["local_ppi", "ppci", "strat_ppi", "lace", "naive"])
def test_recovers_profile_design_b(method: str, design_b_results) -> None:
    """Linear theta: local-linear, RKHS-localized and interpolated-strata fits are consistent."""
    bias, mcse = design_b_results[method]
    assert np.all(np.abs(bias) <= 4 * mcse + 0.006), (method, bias, mcse)


@pytest.fixture(scope="module")
def design_b_results():
    with threadpool_limits(limits=1):
        return monte_carlo(
            lambda rng: design_b(rng, 10_000, 2_500),
            0.3 + 0.4 * GRID_B,
            ["local_ppi", "ppci", "strat_ppi", "lace", "naive"],
            reps=20,
            kind="continuous",
            grid=GRID_B,
            seed=12,
        )


def test_plugin_judge_is_biased_under_misspecification() -> None:
    """The plug-in has no residual correction: a miscalibrated judge biases it (can fail)."""
    rng = np.random.default_rng(5)
    m = 20_000
    z = rng.integers(1, 4, m)
    y = (rng.random(m) < np.array([0.3, 0.5, 0.7])[z - 1]).astype(float)
    judge = y * np.array([2.0, 0.0, 2.0])[z - 1] + rng.standard_normal(m)  # useless at level 2
    frame = pd.DataFrame({"z": z, "judge": judge, "y": y})
    frame.loc[rng.permutation(m)[5_000:], "y"] = np.nan
    ctx, labeled = context(frame, signals=["judge"], kind="ordinal", primary="judge")
    fit = fit_plugin_judge(ctx, labeled, MethodOptions())
    assert abs(fit.estimate[1] - 0.5) > 0.05
    assert np.all(np.isnan(fit.var_pool))


# --------------------------------------------------------------------------------------------
# Identities
# --------------------------------------------------------------------------------------------
def continuous_frame() -> pd.DataFrame:
    return sim_frames.continuous_frame(m=800, n=240, seed=3)


SIGNALS = ["s1", "s2", "s3"]


def test_global_cv_is_lace_with_infinite_nuisance_bandwidth() -> None:
    frame = continuous_frame()
    glob = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="global_cv")
    wide = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="lace", nuisance_scale=1e6)
    inf = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="lace", nuisance_scale=np.inf)
    np.testing.assert_allclose(wide.estimate, glob.estimate, rtol=0, atol=1e-9)
    np.testing.assert_allclose(inf.estimate, glob.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(wide.se, glob.se, rtol=1e-7)


def test_per_signal_cv_is_lace_with_one_signal() -> None:
    frame = continuous_frame()
    per = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="per_signal_cv", primary="s2")
    one = sw.profile(frame, z="z", signals=["s2"], label="y", method="lace")
    np.testing.assert_allclose(per.estimate, one.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(per.se, one.se, rtol=1e-12)


def test_residual_only_is_lace_minus_the_pool_term() -> None:
    """LACE - residual_only = beta(z)' Sbar_T(z), with beta from a slow per-point solve."""
    frame = continuous_frame()
    lace = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="lace", ridge=0.3)
    resid = sw.profile(frame, z="z", signals=SIGNALS, label="y", method="residual_only", ridge=0.3)
    z = frame["z"].to_numpy()
    raw = frame[SIGNALS].to_numpy()
    s = (raw - raw.mean(0)) / raw.std(0)
    y = frame["y"].to_numpy()
    lab = ~np.isnan(y)
    h = lace.params["bandwidth"][0]
    pool_term = []
    for point in np.asarray(lace.z, dtype=float):
        k = np.exp(-0.5 * ((z - point) / h) ** 2)
        w_t, w_l = k / k.sum(), k[lab] / k[lab].sum()
        centred = s - w_t @ s
        sigma_ss = centred.T @ (w_t[:, None] * centred)
        sl, yl = s[lab], y[lab]
        sigma_sy = (sl - w_l @ sl).T @ (w_l * (yl - w_l @ yl))
        beta = np.linalg.solve(sigma_ss + 0.3 * np.eye(3), sigma_sy)
        pool_term.append(beta @ (w_t @ s))
    np.testing.assert_allclose(lace.estimate - resid.estimate, pool_term, rtol=0, atol=1e-10)
    assert np.all(np.isnan(resid.se))


# --------------------------------------------------------------------------------------------
# PPI++ (ppi_py) with one global group and a fixed predictor
# --------------------------------------------------------------------------------------------
def test_scalar_prediction_matches_ppi_py() -> None:
    """Frozen ppi_py values (tests/reference/make_ppi_reference.py).

    Mapping: ours is Ybar_L - eta (Pbar_L - Pbar_T), eta = Cov_L(P, Y) / Var_T(P) (1/size
    moments); ppi_py's PPI++ is Ybar_L - lam (Pbar_L - Pbar_U), lam = Cov_L / {(1 + n/N)
    Var_{L+U}(P)} with a ddof-1 variance over the M = n + N items. Since Pbar_L - Pbar_T =
    (N/M)(Pbar_L - Pbar_U), the estimators coincide at lam = eta N / M, and ppi_py's own lam equals
    eta (N/M)(M-1)/M: the point estimates differ by the O(1/M) ddof convention only. At ppi_py's
    lam rescaled to our convention ("matched") they are identical. The intervals are different
    estimators of the same asymptotic variance Var(Y - lam P)/n + lam^2 Var(P)/N: ours is the
    population-target linear-representation variance (finite-pool and degrees-of-freedom
    corrected, Var(P) taken through the labeled residuals), so they agree to a few percent only.
    """
    ref = json.loads(REFERENCE.read_text())
    y = np.asarray(ref["y"], dtype=float)
    prediction = np.asarray(ref["prediction"], dtype=float)
    labeled_mask = np.asarray(ref["labeled"], dtype=bool)
    m, n, big_n = ref["M"], ref["n"], ref["N"]
    frame = pd.DataFrame({"z": "all", "p": prediction, "y": np.where(labeled_mask, y, np.nan)})
    table = make_table(frame, z="z", signals=["p"], label="y", kind="categorical")
    ctx = build_context(table)
    labeled = LabeledSet.from_table(table)
    fit = fit_scalar_prediction(ctx, labeled, prediction)
    ours = float(fit.estimate[0])

    ybar = y[labeled_mask].mean()
    gap = prediction[labeled_mask].mean() - prediction.mean()
    eta = (ybar - ours) / gap
    assert 0 < ref["lam_ppi"] < 1  # not clipped, so the mapping below is exact
    np.testing.assert_allclose(eta * (big_n / m) * (m - 1) / m, ref["lam_ppi"], rtol=1e-10)
    np.testing.assert_allclose(ours, ref["estimate_matched"], rtol=0, atol=1e-12)
    assert abs(ours - ref["estimate_default"]) < 1e-4

    z95 = 1.959963984540054
    se_ppi = (ref["ci_matched"][1] - ref["ci_matched"][0]) / (2 * z95)
    se_ours = float(np.sqrt(fit.var_population[0]))
    assert se_ours == pytest.approx(se_ppi, rel=0.03)
    se_classical = (ref["ci_classical"][1] - ref["ci_classical"][0]) / (2 * z95)
    assert se_ours < se_classical  # the predictor helps in both implementations
    assert n + big_n == m


# --------------------------------------------------------------------------------------------
# Setting C (Appendix I.1): relative efficiencies
# --------------------------------------------------------------------------------------------
SETTING_C_METHODS = [
    "naive",
    "plugin_judge",
    "plugin_multi",
    "aug_plugin",
    "global_cv",
    "per_signal_cv",
    "residual_only",
    "scalar_pred_cv",
    "lace",
    "lace_oracle",
]
BUDGETS = (500, 1000, 1500)
#: Not part of the registry: plugin_multi with the category codes entered as one numeric column
#: (what "logistic regression on (Z, S)" does with Z in {1..10} taken as a number).
NUMERIC_Z = "plugin_multi (Z numeric)"


def _plugin_numeric_z(ctx: PoolContext, labeled: LabeledSet) -> np.ndarray:
    x = standardize_columns(np.column_stack([ctx.table.z, ctx.features]))
    p = pool_predictions(x, labeled.index, labeled.y, c=1.0)
    return np.asarray(prediction_moments(ctx, p).mean[:, 0])


def setting_c_mse(reps: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """MSE against theta(g) per replication, budget and method (nested budgets per draw)."""
    design = setting_c()
    names = [*SETTING_C_METHODS, NUMERIC_Z]
    rng = np.random.default_rng(seed)
    mse = np.zeros((reps, len(BUDGETS), len(names)))
    for r in range(reps):
        frame = design.draw(rng)
        table = make_table(frame, z="z", signals=design.signal_names, label="y", kind="categorical")
        ctx = build_context(table, primary="s1")
        order = rng.permutation(len(frame))
        y = frame["y"].to_numpy()
        for b, n in enumerate(BUDGETS):
            index = np.sort(order[:n])
            labeled = LabeledSet(index=index, y=y[index])
            options = MethodOptions(
                ridge=0.3, coef=design.oracle_coef(), rng=np.random.default_rng([seed, r, b])
            )
            for j, name in enumerate(SETTING_C_METHODS):
                estimate = METHODS[name].fit(ctx, labeled, options).estimate
                mse[r, b, j] = np.mean((estimate - design.theta) ** 2)
            mse[r, b, -1] = np.mean((_plugin_numeric_z(ctx, labeled) - design.theta) ** 2)
    return mse, names


def log_re(mse: np.ndarray, reference: int, other: int) -> tuple[np.ndarray, np.ndarray]:
    """log(mean MSE_reference / mean MSE_other) per budget and its paired delta-method SE."""
    a, b = mse[:, :, reference], mse[:, :, other]
    ma, mb = a.mean(axis=0), b.mean(axis=0)
    influence = a / ma - b / mb
    return np.log(ma / mb), influence.std(axis=0, ddof=1) / np.sqrt(a.shape[0])


@pytest.mark.slow
def test_setting_c_relative_efficiency() -> None:
    reps, seed = 200, 20260427
    start = time.perf_counter()
    mse, names = setting_c_mse(reps, seed)
    elapsed = time.perf_counter() - start
    naive = names.index("naive")
    lace = names.index("lace")
    lines = [
        f"Setting C, {reps} replications, seed {seed}, {elapsed:.0f} s",
        "| method | RE n=500 | RE n=1000 | RE n=1500 | MSE x 1e3 (500 / 1000 / 1500) |",
        "|---|---|---|---|---|",
    ]
    for j, name in enumerate(names):
        re = mse[:, :, naive].mean(axis=0) / mse[:, :, j].mean(axis=0)
        mean = mse[:, :, j].mean(axis=0) * 1e3
        lines.append(
            f"| {name} | "
            + " | ".join(f"{v:.3f}" for v in re)
            + " | "
            + " / ".join(f"{v:.3f}" for v in mean)
            + " |"
        )
    print("\n".join(lines))

    margin = 3.0  # Monte-Carlo standard errors of log RE
    for name in ("plugin_judge", NUMERIC_Z):
        value, se = log_re(mse, naive, names.index(name))
        assert np.all(value + margin * se < 0), (name, np.exp(value))
    feasible = [n for n in names if n not in ("lace", "lace_oracle", "naive")]
    for name in [*feasible, "naive"]:
        value, se = log_re(mse, names.index(name), lace)
        assert np.all(value - margin * se > 0), (name, np.exp(value))


# --------------------------------------------------------------------------------------------
# Errors and edge cases
# --------------------------------------------------------------------------------------------
def test_strat_ppi_needs_at_least_two_strata() -> None:
    frame = continuous_frame()
    with pytest.raises(
        ValueError, match=r"'strata_count' parameter of profile must be an integer >= 2"
    ):
        sw.profile(frame, z="z", signals=SIGNALS, label="y", method="strat_ppi", strata_count=1)


def test_strat_ppi_needs_one_dimensional_profile() -> None:
    frame = continuous_frame()
    frame["z2"] = np.random.default_rng(0).uniform(size=len(frame))
    with pytest.raises(ValueError, match=r"one-dimensional profile .* 2 profile columns"):
        sw.profile(frame, z=["z", "z2"], signals=SIGNALS, label="y", method="strat_ppi")


@pytest.mark.parametrize("method", ["local_ppi", "ppci", "strat_ppi"])
def test_ordered_methods_reject_categorical_profiles(method: str) -> None:
    frame = continuous_frame()
    frame["g"] = np.where(frame["z"] > 0.5, "a", "b")
    with pytest.raises(ValueError, match="needs an ordered profile"):
        sw.profile(frame, z="g", signals=SIGNALS, label="y", method=method, primary="s1")


@pytest.mark.parametrize("method", ["plugin_judge", "local_ppi"])
def test_primary_signal_is_required(method: str) -> None:
    frame = continuous_frame()
    with pytest.raises(ValueError, match="needs the primary judge signal"):
        sw.profile(frame, z="z", signals=SIGNALS, label="y", method=method)
    ctx, labeled = context(frame, signals=SIGNALS, kind="continuous")
    with pytest.raises(ValueError, match=rf"Method '{method}' needs the primary judge signal"):
        METHODS[method].fit(ctx, labeled, MethodOptions())


@pytest.mark.parametrize(
    "method", ["plugin_judge", "plugin_multi", "aug_plugin", "scalar_pred_cv", "local_ppi"]
)
def test_empty_neighbourhood_and_single_class_labels(method: str) -> None:
    """Labels only on levels 1-3, all 0: no crash; NaN where a method needs local labels."""
    rng = np.random.default_rng(4)
    m = 1_000
    z = rng.integers(1, 6, m)
    frame = pd.DataFrame(
        {"z": z, "s1": rng.normal(size=m), "s2": z + rng.normal(size=m), "y": np.nan}
    )
    frame.loc[(z <= 3) & (rng.random(m) < 0.3), "y"] = 0.0
    ctx, labeled = context(frame, signals=["s1", "s2"], kind="ordinal", primary="s1")
    fit = METHODS[method].fit(ctx, labeled, MethodOptions(rng=np.random.default_rng(0)))
    expected = np.zeros(3)
    if method == "local_ppi":  # the raw judge is not calibrated: mean_U(f) + mean_L(0 - f)
        lab = frame["y"].notna().to_numpy()
        s1 = frame["s1"].to_numpy()
        expected = np.array(
            [s1[~lab & (z == g)].mean() - s1[lab & (z == g)].mean() for g in (1, 2, 3)]
        )
    np.testing.assert_allclose(fit.estimate[:3], expected, atol=1e-12)
    if method.startswith("plugin"):
        np.testing.assert_allclose(fit.estimate[3:], 0.0, atol=1e-12)  # the global model
    else:
        assert np.all(np.isnan(fit.estimate[3:]))


def test_local_ppi_with_everything_labeled_is_the_local_linear_fit_of_y() -> None:
    """With U empty the prediction term falls back to L, so f cancels: LL_L[Y] (slow check)."""
    rng = np.random.default_rng(8)
    m = 300
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.3 + 0.4 * z).astype(float)
    frame = pd.DataFrame({"z": z, "judge": 5 * y + rng.normal(size=m), "y": y})
    ctx, labeled = context(frame, signals=["judge"], kind="continuous", primary="judge")
    fit = fit_local_ppi(ctx, labeled, MethodOptions())
    h = float(ctx.locality.bandwidth[0])
    expected = []
    for point in ctx.locality.grid[:, 0]:
        k = np.exp(-0.5 * ((z - point) / h) ** 2)
        design = np.column_stack([np.ones(m), z - point])
        coef = np.linalg.solve(design.T @ (k[:, None] * design), design.T @ (k * y))
        expected.append(coef[0])
    np.testing.assert_allclose(fit.estimate, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.var_pool, 0.0, atol=1e-15)


@pytest.mark.parametrize("method", ["aug_plugin", "scalar_pred_cv", "local_ppi", "ppci"])
def test_pool_variance_matches_label_draw_variance(method: str) -> None:
    """Mean reported var_pool over label draws of a fixed pool ~ the empirical variance.

    Half the pool is labeled (pi = 1/2), so dropping the finite-population factor (1 - pi) would
    double the reported variance and fail the [0.75, 1.33] band.
    """
    rng = np.random.default_rng(21)
    m, n, reps = 2_000, 1_000, 80
    frame = design_b(rng, m, m)
    y = frame["y"].to_numpy()
    ctx, _ = context(
        frame,
        signals=["judge", "other"],
        kind="continuous",
        primary="judge",
        grid=np.linspace(0.15, 0.85, 8),
    )
    estimates, variances = [], []
    for r in range(reps):
        index = np.sort(rng.permutation(m)[:n])
        fit = METHODS[method].fit(
            ctx, LabeledSet(index=index, y=y[index]), MethodOptions(rng=np.random.default_rng(r))
        )
        estimates.append(fit.estimate)
        variances.append(fit.var_pool)
    ratio = np.mean(variances) / np.mean(np.var(estimates, axis=0, ddof=1))
    assert 0.75 < ratio < 1.33, ratio
