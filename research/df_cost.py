"""What the fourth-moment degrees of freedom of ``auto`` cost in interval width, per real family.

Run from the repository root::

    python -m research.df_cost --reps 10 --cells 2 --out docs/results/generated/df_cost.md

For every dataset of :mod:`research.realdata`, every family, the first ``--cells`` cells and the
dataset's budgets, ``auto`` is fitted on the same matched label draws
(:func:`slicewise.studies.engine.study_cells`, seed 0) twice: as shipped, and with
:func:`slicewise.inference.cv_variance.fourth_moment_df` returning the normal-theory degrees
of freedom it is given (patched in :mod:`slicewise.methods.borrowing`). Estimates and se are the
same; the table gives, over slices and draws, the mean and the largest ratio of the t
half-widths t_{df} x se (shipped over normal theory), the share of slice-draws whose degrees of
freedom dropped and their mean degrees of freedom both ways. Intervals for labels in [0, 1] are
Wilson-type around the estimate (:mod:`slicewise.inference.bounded`), whose width moves with the
same critical value.
"""

from __future__ import annotations

import numpy as np

from slicewise.results import critical_value

from .patched_cost import main as cost_main
from .patched_cost import paired_studies


def _normal(resid: object, weights: object, df_normal: np.ndarray, **_: object) -> np.ndarray:
    return df_normal


def family_rows(dataset: str, reps: int, cells: int) -> list[dict[str, object]]:
    """One row per family and budget of ``dataset``."""
    rows: list[dict[str, object]] = []
    for family, budgets, shipped_run, normal_run in paired_studies(
        dataset,
        reps,
        cells,
        callers=("slicewise.methods.borrowing",),
        name="fourth_moment_df",
        replacement=_normal,
    ):
        for b, budget in enumerate(budgets):
            ratios, dfs, dfs_normal = [], [], []
            for new, old in zip(shipped_run.cells, normal_run.cells, strict=True):
                m = new.methods.index("auto")
                assert new.dfs is not None
                assert old.dfs is not None
                np.testing.assert_array_equal(new.estimates[m, b], old.estimates[m, b])
                with np.errstate(divide="ignore", invalid="ignore"):
                    ratio = critical_value(0.95, new.dfs[m, b]) / critical_value(
                        0.95, old.dfs[m, b]
                    )
                ratios.append(np.asarray(ratio).ravel())
                dfs.append(new.dfs[m, b].ravel())
                dfs_normal.append(old.dfs[m, b].ravel())
            ratio, df, df0 = (np.concatenate(v) for v in (ratios, dfs, dfs_normal))
            ok = np.isfinite(ratio)
            rows.append(
                {
                    "dataset": dataset,
                    "family": family.name,
                    "budget": budget,
                    "cells": len(shipped_run.cells),
                    "slice_draws": int(ok.sum()),
                    "mean_width_ratio": float(ratio[ok].mean()) if ok.any() else np.nan,
                    "max_width_ratio": float(ratio[ok].max()) if ok.any() else np.nan,
                    "df_dropped_share": float((df[ok] < df0[ok] - 1e-9).mean())
                    if ok.any()
                    else np.nan,
                    "mean_df": float(df[ok].mean()) if ok.any() else np.nan,
                    "mean_df_normal": float(df0[ok].mean()) if ok.any() else np.nan,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> None:
    cost_main(
        argv,
        module="df_cost",
        title="The fourth-moment degrees of freedom's cost: auto's t half-width over the "
        "normal-theory one",
        family_rows=family_rows,
        doc=__doc__ or "",
    )


if __name__ == "__main__":
    main()
