"""Why ``auto`` undercovers on the paper's Setting B under uniform labeling (issue 11).

Run from the repository root::

    python -m research.setting_b_coverage --reps 200
    python -m research.setting_b_coverage --reps 200 --study

``--study`` runs :func:`slicewise.sw.study` (matched label splits, ``rng=0``) with naive, paper
LACE and ``auto`` on the same pools, the draws behind the numbers quoted in issue 11 and
docs/results/adaptive.md, and prints coverage per level, RMS se over the error's sd, the MSE,
the mean t half-width and the mean degrees of freedom.

On fixed pools of Setting B (:func:`slicewise.studies.paper_designs.setting_b` with 5 levels of
1,000 items; pool seed s draws the pool with ``np.random.default_rng(s)``), simple random
samples of ``budget`` labels (draw r with ``np.random.default_rng([s, budget, r])``) are fitted
with the gold-only mean, paper LACE, ``auto`` and ``auto``'s candidates fitted alone (no
selection, cross-fitted as ``auto`` reports them). Per level and method: coverage of the
default 95% intervals, RMS reported se over the Monte-Carlo sd of the error, bias in
Monte-Carlo standard errors; for ``auto`` also which candidate it chose. Truth: the pool's level
means.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet, MethodFit, labeled_sizes
from slicewise.methods.borrowing import choose_and_fit
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.results import critical_value
from slicewise.studies.paper_designs import setting_b

from .selection_optimism import fit_interval

#: Candidates of ``auto`` fitted alone: (name, families, shrinkage).
FIXED = (
    ("learned_pooled", ("learned",), np.inf),
    ("learned+signals_pooled", ("learned+signals",), np.inf),
    ("signals_local", ("signals",), 0.0),
)


def fits(
    ctx: object, labeled: LabeledSet, options: MethodOptions, methods: tuple[str, ...]
) -> dict[str, MethodFit]:
    """Every method's fit on one labeled set."""
    out: dict[str, MethodFit] = {}
    for name in methods:
        if name in METHODS:
            out[name] = METHODS[name].fit(ctx, labeled, options)  # type: ignore[arg-type]
            continue
        _, families, kappa = next(f for f in FIXED if f[0] == name)
        out[name] = choose_and_fit(
            ctx,  # type: ignore[arg-type]
            labeled,
            replace(options, shrinkage=kappa, nuisance_scale=1.0),
            families=families,
            include_naive=False,
            method=name,
            cross_fitted=True,
        )
    return out


def draws(
    pool_seed: int, budget: int, reps: int, methods: tuple[str, ...], per_level: int = 1000
) -> pd.DataFrame:
    """One row per (draw, method, level): error, reported se, covered, auto's choice."""
    design = setting_b(per_level)
    frame = design.draw(np.random.default_rng(pool_seed))
    items = make_table(frame, z="z", signals=design.signal_names, label="y", kind="ordinal")
    ctx = build_context(items)
    y = np.asarray(items.label, dtype=np.float64)
    z = np.asarray(items.z[:, 0])
    truth = np.array([y[z == level].mean() for level in ctx.locality.grid[:, 0]])
    rows = []
    with threadpool_limits(limits=1):
        for r in range(reps):
            rng = np.random.default_rng([pool_seed, budget, r])
            index = np.sort(rng.choice(items.n_pool, budget, replace=False))
            labeled = LabeledSet(index=index, y=y[index])
            options = MethodOptions(rng=np.random.default_rng([pool_seed, budget, r, 1]))
            n_lab = labeled_sizes(ctx, labeled)[0]
            fitted = fits(ctx, labeled, options, ("naive", *methods))
            naive = fitted["naive"]
            chosen = str(fitted["auto"].params.get("chosen")) if "auto" in fitted else ""
            for name, fit in fitted.items():
                se, low, high = fit_interval(fit, naive, n_lab)
                for g in range(truth.size):
                    rows.append(
                        {
                            "pool": pool_seed,
                            "budget": budget,
                            "draw": r,
                            "method": name,
                            "level": g + 1,
                            "error": fit.estimate[g] - truth[g],
                            "se": se[g],
                            "covered": bool(low[g] <= truth[g] <= high[g]),
                            "auto_chose": chosen,
                        }
                    )
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage, RMS se / MC sd of the error, bias z and RMSE per pool, budget, method, level."""
    out = []
    keys = ["pool", "budget", "method"]
    for key, group in frame.groupby(keys):
        for level, part in [("all", group), *group.groupby("level")]:
            err = part["error"].to_numpy()
            reps = part["draw"].nunique()
            sd = (
                err.std(ddof=1)
                if level != "all"
                else np.sqrt(part.groupby("level")["error"].var().mean())
            )
            out.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "level": level,
                    "coverage": float(part["covered"].mean()),
                    "se_over_sd": float(np.sqrt(np.mean(part["se"] ** 2)) / sd),
                    "bias_z": float(err.mean() / (err.std(ddof=1) / np.sqrt(err.size)))
                    if level != "all"
                    else np.nan,
                    "rmse": float(np.sqrt(np.mean(err**2))),
                    "reps": reps,
                }
            )
    return pd.DataFrame(out)


def study_rows(pool_seed: int, budget: int, reps: int, per_level: int = 1000) -> list[str]:
    """``sw.study`` with naive, lace and auto on one pool: one printed line per method."""
    import slicewise as sw

    design = setting_b(per_level)
    frame = design.draw(np.random.default_rng(pool_seed))
    res = sw.study(
        frame, z="z", kind="ordinal", label="y", signals=design.signal_names,
        methods=["lace", "auto"], budgets=[budget], reps=reps, rng=0,
    )  # fmt: skip
    cell = res.cells[0]
    inside, valid = cell.covered(0.95)
    coverage = inside.sum(axis=2) / valid.sum(axis=2)
    err = cell.estimates - cell.truth
    lines = []
    for m, name in enumerate(cell.methods):
        sd2 = err[m, 0].var(axis=0, ddof=1)
        variance = cell.variances[m, 0]
        dfs = None if cell.dfs is None else cell.dfs[m, 0]
        half = critical_value(0.95, dfs) * np.sqrt(variance)
        lines.append(
            f"pool {pool_seed} n {budget} {name}: coverage {coverage[m, 0].mean():.3f} "
            f"(levels {np.array2string(coverage[m, 0], precision=3)}), "
            f"rms se / sd {np.sqrt(variance.mean() / sd2.mean()):.3f}, "
            f"MSE {np.mean(err[m, 0] ** 2):.3g}, mean half-width {np.mean(half):.5f}, "
            f"mean df {np.mean(dfs) if dfs is not None else np.inf:.1f}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--pools", default="1:550,2:550,1:1000", help="seed:budget,...")
    parser.add_argument(
        "--methods", default="lace,auto,learned_pooled", help="besides naive (always fitted)"
    )
    parser.add_argument("--csv", default=None, help="write the per-draw rows here")
    parser.add_argument("--study", action="store_true", help="sw.study's draws (rng=0)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.study:
        for spec in args.pools.split(","):
            seed, budget = (int(v) for v in spec.split(":"))
            print("\n".join(study_rows(seed, budget, args.reps)), flush=True)
        return
    methods = tuple(args.methods.split(","))
    parts = []
    for spec in args.pools.split(","):
        seed, budget = (int(v) for v in spec.split(":"))
        parts.append(draws(seed, budget, args.reps, methods))
    frame = pd.concat(parts, ignore_index=True)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(summary(frame).round(4).to_string(index=False))
        auto = frame[(frame["method"] == "auto") & (frame["level"] == 1)]
        if not auto.empty:
            print(auto.groupby(["pool", "budget"])["auto_chose"].value_counts().to_string())


if __name__ == "__main__":
    main()
