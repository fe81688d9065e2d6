"""Smoothing rules scored on the kept direct fits of :mod:`research.smoothing_draws` (issue 29).

Scratch evaluator: loads every ``<dataset>__<family>__<cell>.npz`` of a folder, applies each
rule to every draw, and reports per family and budget the relative efficiency (geometric mean
over cells of mean gold-only MSE / mean MSE over slices), the mean coverage, the worst slice
with at least 20 expected labels (coverage, RMSE ratio to gold-only, |bias| / sd).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from slicewise.inference.bounded import interval_bounds
from slicewise.inference.variance import plus_two_variance
from slicewise.results import critical_value
from slicewise.smoothing.area import fit_area_model
from slicewise.smoothing.linear_mixed import AreaModel

MIN_LABELS = 20.0


def area_fit(
    direct: np.ndarray, psi: np.ndarray, cov: np.ndarray, model: str
) -> tuple[np.ndarray, ...] | None:
    obs = np.isfinite(direct) & np.isfinite(psi) & (psi > 0) & np.isfinite(cov)
    if obs.sum() < 4:
        return None
    cols = [np.ones(int(obs.sum()))]
    if np.ptp(cov[obs]) > 0:
        cols.append(cov[obs])
    am = AreaModel(
        y=direct[obs],
        psi=psi[obs],
        x=np.column_stack(cols),
        z=np.zeros((int(obs.sum()), 0)),
        column_level=np.zeros(0, dtype=np.intp),
        level_names=(),
    )
    if model == "t":
        est, sd, w = t_fit(am)
    else:
        fit = fit_area_model(am, model)  # type: ignore[arg-type]
        est, sd, w = fit.estimate, fit.se, fit.weight
    out = [np.full(direct.shape, np.nan) for _ in range(3)]
    out[0][obs], out[1][obs], out[2][obs] = est, sd, w
    return tuple(out)


_LAMBDA_NODES = 64


def t_fit(am: AreaModel, nu: float = 4.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empirical-Bayes Student-t random effect: v ~ sigma t_nu, as a scale mixture of normals.

    beta and sigma by maximum marginal likelihood (lambda integrated on Gamma quantiles);
    posterior mean, sd and mean shrinkage weight of each theta.
    """
    from scipy import optimize

    q = (np.arange(_LAMBDA_NODES) + 0.5) / _LAMBDA_NODES
    lam = stats.gamma.ppf(q, a=nu / 2.0, scale=2.0 / nu)
    y, psi, x = am.y, am.psi, am.x

    def parts(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        beta, s = theta[:-1], theta[-1]
        r = y - x @ beta
        tau2 = np.exp(2 * s) / lam  # (K,)
        var = psi[:, None] + tau2[None, :]
        logp = -0.5 * (np.log(2 * np.pi * var) + r[:, None] ** 2 / var)
        return r, var, logp

    def neg(theta: np.ndarray) -> float:
        _, _, logp = parts(theta)
        m = logp.max(axis=1, keepdims=True)
        ll = m[:, 0] + np.log(np.mean(np.exp(logp - m), axis=1))
        return -float(ll.sum())

    w0 = 1.0 / psi
    beta0 = np.linalg.lstsq(x * np.sqrt(w0)[:, None], y * np.sqrt(w0), rcond=None)[0]
    s0 = float(np.log(max(float(np.std(y - x @ beta0)), 1e-3)))
    best = None
    for start in (s0, s0 - 1.5, s0 - 3.0):
        res = optimize.minimize(
            neg,
            np.r_[beta0, start],
            method="Nelder-Mead",
            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000},
        )
        if best is None or res.fun < best.fun:
            best = res
    assert best is not None
    r, var, logp = parts(best.x)
    m = logp.max(axis=1, keepdims=True)
    p = np.exp(logp - m)
    p /= p.sum(axis=1, keepdims=True)
    tau2 = var - psi[:, None]
    gamma = tau2 / var  # weight of own estimate at each lambda
    fitted = x @ best.x[:-1]
    mean_k = fitted[:, None] + gamma * r[:, None]
    var_k = gamma * psi[:, None]
    mean = (p * mean_k).sum(axis=1)
    sd = np.sqrt(np.maximum((p * (var_k + mean_k**2)).sum(axis=1) - mean**2, 0.0))
    return mean, sd, (p * gamma).sum(axis=1)


def cva(t: np.ndarray, level: float = 0.95) -> np.ndarray:
    """1 - alpha quantile of |N(t, 1)| (the bias-aware critical value, AKP 2022 eq. 4)."""
    t = np.abs(np.asarray(t, dtype=np.float64))
    lo = np.full(t.shape, stats.norm.ppf(0.5 + level / 2))
    hi = lo + t + 0.0
    for _ in range(60):
        mid = (lo + hi) / 2
        cover = stats.norm.cdf(mid - t) - stats.norm.cdf(-mid - t)
        lo = np.where(cover < level, mid, lo)
        hi = np.where(cover < level, hi, mid)
    out: np.ndarray = hi
    return out


def load(
    folder: Path, dataset: str | None, reps: int | None = None
) -> list[tuple[str, str, str, dict[str, np.ndarray]]]:
    out = []
    for path in sorted(folder.glob("*.npz")):
        ds, fam, cell = path.stem.split("__")
        if dataset is not None and ds not in dataset.split(","):
            continue
        with np.load(path) as d:
            arrays = {k: d[k] for k in d.files}
        if reps is not None:
            arrays = {k: v[:, :reps] if v.ndim == 3 else v for k, v in arrays.items()}
        out.append((ds, fam, cell, arrays))
    return out


Draws = dict[str, np.ndarray]
#: estimate, lower, upper, se and df of one draw
Fitted = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
Rule = Callable[[Draws, int, int, dict[Any, Any]], Fitted]


def score(
    data: list[tuple[str, str, str, dict[str, np.ndarray]]], rules: dict[str, Rule]
) -> pd.DataFrame:
    """One row per (rule, dataset, family, cell, budget, slice)."""
    rows = []
    for ds, fam, cell, d in data:
        budgets = d["budgets"]
        truth = d["truth"]
        share = d["pool_n"] / d["pool_n"].sum()
        for b, budget in enumerate(budgets):
            reps = d["direct"].shape[1]
            cache: dict[str, Any] = {}
            results = {
                name: [rule(d, b, r, cache) for r in range(reps)] for name, rule in rules.items()
            }
            naive = d["naive"][b]
            naive_err = naive - truth
            for name, res in results.items():
                est = np.array([x[0] for x in res])
                low = np.array([x[1] for x in res])
                high = np.array([x[2] for x in res])
                err = est - truth
                inside = (low <= truth) & (truth <= high)
                for g in range(truth.size):
                    ok = np.isfinite(err[:, g]) & np.isfinite(naive_err[:, g])
                    if ok.sum() < 2:
                        continue
                    e, en = err[ok, g], naive_err[ok, g]
                    diff = e**2 - en**2
                    rows.append(
                        {
                            "rule": name,
                            "dataset": ds,
                            "family": fam,
                            "cell": cell,
                            "budget": int(budget),
                            "z": str(d["z"][g]),
                            "expected": float(budget * share[g]),
                            "coverage": float(np.mean(inside[ok, g])),
                            "bias": float(e.mean()),
                            "sd": float(e.std(ddof=1)),
                            "mse": float(np.mean(e**2)),
                            "mse_naive": float(np.mean(en**2)),
                            "worse": bool(diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(diff.size)),
                            "width": float(np.nanmean(high[ok, g] - low[ok, g])),
                        }
                    )
    return pd.DataFrame(rows)


def summarise(slices: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (rule, ds, fam, budget), part in slices.groupby(
        ["rule", "dataset", "family", "budget"], sort=False
    ):
        big = part[part["expected"] >= MIN_LABELS]
        per_cell = part.groupby("cell")[["mse", "mse_naive"]].mean()
        re = per_cell["mse_naive"] / per_cell["mse"]
        ratio = np.sqrt(big["mse"] / big["mse_naive"])
        bz = big["bias"].abs() / big["sd"]
        out.append(
            {
                "rule": rule,
                "dataset": ds,
                "family": fam,
                "budget": budget,
                "re": float(np.exp(np.mean(np.log(re)))),
                "total_mse": float(part["mse"].sum()),
                "cov": float(part["coverage"].mean()),
                "worst_cov": float(part["coverage"].min()),
                "n20": len(big),
                "worst_cov20": float(big["coverage"].min()) if len(big) else np.nan,
                "max_rmse20": float(ratio.max()) if len(big) else np.nan,
                "max_rmse_all": float(np.sqrt(part["mse"] / part["mse_naive"]).max()),
                "worse20": int(big["worse"].sum()),
                "max_bias_sd20": float(bz.max()) if len(big) else np.nan,
                "width": float(part["width"].mean()),
            }
        )
    return pd.DataFrame(out)


# ---------------------------------------------------------------- rules


def _wilson(
    d: dict[str, np.ndarray],
    b: int,
    r: int,
    est: np.ndarray,
    se: np.ndarray,
    df: np.ndarray,
    bound: np.ndarray | float = 0.0,
    crit: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    q = critical_value(0.95, df) if crit is None else crit
    return interval_bounds(
        est, se, q, bound, naive_estimate=d["naive"][b, r], n_labeled_eff=d["n_eff"][b, r]
    )


def rule_direct(d: Draws, b: int, r: int, cache: dict[Any, Any]) -> Fitted:
    est, se, df = d["direct"][b, r], np.sqrt(d["direct_var"][b, r]), d["direct_df"][b, r]
    lo, hi = _wilson(d, b, r, est, se, df)
    return est, lo, hi, se, df


def rule_default(d: Draws, b: int, r: int, cache: dict[Any, Any]) -> Fitted:
    est, se, df = d["default"][b, r], np.sqrt(d["default_var"][b, r]), d["default_df"][b, r]
    lo, hi = _wilson(d, b, r, est, se, df, d["default_bound"][b, r])
    return est, lo, hi, se, df


def _fitted(
    d: Draws, b: int, r: int, cache: dict[Any, Any], model: str
) -> tuple[np.ndarray, ...] | None:
    key = (model, r)
    if key not in cache:
        cache[key] = area_fit(d["direct"][b, r], d["psi"][b, r], d["covariate"][b, r], model)
    out: tuple[np.ndarray, ...] | None = cache[key]
    return out


def make_ensemble(model: str) -> Rule:
    def rule(d: Draws, b: int, r: int, cache: dict[Any, Any]) -> Fitted:
        fit = _fitted(d, b, r, cache, model)
        if fit is None:
            return rule_direct(d, b, r, cache)
        est, sd, _ = fit
        est = np.where(np.isfinite(est), est, d["direct"][b, r])
        sd = np.where(np.isfinite(sd), sd, np.sqrt(d["direct_var"][b, r]))
        df = np.full(est.shape, np.nan)
        lo, hi = _wilson(d, b, r, est, sd, df)
        return est, lo, hi, sd, df

    return rule


def make_lt(
    model: str,
    c: float,
    interval: str = "hull",
    rho: float | None = None,
    n0: float = 10.0,
    taper: float | None = None,
    taper_all: bool = True,
) -> Rule:
    """Limited translation: the direct estimate moved toward the smoothed one by at most c se.

    Slices with fewer than ``n0`` effective labels take the smoothed estimate (cap inf).
    interval 'hull': the interval of the point widened by the realised shift (contains the
    direct interval); 'aware': bias-aware around the point with the bias bound c se (cva);
    'direct': the slice's own interval. rho: the cap per slice is min(c, sqrt(max(rho^2 g - 1,
    0))) se with g the realised gain naive_var / direct_var. taper a: the shift is scaled by
    clip(2 - |direct - m| / (a se), 0, 1), m the model's regression value (|smoothed - direct|
    / (1 - w)): a slice further than a se from the regression borrows less, beyond 2a nothing
    (capped slices only unless ``taper_all``).
    """

    def rule(d: Draws, b: int, r: int, cache: dict[Any, Any]) -> Fitted:
        fit = _fitted(d, b, r, cache, model)
        direct = d["direct"][b, r]
        se = np.sqrt(d["direct_var"][b, r])
        df = d["direct_df"][b, r]
        if fit is None:
            return rule_direct(d, b, r, cache)
        # as the product: a slice with one label gets the plus-two se (methods.smoothed)
        plus_two = plus_two_variance(d["n_eff"][b, r], np.clip(direct, 0.0, 1.0))
        fraction = np.clip(np.nan_to_num(d["fraction"][b, r]), 0.0, 1.0)
        se = np.where(np.isfinite(se), se, np.sqrt((1.0 - fraction) * plus_two))
        smooth = fit[0]
        cap = np.full(direct.shape, c)
        if rho is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                g = d["naive_var"][b, r] / d["direct_var"][b, r]
                cap = np.minimum(cap, np.sqrt(np.maximum(rho**2 * g - 1.0, 0.0)))
            cap = np.where(np.isfinite(cap), cap, 0.0)
        cap = np.where(d["n_eff"][b, r] < n0, np.inf, cap)
        ok = np.isfinite(smooth) & np.isfinite(se)
        with np.errstate(invalid="ignore"):
            shift = np.where(ok, np.clip(smooth - direct, -cap * se, cap * se), 0.0)
        if taper is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                away = np.abs(smooth - direct) / np.maximum(1.0 - fit[2], 1e-12) / se
                factor = np.clip(2.0 - away / taper, 0.0, 1.0)
            factor = np.where(np.isfinite(factor), factor, 1.0)
            if not taper_all:
                factor = np.where(np.isfinite(cap), factor, 1.0)
            shift = shift * factor
        nose = np.isfinite(smooth) & ~np.isfinite(se)
        est = np.where(nose, smooth, direct + shift)
        if interval == "direct":
            lo, hi = _wilson(d, b, r, direct, se, df)
        elif interval == "hull":
            lo, hi = _wilson(d, b, r, est, se, df, np.abs(shift))
        else:
            crit = (
                cva(np.where(np.isfinite(cap), cap, 0.0))
                * critical_value(0.95, df)
                / stats.norm.ppf(0.975)
            )
            lo, hi = _wilson(
                d, b, r, est, se, df, np.where(np.isfinite(cap), 0.0, np.abs(shift)), crit=crit
            )
        if nose.any():
            lo2, hi2 = _wilson(d, b, r, smooth, fit[1], np.full(est.shape, np.nan))
            lo, hi = np.where(nose, lo2, lo), np.where(nose, hi2, hi)
        return est, lo, hi, se, df

    return rule


RULES: dict[str, Rule] = {
    "direct": rule_direct,
    "default": rule_default,
    "ens-pps": make_ensemble("pp-s"),
    "guard-pps": make_lt("pp-s", 0.0),
    **{f"lt{c}-pps": make_lt("pp-s", c) for c in (0.2, 0.3, 0.35, 0.5, 0.75, 1.0, 1.5)},
    **{f"lt{c}-t": make_lt("t", c) for c in (0.3, 0.5, 1.0)},
    "lt0.5-pps-aware": make_lt("pp-s", 0.5, "aware"),
    "lt0.5-pps-directci": make_lt("pp-s", 0.5, "direct"),
    "rho1.0-pps": make_lt("pp-s", 3.0, rho=1.0),
    "rho1.1-pps": make_lt("pp-s", 3.0, rho=1.1),
    "rho1.1-t": make_lt("t", 3.0, rho=1.1),
    "nocap-pps": make_lt("pp-s", np.inf),
    "rd0.5-1.5-pps": make_lt("pp-s", 0.5, taper=1.5),
    "rd0.5-1.5c-pps": make_lt("pp-s", 0.5, taper=1.5, taper_all=False),
    "rd0.6-1.2-pps": make_lt("pp-s", 0.6, taper=1.2),
    "rd0.4-2.0-pps": make_lt("pp-s", 0.4, taper=2.0),
}


def frontier(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per rule over every family and budget: the total MSE relative to the direct
    estimate's (geometric mean over families and budgets), the worst slice with at least 20
    expected labels (RMSE ratio to gold-only, |bias| / sd, coverage) and the mean coverage."""
    base = summary[summary["rule"] == "direct"].set_index(["dataset", "family", "budget"])
    rows = []
    for rule, part in summary.groupby("rule", sort=False):
        part = part.set_index(["dataset", "family", "budget"])
        ratio = part["total_mse"] / base.loc[part.index, "total_mse"]
        rows.append(
            {
                "rule": rule,
                "total_mse_vs_direct": float(np.exp(np.mean(np.log(ratio)))),
                "re_geomean": float(np.exp(np.mean(np.log(part["re"])))),
                "worst_rmse_ratio20": float(part["max_rmse20"].max()),
                "worst_bias_sd20": float(part["max_bias_sd20"].max()),
                "worst_cov20": float(part["worst_cov20"].min()),
                "mean_cov": float(part["cov"].mean()),
            }
        )
    return pd.DataFrame(rows)


#: Plot names of the rules; the rest keep their key.
PLOT_NAMES = {
    "direct": "direct (no smoothing)",
    "default": "round-2 default (guard)",
    "ens-pps": "ensemble: PP-S as published",
    "nocap-pps": "PP-S, hull interval",
    "guard-pps": "guard: no shrinkage at >= 10 labels",
}


def _plot_name(rule: str) -> str:
    if rule in PLOT_NAMES:
        return PLOT_NAMES[rule]
    if rule.startswith("lt") and rule.endswith("-pps"):
        return f"limited translation c={rule[2:-4]}"
    if rule.startswith("lt") and rule.endswith("-t"):
        return f"Student-t effects, c={rule[2:-2]}"
    if rule.startswith("rd"):
        return f"redescending taper {rule[2:].removesuffix('-pps')}"
    return rule


def plot_frontier(table: pd.DataFrame, path: Path, chosen: str) -> None:
    """Total MSE against the worst slice's RMSE ratio and bias, one point per rule.

    Each point carries a number, and the key under the plot names its rules: rules that land on
    the same point (the same estimates with other intervals) share a number.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = ["total_mse_vs_direct", "worst_rmse_ratio20", "worst_bias_sd20"]
    groups = list(
        table.assign(**{c: table[c].round(3) for c in columns})
        .sort_values("total_mse_vs_direct", ascending=False)
        .groupby(columns, sort=False)["rule"]
    )
    fig, axes = plt.subplots(1, 2, figsize=(12, 6.2), constrained_layout=True)
    for ax, column, label in (
        (axes[0], "worst_rmse_ratio20", "worst slice's RMSE / its gold-only RMSE"),
        (axes[1], "worst_bias_sd20", "worst slice's |bias| / sd"),
    ):
        for number, (values, rules) in enumerate(groups, start=1):
            y, point = values[0], dict(zip(columns, values, strict=True))[column]
            special = chosen in set(rules)
            ax.scatter(
                point,
                y,
                s=90 if special else 30,
                color="crimson" if special else "steelblue",
                zorder=3 if special else 2,
            )
            ax.annotate(
                str(number),
                (point, y),
                textcoords="offset points",
                xytext=(5, 3 if number % 2 else -9),
                fontsize=8,
                fontweight="bold" if special else "normal",
            )
        ax.set_xlabel(label + " (slices with >= 20 expected labels)")
        ax.set_ylabel("total MSE / direct estimate's (geometric mean)")
        ax.grid(alpha=0.3)
    axes[0].axvline(1.1, color="grey", ls="--", lw=1)
    axes[1].axvline(0.35, color="grey", ls="--", lw=1)
    key = [
        f"{number}: "
        + " / ".join(_plot_name(r) + (" (chosen)" if r == chosen else "") for r in rules)
        for number, (_, rules) in enumerate(groups, start=1)
    ]
    half = (len(key) + 1) // 2
    fig.text(0.02, 0.0, "\n".join(key[:half]), fontsize=8, va="top", ha="left")
    fig.text(0.52, 0.0, "\n".join(key[half:]), fontsize=8, va="top", ha="left")
    fig.suptitle(
        "Smoothing rules on the real families: total error against the worst slice"
        " (dashed: issue 29's per-slice limits)"
    )
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--dataset", default=None)
    parser.add_argument("--rules", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--slices", default=None, help="reuse a slices CSV written by --out")
    parser.add_argument("--plot", default=None, help="write the frontier plot here")
    parser.add_argument("--chosen", default="lt0.3-pps")
    parser.add_argument("--reps", type=int, default=None, help="use the first N draws")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.slices:
        slices = pd.read_csv(args.slices)
    else:
        data = load(Path(args.folder), args.dataset, args.reps)
        rules = RULES if args.rules is None else {k: RULES[k] for k in args.rules.split(",")}
        slices = score(data, rules)
    if args.out:
        slices.to_csv(args.out, index=False)
    summary = summarise(slices)
    table = frontier(summary)
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(summary.round(3).to_string(index=False))
        print()
        print(table.round(3).to_string(index=False))
    if args.plot:
        plot_frontier(table, Path(args.plot), args.chosen)


if __name__ == "__main__":
    main()
