"""``auto`` against the simpler named methods ``lace`` and ``global_cv`` on the same draws (issue 29).

Run from the repository root::

    python -m research.auto_vs_named --dataset llmbar --reps 200 --out docs/results/auto_vs_named

For every family (continuous ones included), cell and budget of a dataset
(:mod:`research.realdata`), ``naive``, ``auto``, ``lace`` and ``global_cv`` are fitted on the
matched label splits of :func:`slicewise.studies.engine.study_cells` (the draws of
``research.per_slice`` with the same seed). Per family and budget: each method's
geometric-mean relative efficiency over cells (mean MSE of naive over the method's, across
the grid), and ``auto`` against the better of ``lace`` and ``global_cv`` (the one with the
higher geometric-mean RE on these draws): the geometric mean over cells of
MSE_best / MSE_auto with its Monte-Carlo standard error (the paired split-level delta method
on the log scale of :func:`slicewise.studies.summary.log_re_influence`, summed over the
independent cells), and z = log(ratio) / se. ``auto`` loses beyond Monte-Carlo error where
z < -2. The same draws give each method's per-slice validity (the columns of
:mod:`research.per_slice`, files ``<dataset>_slices.csv`` and ``<dataset>_validity.csv``), so
what ``lace`` and ``global_cv`` pay for their efficiency (the bias of a coefficient fitted on
the labels it adjusts) stands beside ``auto``'s.
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
from slicewise.studies.summary import StudyResult, log_re_influence, split_mse

from . import realdata
from .per_slice import family_summary, slice_table
from .stamp import stamp

METHODS = ("naive", "auto", "lace", "global_cv")


def family_rows(result: StudyResult, dataset: str, family: str) -> list[dict[str, object]]:
    """One row per budget: every method's RE and auto against the better named method."""
    rows: list[dict[str, object]] = []
    for b, budget in enumerate(result.budgets):
        logs: dict[str, list[float]] = {m: [] for m in METHODS[1:]}
        pair: dict[str, list[tuple[float, float]]] = {m: [] for m in ("lace", "global_cv")}
        for cell in result.cells:
            mse = split_mse(cell)  # (methods, budgets, reps)
            naive = mse[cell.methods.index("naive"), b]
            auto = mse[cell.methods.index("auto"), b]
            for m in METHODS[1:]:
                logs[m].append(
                    float(np.log(np.nanmean(naive) / np.nanmean(mse[cell.methods.index(m), b])))
                )
            for m in pair:
                other = mse[cell.methods.index(m), b]
                log_ratio, phi = log_re_influence(other, auto)  # log(mean other / mean auto)
                se = float(np.nanstd(phi, ddof=1) / np.sqrt(np.isfinite(phi).sum()))
                pair[m].append((log_ratio, se))
        re = {m: float(np.exp(np.mean(v))) for m, v in logs.items()}
        best = max(("lace", "global_cv"), key=lambda m: re[m])
        ratios = np.array(pair[best])
        log_mean = float(ratios[:, 0].mean())
        se = float(np.sqrt(np.sum(ratios[:, 1] ** 2)) / len(ratios))
        rows.append(
            {
                "dataset": dataset,
                "family": family,
                "budget": budget,
                "cells": len(result.cells),
                **{f"re_{m}": re[m] for m in METHODS[1:]},
                "best_named": best,
                "auto_vs_best": float(np.exp(log_mean)),
                "z": log_mean / se if se > 0 else 0.0,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=sorted(realdata.BUILDERS))
    parser.add_argument("--families", default=None, help="comma-separated; default all")
    parser.add_argument("--budgets", default=None, help="comma-separated; default the dataset's")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="docs/results/auto_vs_named")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    data = realdata.load(
        args.dataset, families=None if args.families is None else args.families.split(",")
    )
    budgets = (
        data.budgets if args.budgets is None else tuple(int(b) for b in args.budgets.split(","))
    )
    start = time.perf_counter()
    rows: list[dict[str, object]] = []
    slices: list[pd.DataFrame] = []
    for family in data.families:
        result = study_cells(
            list(family.cells),
            methods=METHODS,
            budgets=budgets,
            reps=args.reps,
            rng=args.seed,
            n_jobs=args.jobs,
        )
        rows.extend(family_rows(result, args.dataset, family.name))
        slices.extend(
            slice_table(cell, family.name, method=m).assign(method=m)
            for cell in result.cells
            for m in METHODS[1:]
        )
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"{args.dataset}.csv", index=False)
    # the per-slice validity of auto on the same draws (research.per_slice's columns)
    per_slice = pd.concat(slices, ignore_index=True)
    per_slice.insert(0, "dataset", args.dataset)
    per_slice.to_csv(out / f"{args.dataset}_slices.csv", index=False)
    validity = pd.concat(
        [
            family_summary(part).assign(method=m)
            for m, part in per_slice.groupby("method", sort=False)
        ],
        ignore_index=True,
    )
    validity.insert(0, "dataset", args.dataset)
    validity.to_csv(out / f"{args.dataset}_validity.csv", index=False)
    text = stamp("python -m research.auto_vs_named " + " ".join(argv))
    text += f"\n\n{time.perf_counter() - start:.0f} s\n\n" + markdown_table(table, digits=3) + "\n"
    text += "\nPer-slice validity of each method on the same draws:\n\n"
    text += markdown_table(validity, digits=3) + "\n"
    (out / f"{args.dataset}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
