"""What the residual floor costs in interval width, per real family (issue 11).

Run from the repository root::

    python -m research.floor_cost --reps 10 --cells 2 --out docs/results/generated/floor_cost.md

For every dataset of :mod:`research.realdata`, every family, the first ``--cells`` cells and the
dataset's budgets, ``auto`` is fitted on the same matched label draws
(:func:`slicewise.studies.engine.study_cells`, seed 0) twice: as shipped, and with
:func:`slicewise.estimators.centered.residual_floor` returning 0 (the floor off, patched in the
modules that call it). Estimates are the same; the table gives, over slices and draws, the mean
and the largest ratio of the reported standard errors (floor on / off) and the share of
slice-draws where the floor is reached.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from slicewise.reports.markdown import markdown_table
from slicewise.studies.engine import study_cells

from . import realdata
from .stamp import stamp

#: Modules that call the floor by name.
CALLERS = ("slicewise.inference.variance", "slicewise.methods.borrowing")


def _set_floor(function: Callable[..., np.ndarray]) -> None:
    for name in CALLERS:
        sys.modules[name].residual_floor = function  # type: ignore[attr-defined]


def _off(naive: np.ndarray, n_eff: np.ndarray) -> np.ndarray:
    return np.zeros(np.shape(naive))


def family_rows(dataset: str, reps: int, cells: int) -> list[dict[str, object]]:
    """One row per family and budget of ``dataset``."""
    for name in CALLERS:
        importlib.import_module(name)
    shipped = sys.modules[CALLERS[0]].residual_floor
    data = realdata.load(dataset)
    rows: list[dict[str, object]] = []
    for family in data.families:
        specs = list(family.cells)[:cells]
        runs = {}
        for state, function in (("on", shipped), ("off", _off)):
            _set_floor(function)
            try:
                runs[state] = study_cells(
                    specs, methods=("naive", "auto"), budgets=data.budgets, reps=reps, rng=0
                )
            finally:
                _set_floor(shipped)
        for b, budget in enumerate(data.budgets):
            ratios = []
            for on, off in zip(runs["on"].cells, runs["off"].cells, strict=True):
                m = on.methods.index("auto")
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratios.append(np.sqrt(on.variances[m, b] / off.variances[m, b]).ravel())
            ratio = np.concatenate(ratios)
            ratio = ratio[np.isfinite(ratio)]
            rows.append(
                {
                    "dataset": dataset,
                    "family": family.name,
                    "budget": budget,
                    "cells": len(specs),
                    "slice_draws": ratio.size,
                    "mean_se_ratio": float(ratio.mean()) if ratio.size else np.nan,
                    "max_se_ratio": float(ratio.max()) if ratio.size else np.nan,
                    "floored_share": float((ratio > 1.0 + 1e-9).mean()) if ratio.size else np.nan,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(sorted(realdata.BUILDERS)))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--cells", type=int, default=2)
    parser.add_argument("--out", default="docs/results/generated/floor_cost.md")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for dataset in args.datasets.split(","):
        rows.extend(family_rows(dataset, args.reps, args.cells))
        print(f"{dataset} done", flush=True)
    table = pd.DataFrame(rows)
    text = stamp("python -m research.floor_cost " + " ".join(argv))
    text += "\n\n# The residual floor's cost: auto's se with the floor over without it\n\n"
    text += markdown_table(table, digits=3) + "\n"
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
