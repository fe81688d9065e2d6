"""Sensitivity studies of the LACE paper's Appendix H.1 on the real-data cells.

Run from the repository root, after the main studies (``scripts.study_real`` with the same
``--cache``, whose results the sparse-region analysis reuses)::

    python -m scripts.sensitivity_real --stress psn_irt:difficulty,alpaca_eval:length,llmbar:length \\
        --sparse psn_irt:difficulty,alpaca_eval:length,llmbar:length --reps 40 --jobs 2 \\
        --cache /tmp/sw_cache --out docs/results/sensitivity/

* ``--stress``: the ridge x bandwidth grid (:func:`research.sensitivity.stress_grid`,
  Table 27) on each listed ``dataset:family`` (ordered profiles only), ``--reps`` splits;
* ``--sparse``: the main study of each listed family restricted to the five grid points with the
  lowest pool effective sample size (read from ``--cache``);
* ``--cv``: every feasible method with its tuning parameter chosen by within-L three-fold
  cross-validation in every split (:func:`research.sensitivity.cv_study`, Table 28),
  ``--cv-reps`` splits, compared with the fixed-parameter study on the same splits.

Writes CSVs under ``--out`` and the markdown report ``docs/results/sensitivity.md`` (with the text
of ``OUT/commentary.md``, when present, as its summary).
"""

from __future__ import annotations

import argparse
import pickle
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from research import realdata
from research.real_report import subset_methods
from research.sensitivity import (
    StressResult,
    chosen_parameters,
    cv_study,
    sparse_summary,
    stress_grid,
)
from research.stamp import stamp
from research.study_real import family_seed, feasible_methods
from slicewise.reports.markdown import markdown_table
from slicewise.studies.engine import study_cells
from slicewise.studies.summary import StudyResult


def _targets(text: str | None) -> list[tuple[str, str]]:
    if not text:
        return []
    out = []
    for item in text.split(","):
        dataset, _, family = item.strip().partition(":")
        if not family:
            raise ValueError(f"Expected DATASET:FAMILY, got {item!r}.")
        out.append((dataset, family))
    return out


def _family(dataset: str, family: str) -> tuple[realdata.RealData, realdata.Family]:
    data = realdata.load(dataset, families=[family])
    return data, data.family(family)


def _cached(cache: Path | None, key: str, compute: Any) -> tuple[Any, float]:
    path = None if cache is None else cache / "sensitivity" / f"{key}.pkl"
    if path is not None and path.exists():
        with path.open("rb") as handle:
            stored = pickle.load(handle)
        return stored["value"], stored["seconds"]
    start = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - start
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            pickle.dump({"value": value, "seconds": seconds}, handle)
    return value, seconds


def _grid_markdown(grid: pd.DataFrame) -> str:
    frame = grid.copy()
    frame.insert(0, "lambda \\ h/h0", [f"{r:g}" for r in frame.index])
    frame.columns = ["lambda \\ h/h0", *[f"{c:g}" for c in grid.columns]]
    return markdown_table(frame.reset_index(drop=True), digits=3)


def stress_section(name: str, result: StressResult, seconds: float, reps: int) -> list[str]:
    """Report lines of one family's stress grid."""
    minimum = result.cell_minimum()
    where = (
        minimum.groupby(["budget", "scale_at_min", "ridge_at_min"])
        .size()
        .rename("cells")
        .reset_index()
    )
    lines = [
        f"### {name}",
        "",
        f"{len(result.cells)} cell(s), {reps} matched splits, 25 configurations; wall time "
        f"{seconds / 60:.1f} min.",
        "",
        "Table-27 summary: distribution over cells of the cellwise minimum RE of LACE over the "
        "grid; counts of cells with some configuration below RE 1.",
        "",
        result.table(),
        "",
    ]
    for budget in (result.budgets[0], "overall"):
        lines += [
            f"Geometric-mean RE of LACE over the cells, n = {budget}:",
            "",
            _grid_markdown(result.grid(budget)),
            "",
        ]
    lines += [
        "Where each cell's minimum occurs (budget, h/h0, lambda, number of cells):",
        "",
        markdown_table(where, digits=3),
        "",
    ]
    return lines


def sparse_section(name: str, result: StudyResult) -> list[str]:
    """Report lines of one family's sparse-region analysis (every method)."""
    frame = sparse_summary(result, k=5)
    frame = frame[frame["method"] != "naive"].copy()
    frame["geo-mean RE [95% CI]"] = [
        f"{r.geo_re:.2f} [{r.geo_low:.2f}, {r.geo_high:.2f}]" for r in frame.itertuples()
    ]
    frame["cells RE < 1"] = [f"{r.below_one}/{r.cells}" for r in frame.itertuples()]
    frame["below beyond CI"] = [f"{r.below_ci}/{r.cells}" for r in frame.itertuples()]
    full = result.aggregate()
    frame["full-grid geo-mean RE"] = [
        float(full[(full["method"] == r.method) & (full["budget"] == r.budget)]["re"].iloc[0])
        for r in frame.itertuples()
    ]
    shown = frame[
        [
            "method",
            "budget",
            "median_re",
            "min_re",
            "geo-mean RE [95% CI]",
            "cells RE < 1",
            "below beyond CI",
            "full-grid geo-mean RE",
        ]
    ].rename(columns={"budget": "n", "median_re": "median RE", "min_re": "min RE"})
    return [f"### {name}", "", markdown_table(shown.reset_index(drop=True), digits=2), ""]


def cv_section(
    name: str, cv: StudyResult, fixed: StudyResult, seconds: float, reps: int
) -> list[str]:
    """Report lines of one family's within-L CV study and its fixed-parameter counterpart."""
    chosen = chosen_parameters(cv)
    modal = (
        chosen.sort_values("share", ascending=False)
        .groupby(["method", "budget"], sort=False)
        .head(1)
        .sort_values(["method", "budget"])
    )
    return [
        f"### {name}",
        "",
        f"{len(cv.cells)} cell(s), {reps} matched outer splits, three folds; wall time "
        f"{seconds / 60:.1f} min (CV and fixed).",
        "",
        "Within-L three-fold CV (every method's parameter selected in every split):",
        "",
        cv.table(),
        "",
        "Fixed parameters (paper defaults) on the same splits:",
        "",
        fixed.table(),
        "",
        "Most frequently selected value per method and budget (share of cells x splits):",
        "",
        markdown_table(modal.reset_index(drop=True), digits=2),
        "",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m scripts.sensitivity_real")
    parser.add_argument("--stress", default=None, help="DATASET:FAMILY,... for the stress grid")
    parser.add_argument("--sparse", default=None, help="DATASET:FAMILY,... for the sparse region")
    parser.add_argument("--cv", default=None, help="DATASET:FAMILY,... for the within-L CV study")
    parser.add_argument("--reps", type=int, default=40, help="splits of the stress grid (40)")
    parser.add_argument("--cv-reps", type=int, default=20, help="outer splits of the CV study")
    parser.add_argument("--cv-methods", default=None, help="methods of the CV study (default all)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--report", type=Path, default=Path("docs/results/sensitivity.md"))
    args = parser.parse_args(argv)
    argv_list = list(sys.argv[1:] if argv is None else argv)
    command = "python -m scripts.sensitivity_real " + " ".join(shlex.quote(a) for a in argv_list)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Sensitivity studies on the real-data cells (LACE paper, Appendix H.1)",
        "",
        stamp(command),
        "The sparse-region section reads the main studies' results from `--cache`: run "
        "`scripts.study_real` for those datasets with the same `--cache` first (commands in the "
        "per-dataset reports). Stress grid and CV results are cached there too.",
        "",
        "Cells and data decisions: see the per-dataset reports `study_<dataset>.md`. RE is LACE's "
        "(or each method's) mean MSE relative to the naive smoother on the same matched splits, "
        "against the realized full-pool profile.",
        "",
    ]
    commentary = args.out / "commentary.md"
    if commentary.exists():
        lines += ["## Summary", "", commentary.read_text().strip(), ""]
    stress = _targets(args.stress)
    if stress:
        lines += [
            "## Ridge x bandwidth stress grid (Table 27)",
            "",
            "lambda in {0.03, 0.1, 0.3, 1, 3} x h/h0 in {0.5, 0.75, 1, 1.5, 2}, b = h. At every "
            "bandwidth both LACE and naive use h and the target is the pool profile at h, so "
            "h != h0 changes the estimand (its resolution) as well as the local sample size. "
            "The splits are the first splits of the main study (same seed), so the default "
            "configuration (0.3, 1) reproduces the main study's LACE on those splits.",
            "",
        ]
    for dataset, name in stress:
        data, family = _family(dataset, name)
        key = f"stress_{dataset}_{name}_{args.reps}"
        print(f"stress grid {dataset}:{name} ...", flush=True)
        result, seconds = _cached(
            args.cache,
            key,
            lambda f=family, d=data: stress_grid(
                list(f.cells),
                budgets=d.budgets,
                reps=args.reps,
                rng=family_seed(args.seed, f.name),
                n_jobs=args.jobs,
            ),
        )
        result.frame().to_csv(args.out / f"{key}.csv", index=False)
        result.cell_minimum().to_csv(args.out / f"{key}_cells.csv", index=False)
        lines += stress_section(f"{dataset} / {name}", result, seconds, args.reps)
    sparse = _targets(args.sparse)
    if sparse:
        lines += [
            "## Sparse region (five grid points with the lowest pool n_eff)",
            "",
            "The main studies (same splits, every method) restricted to each cell's five grid "
            "points with the lowest full-pool kernel effective sample size (no gold outcome is "
            "used to choose them).",
            "",
        ]
    for dataset, name in sparse:
        path = None if args.cache is None else args.cache / dataset / f"{name}.pkl"
        if path is None or not path.exists():
            lines += [f"### {dataset} / {name}", "", "Main study not cached; skipped.", ""]
            continue
        with path.open("rb") as handle:
            result = pickle.load(handle)["result"]
        sparse_summary(result, k=5).to_csv(args.out / f"sparse_{dataset}_{name}.csv", index=False)
        lines += sparse_section(f"{dataset} / {name}", result)
    cv_targets = _targets(args.cv)
    if cv_targets:
        lines += [
            "## Within-L three-fold cross-validation (Table 28)",
            "",
            "Every method's tuning parameter is chosen inside every outer split by three-fold "
            "CV within L (outcome-balanced folds; held-out items stay unlabeled pool items; "
            "kernel-mass-weighted distance to the held-out h-smoothed gold profile; refit on "
            "all of L), using the registry's five-point grids; the fixed-parameter study uses "
            "the same splits.",
            "",
        ]
    for dataset, name in cv_targets:
        data, family = _family(dataset, name)
        requested = None if args.cv_methods is None else args.cv_methods.split(",")
        methods = feasible_methods(family, requested)
        key = f"cv_{dataset}_{name}_{args.cv_reps}_{'-'.join(methods)}"
        print(f"cv study {dataset}:{name} ...", flush=True)

        def compute(
            f: realdata.Family = family,
            d: realdata.RealData = data,
            methods: list[str] = methods,
        ) -> Any:
            rng_seed = family_seed(args.seed, f.name)
            cv = cv_study(
                list(f.cells),
                methods=methods,
                budgets=d.budgets,
                reps=args.cv_reps,
                rng=rng_seed,
                n_jobs=args.jobs,
            )
            fixed = study_cells(
                list(f.cells),
                methods=methods,
                budgets=d.budgets,
                reps=args.cv_reps,
                rng=family_seed(args.seed, f.name),
                n_jobs=args.jobs,
            )
            return cv, fixed

        (cv, fixed), seconds = _cached(args.cache, key, compute)
        stem = f"cv_{dataset}_{name}_{args.cv_reps}"
        cv.summary().to_csv(args.out / f"{stem}_summary.csv", index=False)
        chosen_parameters(cv).to_csv(args.out / f"{stem}_chosen.csv", index=False)
        common = [m for m in cv.methods if m in fixed.methods]
        lines += cv_section(
            f"{dataset} / {name}", cv, subset_methods(fixed, common), seconds, args.cv_reps
        )
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text("\n".join(lines))
    print(f"wrote {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
