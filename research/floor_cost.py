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

import numpy as np

from .patched_cost import main as cost_main
from .patched_cost import paired_studies

#: Modules that call the floor by name.
CALLERS = ("slicewise.inference.variance", "slicewise.methods.borrowing")


def _off(naive: np.ndarray, n_eff: np.ndarray) -> np.ndarray:
    return np.zeros(np.shape(naive))


def family_rows(dataset: str, reps: int, cells: int) -> list[dict[str, object]]:
    """One row per family and budget of ``dataset``."""
    rows: list[dict[str, object]] = []
    for family, budgets, on_run, off_run in paired_studies(
        dataset, reps, cells, callers=CALLERS, name="residual_floor", replacement=_off
    ):
        for b, budget in enumerate(budgets):
            ratios = []
            for on, off in zip(on_run.cells, off_run.cells, strict=True):
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
                    "cells": len(on_run.cells),
                    "slice_draws": ratio.size,
                    "mean_se_ratio": float(ratio.mean()) if ratio.size else np.nan,
                    "max_se_ratio": float(ratio.max()) if ratio.size else np.nan,
                    "floored_share": float((ratio > 1.0 + 1e-9).mean()) if ratio.size else np.nan,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    cost_main(
        argv,
        module="floor_cost",
        title="The residual floor's cost: auto's se with the floor over without it",
        family_rows=family_rows,
        doc=__doc__ or "",
    )


if __name__ == "__main__":
    main()
