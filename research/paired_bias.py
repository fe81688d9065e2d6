"""Bias of ``auto`` against the gold-only mean's on the same draws, for chosen cells (issue 11).

Run from the repository root::

    python -m research.paired_bias --dataset alpaca_eval --family length \\
        --cells claude-2.1/length,claude/length,gpt-3.5-turbo-1106/length --reps 200

Refits the named cells of one family of :mod:`research.per_slice` on exactly its label draws
(each cell keeps the child seed it has in the full family) and prints, per slice with at least 20
labels in expectation: auto's bias in Monte-Carlo standard errors, the gold-only mean's, and the
paired difference auto - gold-only in its own Monte-Carlo standard errors. A slice flagged for
auto whose gold-only mean is biased the same way on the same draws, with a small paired
difference, was flagged by the luck of the draws, not by the method.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from slicewise.studies.engine import run_spec

from . import realdata
from .per_slice import MIN_LABELS


def _z(values: np.ndarray) -> np.ndarray:
    """Mean over draws in Monte-Carlo standard errors, per slice."""
    sd = values.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(values.mean(axis=0) / (sd / np.sqrt(values.shape[0])))


def paired_bias(dataset: str, family: str, names: list[str], reps: int) -> pd.DataFrame:
    """One row per (cell, budget, slice) with at least 20 expected labels."""
    data = realdata.load(dataset, families=[family])
    cells = list(data.families[0].cells)
    known = [c.name for c in cells]
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"Unknown cells {unknown} of {dataset}/{family}; cells: {known}.")
    children = np.random.default_rng(0).spawn(len(cells))  # study_cells(rng=0) of per_slice
    rows = []
    for i, spec in enumerate(cells):
        if spec.name not in names:
            continue
        job = {"methods": ("naive", "auto"), "budgets": data.budgets, "reps": reps}
        # what study_cells runs for cell i, with the same generator
        cell = run_spec((spec, {**job, "rng": children[i]})).cells[0]
        share = cell.pool_n_eff / cell.n_pool
        for b, budget in enumerate(cell.budgets):
            err_auto = cell.estimates[1, b] - cell.truth
            err_naive = cell.estimates[0, b] - cell.truth
            z_auto, z_naive = _z(err_auto), _z(err_naive)
            z_diff = _z(err_auto - err_naive)
            for g in np.flatnonzero(budget * share >= MIN_LABELS):
                rows.append(
                    {
                        "cell": spec.name,
                        "budget": budget,
                        "z": str(cell.z[g]),
                        "truth": float(cell.truth[g]),
                        "bias_auto": float(err_auto[:, g].mean()),
                        "bias_z_auto": float(z_auto[g]),
                        "bias_naive": float(err_naive[:, g].mean()),
                        "bias_z_naive": float(z_naive[g]),
                        "diff_z": float(z_diff[g]),
                        "sd_ratio": float(err_naive[:, g].std() / err_auto[:, g].std()),
                    }
                )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=sorted(realdata.BUILDERS))
    parser.add_argument("--family", required=True)
    parser.add_argument("--cells", required=True, help="comma-separated cell names")
    parser.add_argument("--reps", type=int, default=200)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    table = paired_bias(args.dataset, args.family, args.cells.split(","), args.reps)
    flagged = table[table["bias_z_auto"].abs() > 3]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(flagged.round(4).to_string(index=False))
        print(
            f"\n{len(table)} slices with >= {MIN_LABELS:g} expected labels; |bias z| > 3: auto "
            f"{len(flagged)}, gold-only {int((table['bias_z_naive'].abs() > 3).sum())}, "
            f"paired difference {int((table['diff_z'].abs() > 3).sum())}"
        )


if __name__ == "__main__":
    main()
