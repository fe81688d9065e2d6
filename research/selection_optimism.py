"""Calibration of ``auto``'s reported se conditionally on its choice (issue 11, UniEval by system).

Run from the repository root::

    python -m research.selection_optimism --reps 1000 --budget 200

Draws exactly the label splits of ``python -m research.per_slice --dataset unieval`` (family
``system``; the first ``reps`` of them) and fits on each the gold-only mean, ``auto`` and the
fixed candidate ``signals, kappa = 16`` (cross-fitted, not compared with naive). Reports, over
all draws and over the draws in which ``auto`` left the gold-only mean, each method's coverage
(the default intervals), RMS reported se and RMS error per system: the reported variance is
calibrated if the two agree.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from slicewise.data.table import make_table
from slicewise.inference.bounded import interval_bounds
from slicewise.methods.base import LabeledSet, MethodFit, labeled_sizes
from slicewise.methods.borrowing import choose_and_fit
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.results import critical_value
from slicewise.studies.engine import matched_splits, pool_profile

from . import realdata


def fit_interval(
    fit: MethodFit, naive: MethodFit, n_labeled_eff: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fit's se and the bounds of its 95% interval, as ``sw.profile`` prints them."""
    se = np.sqrt(fit.var_pool)
    low, high = interval_bounds(
        fit.estimate,
        se,
        critical_value(0.95, fit.df),
        0.0 if fit.bias_bound is None else fit.bias_bound,
        naive_estimate=naive.estimate,
        n_labeled_eff=n_labeled_eff,
    )
    return se, low, high


def draws(reps: int, budget: int) -> pd.DataFrame:
    """One row per (draw, method, system): estimate error, reported se, covered, auto's choice."""
    data = realdata.load("unieval", families=["system"])
    spec = data.families[0].cells[0]
    budgets = data.budgets
    items = make_table(
        spec.table, z=spec.z, signals=list(spec.signals), label=spec.label, kind=spec.kind
    )
    ctx = build_context(items, grid=None, bandwidth=None, primary=spec.primary)
    y = np.asarray(items.label, dtype=np.float64)
    truth = pool_profile(ctx, y)
    # the generator of research.per_slice's first (only) cell of the family
    generator = np.random.default_rng(0).spawn(1)[0]
    seeds, orders = matched_splits(generator, reps, items.n_pool)
    rows = []
    with threadpool_limits(limits=1):
        for r, (order, seed) in enumerate(zip(orders, seeds, strict=True)):
            child = seed.spawn(len(budgets))[budgets.index(budget)]  # as fit_splits spawns
            options = MethodOptions(rng=np.random.default_rng(child))
            index = np.sort(order[:budget])
            labeled = LabeledSet(index=index, y=y[index])
            n_lab = labeled_sizes(ctx, labeled)[0]
            naive = METHODS["naive"].fit(ctx, labeled, options)
            fits: dict[str, MethodFit] = {
                "naive": naive,
                "auto": METHODS["auto"].fit(ctx, labeled, options),
                "kappa16": choose_and_fit(
                    ctx,
                    labeled,
                    replace(options, shrinkage=16.0),
                    families=("signals",),
                    include_naive=False,
                    method="kappa16",
                    cross_fitted=True,
                ),
            }
            for name, fit in fits.items():
                se, low, high = fit_interval(fit, naive, n_lab)
                for g, label in enumerate(ctx.locality.labels):
                    rows.append(
                        {
                            "draw": r,
                            "method": name,
                            "system": str(label),
                            "error": fit.estimate[g] - truth[g],
                            "se": se[g],
                            "covered": bool(low[g] <= truth[g] <= high[g]),
                            "width": high[g] - low[g],
                            "signals": fits["auto"].params.get("chosen") != "naive",
                        }
                    )
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Coverage, RMS se, RMS error and mean width per method, system and subset of draws."""
    parts = []
    for subset, part in (("all draws", frame), ("auto chose signals", frame[frame["signals"]])):
        for (method, system), group in part.groupby(["method", "system"]):
            parts.append(_row(subset, str(method), str(system), group))
        for method, group in part.groupby("method"):
            parts.append(_row(subset, str(method), "all systems", group))
    return pd.DataFrame(parts)


def _row(subset: str, method: str, system: str, group: pd.DataFrame) -> dict[str, object]:
    return {
        "draws": subset,
        "method": method,
        "system": system,
        "n": int(group["draw"].nunique()),
        "coverage": float(group["covered"].mean()),
        "rms_se": float(np.sqrt(np.mean(group["se"] ** 2))),
        "rms_error": float(np.sqrt(np.mean(group["error"] ** 2))),
        "width": float(group["width"].mean()),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--budget", type=int, default=200, choices=(50, 100, 200))
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    table = summary(draws(args.reps, args.budget))
    with pd.option_context("display.width", 200, "display.max_rows", 200):
        print(table.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
