"""Per-slice validity of the default (``auto``) on the real datasets (issue 11).

Run from the repository root::

    python -m research.per_slice --dataset llmbar --reps 100 --out docs/results/per_slice

For every family of cells of a dataset (:mod:`research.realdata`), every cell and every budget,
``auto`` and the gold-only mean (``naive``) are fitted on the same matched label splits
(:func:`slicewise.studies.engine.study_cells`) and compared per slice (grid point) with the
realized full-pool profile:

* coverage of the reported 95% intervals (bias bounds of smoothed slices included);
* bias in Monte-Carlo standard errors, sd(err) / sqrt(reps);
* RMSE against the gold-only RMSE of the same slice, with a paired Monte-Carlo test of the MSE
  difference ("worse beyond MC error": mean(err_auto^2 - err_naive^2) > 2 MC standard errors);
* labels in expectation: budget x (the slice's share of the pool, by Kish's effective size).

The per-family table reports the mean coverage, the worst slice with at least 20 labels in
expectation, and how many such slices are biased by more than 3 MC standard errors or worse than
gold-only beyond MC error (``naive_biased_20``: how many of them the gold-only mean itself is
biased in by more than 3 MC standard errors on the same draws, the chance rate of the flag);
also the geometric-mean relative efficiency over cells (mean MSE of naive over auto across the
grid, as in docs/results/auto.md). ``--gold-only`` fits the gold-only mean alone (fast) and
writes ``<dataset>_gold_only*`` files whose columns all describe it; ``--method lace`` describes
another method in place of ``auto`` (files ``<dataset>_lace*``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from slicewise.reports.markdown import markdown_table
from slicewise.studies.engine import study_cells
from slicewise.studies.summary import CellStudy

from . import realdata
from .stamp import stamp

MIN_LABELS = 20.0


def slice_table(
    cell: CellStudy, family: str, level: float = 0.95, method: str = "auto"
) -> pd.DataFrame:
    """One row per (budget, slice) of one cell: coverage, bias, RMSE against gold-only.

    ``method`` is the method described (``auto``; ``naive`` for the gold-only mean's own flags
    on the same draws, ``--gold-only``); the gold-only columns describe naive on the same draws.
    """
    m_auto, m_naive = cell.methods.index(method), cell.methods.index("naive")
    rows = []
    share = cell.pool_n_eff / cell.n_pool
    inside, _ = cell.covered(level)
    for b, budget in enumerate(cell.budgets):
        err_a = cell.estimates[m_auto, b] - cell.truth
        err_n = cell.estimates[m_naive, b] - cell.truth
        for g in range(err_a.shape[1]):
            ea, en = err_a[:, g], err_n[:, g]
            ok = np.isfinite(ea) & np.isfinite(en)
            if ok.sum() < 2:
                continue
            ea, en = ea[ok], en[ok]
            in_a, in_n = inside[m_auto, b, ok, g], inside[m_naive, b, ok, g]
            diff = ea**2 - en**2
            mcse = float(ea.std(ddof=1) / np.sqrt(ea.size))
            mcse_n = float(en.std(ddof=1) / np.sqrt(en.size))
            rows.append(
                {
                    "family": family,
                    "cell": cell.name,
                    "budget": budget,
                    "z": str(cell.z[g]),
                    "expected_labels": float(budget * share[g]),
                    "reps": int(ok.sum()),
                    "coverage": float(np.mean(in_a)),
                    "coverage_naive": float(np.mean(in_n)),
                    "bias": float(ea.mean()),
                    "sd": float(ea.std(ddof=1)),
                    "bias_z": float(ea.mean() / mcse) if mcse > 0 else 0.0,
                    "bias_naive": float(en.mean()),
                    "bias_z_naive": float(en.mean() / mcse_n) if mcse_n > 0 else 0.0,
                    "rmse_auto": float(np.sqrt(np.mean(ea**2))),
                    "rmse_naive": float(np.sqrt(np.mean(en**2))),
                    "worse": bool(diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(diff.size)),
                }
            )
    return pd.DataFrame(rows)


def family_summary(slices: pd.DataFrame) -> pd.DataFrame:
    """Per family and budget: mean coverage, the worst slice with >= 20 expected labels, counts
    of biased / worse slices among those, and the geometric-mean RE over cells."""
    out = []
    for (family, budget), part in slices.groupby(["family", "budget"], sort=False):
        big = part[part["expected_labels"] >= MIN_LABELS]
        mse = part.assign(a=part["rmse_auto"] ** 2, n=part["rmse_naive"] ** 2)
        per_cell = mse.groupby("cell")[["a", "n"]].mean()
        re = np.asarray(per_cell["n"] / per_cell["a"], dtype=np.float64)
        worst = big.iloc[int(np.argmin(big["coverage"].to_numpy()))] if len(big) else None
        out.append(
            {
                "family": family,
                "budget": budget,
                "cells": part["cell"].nunique(),
                "slices": len(part),
                "re_geomean": float(np.exp(np.mean(np.log(re)))),
                "mean_coverage": float(part["coverage"].mean()),
                "naive_mean_coverage": float(part["coverage_naive"].mean()),
                "slices_20": len(big),
                "worst_coverage_20": float(worst["coverage"]) if worst is not None else np.nan,
                "worst_slice": f"{worst['cell']} / {worst['z']}" if worst is not None else "",
                "biased_20": int((big["bias_z"].abs() > 3).sum()),
                "naive_biased_20": int((big["bias_z_naive"].abs() > 3).sum()),
                "worse_20": int(big["worse"].sum()),
                "max_rmse_ratio_20": float((big["rmse_auto"] / big["rmse_naive"]).max())
                if len(big)
                else np.nan,
                "max_bias_sd_20": float((big["bias"].abs() / big["sd"]).max())
                if len(big) and "sd" in big
                else np.nan,
                "worst_coverage_all": float(part["coverage"].min()),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=sorted(realdata.BUILDERS))
    parser.add_argument("--families", default=None, help="comma-separated; default all")
    parser.add_argument("--cells", type=int, default=None, help="first N cells per family")
    parser.add_argument("--budgets", default=None, help="comma-separated; default the dataset's")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/results/per_slice")
    parser.add_argument(
        "--method",
        default="auto",
        help="the method described beside the gold-only mean (files *_<method>* unless auto)",
    )
    parser.add_argument(
        "--gold-only",
        action="store_true",
        help="fit the gold-only mean alone on the same draws (its own flags; files *_gold_only*)",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    families = None if args.families is None else args.families.split(",")
    data = realdata.load(args.dataset, families=families)
    budgets = (
        data.budgets if args.budgets is None else tuple(int(b) for b in args.budgets.split(","))
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables: list[pd.DataFrame] = []
    start = time.perf_counter()
    for family in data.families:
        cells = list(family.cells)[: args.cells]
        result = study_cells(
            cells,
            methods=("naive",) if args.gold_only else ("naive", args.method),
            budgets=budgets,
            reps=args.reps,
            rng=args.seed,
            n_jobs=args.jobs,
        )
        method = "naive" if args.gold_only else args.method
        tables.extend(slice_table(cell, family.name, method=method) for cell in result.cells)
    slices: pd.DataFrame = pd.concat(tables, ignore_index=True)
    slices.insert(0, "dataset", args.dataset)
    summary = family_summary(slices)
    summary.insert(0, "dataset", args.dataset)
    suffix = "_gold_only" if args.gold_only else "" if args.method == "auto" else f"_{args.method}"
    name = args.dataset + suffix
    slices.to_csv(out / f"{name}_slices.csv", index=False)
    summary.to_csv(out / f"{name}_summary.csv", index=False)
    text = stamp("python -m research.per_slice " + " ".join(argv))
    text += (
        f"\n\n{time.perf_counter() - start:.0f} s\n\n" + markdown_table(summary, digits=3) + "\n"
    )
    (out / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
