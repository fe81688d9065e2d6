"""Summaries of matched-split studies: MSE, relative efficiency with Monte-Carlo intervals, bias,
coverage, and geometric-mean aggregation across cells (LACE paper, Section 5.3).

Relative efficiency of method m in a cell at budget n over B matched splits:

.. math::

    \\mathrm{RE} = \\bar{\\mathrm{MSE}}_{naive} / \\bar{\\mathrm{MSE}}_m .

Its 95% Monte-Carlo interval uses the paired split-level delta method on the log scale: with
a_r = MSE_{naive,r}, b_r = MSE_{m,r} and means a, b, the influence value of split r is
phi_r = a_r / a - b_r / b and se(log RE) = sd(phi) / sqrt(B).

Across C independent cells the aggregate is the geometric mean exp(mean_c log RE_c), with
variance sum_c se_c^2 / C^2. The *overall* column averages log RE over the nested budgets of a
cell first, with the split permutation as the joint resampling unit: its influence value is the
budget average of phi_{r,n}, so the covariances of the nested prefixes are included.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .. import _display as display
from .._display import Displayed
from .._typing import BoolArray, FloatArray, ObjectArray
from ..inference.bounded import interval_bounds
from ..results import critical_value


@dataclass(frozen=True, eq=False)
class CellStudy:
    """Raw outcome of a study on one cell.

    Attributes
    ----------
    name : str
    methods : tuple of str
    budgets : tuple of int
    z : ndarray of object, shape (G,)
        Grid points.
    truth : ndarray of shape (G,) or (reps, G)
        The target profile every fit is compared with (per split when the pool is redrawn).
    estimates, variances : ndarray of shape (n_methods, n_budgets, reps, G)
        Every fitted profile and its variance estimate for the study's target (NaN where the method
        has no variance formula or the neighbourhood is empty).
    dfs : ndarray of the same shape, optional
        Degrees of freedom of every interval (NaN: normal), as the methods report them.
    bounds : ndarray of the same shape, optional
        Bias bounds added to every interval's half-width (smoothed estimates; 0 elsewhere).
    naive_estimates, n_labeled_eff : ndarray of shape (n_budgets, reps, G), optional
        The gold-only mean and the labeled effective size of every labeled set.
    unit_labels : bool
        Every label lies in [0, 1]: the intervals are then the Wilson-type ones that
        :meth:`slicewise.ProfileResult.ci` reports by default (it needs the two arrays above).
    pool_n_eff : ndarray of shape (G,)
        Full-pool kernel effective sample size 1 / sum_T w_{i,T}(z)^2 (defines the sparse region).
    target : str
    n_pool : int
    """

    name: str
    methods: tuple[str, ...]
    budgets: tuple[int, ...]
    z: ObjectArray
    truth: FloatArray
    estimates: FloatArray
    variances: FloatArray
    pool_n_eff: FloatArray
    target: str
    n_pool: int
    params: Mapping[str, Any] = field(default_factory=dict)
    dfs: FloatArray | None = None
    bounds: FloatArray | None = None
    naive_estimates: FloatArray | None = None
    n_labeled_eff: FloatArray | None = None
    unit_labels: bool = False

    @property
    def reps(self) -> int:
        """Number of matched splits (or simulated pools)."""
        return int(self.estimates.shape[2])

    def restrict(self, points: np.ndarray) -> CellStudy:
        """The same study evaluated on a subset of grid points (boolean mask or indices)."""
        return CellStudy(
            name=self.name,
            methods=self.methods,
            budgets=self.budgets,
            z=self.z[points],
            truth=self.truth[points],
            estimates=self.estimates[..., points],
            variances=self.variances[..., points],
            pool_n_eff=self.pool_n_eff[points],
            target=self.target,
            n_pool=self.n_pool,
            params=self.params,
            dfs=None if self.dfs is None else self.dfs[..., points],
            bounds=None if self.bounds is None else self.bounds[..., points],
            naive_estimates=None
            if self.naive_estimates is None
            else self.naive_estimates[..., points],
            n_labeled_eff=None if self.n_labeled_eff is None else self.n_labeled_eff[..., points],
            unit_labels=self.unit_labels,
        )

    def covered(self, level: float) -> tuple[BoolArray, BoolArray]:
        """Whether each fit's interval at ``level`` contains the truth, and where it is defined.

        Both of shape (n_methods, n_budgets, reps, G). The intervals are those a result reports
        by default (:meth:`slicewise.ProfileResult.ci`): Wilson-type for labels in [0, 1] when
        the gold-only means are recorded, estimate +/- t se otherwise, each widened by its bias
        bound.
        """
        crit = critical_value(level, self.dfs)
        bound = 0.0 if self.bounds is None else self.bounds
        naive, n_lab = self.naive_estimates, self.n_labeled_eff
        if self.unit_labels and naive is not None and n_lab is not None:
            low, high = interval_bounds(
                self.estimates,
                np.sqrt(self.variances),
                crit,
                bound,
                naive_estimate=naive[None],
                n_labeled_eff=n_lab[None],
            )
        else:
            low, high = interval_bounds(self.estimates, np.sqrt(self.variances), crit, bound)
        valid = np.isfinite(low) & np.isfinite(high) & np.isfinite(self.truth)
        with np.errstate(invalid="ignore"):
            inside = (low <= self.truth) & (self.truth <= high)
        return inside & valid, valid


def unit_labels(y: FloatArray) -> bool:
    """True when every label lies in [0, 1] (intervals are then Wilson-type)."""
    return bool(np.all((y >= 0.0) & (y <= 1.0)))


def split_mse(cell: CellStudy) -> FloatArray:
    """Per-split profile MSE, shape (n_methods, n_budgets, reps).

    Grid points where the truth or the fit is NaN are omitted for that split; a split with no
    finite point gets NaN.
    """
    err = (cell.estimates - cell.truth) ** 2
    finite = np.isfinite(err)
    count = finite.sum(axis=-1)
    total = np.where(finite, err, 0.0).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def log_re_influence(naive: FloatArray, method: FloatArray) -> tuple[float, FloatArray]:
    """log RE and the per-split influence values phi_r (paired delta method).

    Splits where either MSE is NaN are dropped (their influence is set to NaN).
    """
    ok = np.isfinite(naive) & np.isfinite(method)
    a = naive[ok].mean()
    b = method[ok].mean()
    phi = np.full(naive.shape, np.nan)
    phi[ok] = naive[ok] / a - method[ok] / b
    return float(np.log(a / b)), phi


def _nanmean(values: FloatArray, *, axis: int) -> Any:
    """Mean over finite entries (NaN where there are none), without RuntimeWarnings."""
    finite = np.isfinite(values)
    count = finite.sum(axis=axis)
    total = np.where(finite, values, 0.0).sum(axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def _se(phi: FloatArray) -> float:
    ok = phi[np.isfinite(phi)]
    if ok.size < 2:
        return float("nan")
    return float(ok.std(ddof=1) / np.sqrt(ok.size))


@dataclass(frozen=True, eq=False, repr=False)
class StudyResult(Displayed):
    """Outcome of one or several cells of a matched-split study.

    Attributes
    ----------
    cells : tuple of CellStudy
    level : float
        Interval level used for coverage.
    """

    cells: tuple[CellStudy, ...]
    level: float = 0.95

    @classmethod
    def concat(cls, results: Sequence[StudyResult]) -> StudyResult:
        """Combine studies of different cells (same methods and budgets)."""
        cells = tuple(c for r in results for c in r.cells)
        methods = {c.methods for c in cells}
        budgets = {c.budgets for c in cells}
        if len(methods) > 1 or len(budgets) > 1:
            raise ValueError(
                "Studies can only be combined when every cell used the same methods and budgets; "
                f"got methods {sorted(methods)} and budgets {sorted(budgets)}."
            )
        names = [c.name for c in cells]
        if len(set(names)) != len(names):
            raise ValueError(f"Combined cells need unique names; got {names}.")
        return cls(cells=cells, level=results[0].level if results else 0.95)

    @property
    def methods(self) -> tuple[str, ...]:
        """Methods compared (naive first)."""
        return self.cells[0].methods

    @property
    def budgets(self) -> tuple[int, ...]:
        """Label budgets."""
        return self.cells[0].budgets

    def restrict(self, points: Literal["sparse"] = "sparse", *, k: int = 5) -> StudyResult:
        """Evaluate only on each cell's ``k`` grid points with the lowest pool effective size.

        This is the paper's sparse-region analysis (Appendix H.1); it uses no gold outcomes.
        """
        chosen = []
        for cell in self.cells:
            order = np.argsort(cell.pool_n_eff, kind="stable")[: min(k, cell.truth.size)]
            chosen.append(cell.restrict(np.sort(order)))
        return StudyResult(cells=tuple(chosen), level=self.level)

    def records(self) -> pd.DataFrame:
        """Tidy per-split table: cell, method, budget, rep, mse, covered (share of grid points)."""
        frames = []
        for cell in self.cells:
            mse = split_mse(cell)
            inside, valid = cell.covered(self.level)
            with np.errstate(invalid="ignore", divide="ignore"):
                covered = np.where(valid.sum(-1) > 0, inside.sum(-1) / valid.sum(-1), np.nan)
            m, b, r = np.meshgrid(
                np.arange(len(cell.methods)),
                np.arange(len(cell.budgets)),
                np.arange(cell.reps),
                indexing="ij",
            )
            frames.append(
                pd.DataFrame(
                    {
                        "cell": cell.name,
                        "method": np.asarray(cell.methods)[m.ravel()],
                        "budget": np.asarray(cell.budgets)[b.ravel()],
                        "rep": r.ravel(),
                        "mse": mse.ravel(),
                        "covered": covered.ravel(),
                    }
                )
            )
        return pd.concat(frames, ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """Per cell, method and budget: mean MSE, RE with its Monte-Carlo interval, bias, coverage.

        Columns: cell, method, budget, mean_mse, re, re_low, re_high, log_re_se, bias_rms,
        coverage, omitted (fits with a NaN grid point).
        """
        rows: list[dict[str, Any]] = []
        z95 = stats.norm.ppf(0.975)
        for cell in self.cells:
            mse = split_mse(cell)
            inside, valid = cell.covered(self.level)
            for m, method in enumerate(cell.methods):
                for b, budget in enumerate(cell.budgets):
                    log_re, phi = log_re_influence(mse[0, b], mse[m, b])
                    se = _se(phi)
                    err = cell.estimates[m, b] - cell.truth
                    bias = _nanmean(err, axis=0)
                    ok = valid[m, b]
                    coverage = float(inside[m, b][ok].mean()) if ok.any() else np.nan
                    rows.append(
                        {
                            "cell": cell.name,
                            "method": method,
                            "budget": budget,
                            "mean_mse": float(_nanmean(mse[m, b], axis=0)),
                            "re": float(np.exp(log_re)),
                            "re_low": float(np.exp(log_re - z95 * se)),
                            "re_high": float(np.exp(log_re + z95 * se)),
                            "log_re_se": se,
                            "bias_rms": float(np.sqrt(_nanmean(bias**2, axis=0))),
                            "coverage": coverage,
                            "omitted": int((~np.isfinite(cell.estimates[m, b])).any(-1).sum()),
                        }
                    )
        return pd.DataFrame(rows)

    def aggregate(self) -> pd.DataFrame:
        """Geometric-mean RE across cells per method and budget, plus the joint 'overall' column.

        Columns: method, budget ('overall' for the joint one), re, re_low, re_high, cells,
        below_one (cells whose RE interval lies entirely below 1).
        """
        z95 = stats.norm.ppf(0.975)
        per: dict[tuple[str, Any], list[tuple[float, float, float]]] = {}
        for cell in self.cells:
            mse = split_mse(cell)
            for m, method in enumerate(cell.methods):
                logs, phis = [], []
                for b, budget in enumerate(cell.budgets):
                    log_re, phi = log_re_influence(mse[0, b], mse[m, b])
                    se = _se(phi)
                    per.setdefault((method, budget), []).append((log_re, se, log_re + z95 * se))
                    logs.append(log_re)
                    phis.append(phi)
                joint = _nanmean(np.vstack(phis), axis=0)
                se_joint = _se(joint)
                per.setdefault((method, "overall"), []).append(
                    (float(np.mean(logs)), se_joint, float(np.mean(logs)) + z95 * se_joint)
                )
        rows = []
        for (method, budget), values in per.items():
            arr = np.array(values)
            mean_log = arr[:, 0].mean()
            se = np.sqrt(np.nansum(arr[:, 1] ** 2)) / arr.shape[0]
            rows.append(
                {
                    "method": method,
                    "budget": budget,
                    "re": float(np.exp(mean_log)),
                    "re_low": float(np.exp(mean_log - z95 * se)),
                    "re_high": float(np.exp(mean_log + z95 * se)),
                    "cells": arr.shape[0],
                    "below_one": int((arr[:, 2] < 0).sum()),
                }
            )
        return pd.DataFrame(rows)

    def table(self, *, fmt: Literal["markdown", "latex"] = "markdown", digits: int = 3) -> str:
        """Paper-style table: rows are methods, columns budgets and overall, entries RE [95% CI]."""
        agg = self.aggregate()
        columns = [*self.budgets, "overall"]
        header = ["Method", *[f"n = {c}" if c != "overall" else "Overall" for c in columns]]
        body = []
        for method in self.methods:
            cells = []
            for col in columns:
                row = agg[(agg["method"] == method) & (agg["budget"] == col)].iloc[0]
                cells.append(
                    f"{row['re']:.{digits}f} [{row['re_low']:.{digits}f}, {row['re_high']:.{digits}f}]"
                )
            body.append([method, *cells])
        if fmt == "latex":
            lines = [
                "\\begin{tabular}{l" + "c" * len(columns) + "}",
                "\\toprule",
                " & ".join(header) + " \\\\",
                "\\midrule",
                *[" & ".join(r).replace("_", "\\_") + " \\\\" for r in body],
                "\\bottomrule",
                "\\end{tabular}",
            ]
            return "\n".join(lines)
        lines = [
            "| " + " | ".join(header) + " |",
            "|" + "---|" * len(header),
            *["| " + " | ".join(r) + " |" for r in body],
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        """A readable report: what the study compares and its summary table."""
        return display.text(self)

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        title: str | None = None,
        context: Mapping[str, object] | None = None,
    ) -> str:
        """Write a self-contained HTML report to ``path`` (if given) and return its text."""
        return display.html(self, path, title=title, context=context)

    def plot_re(self, ax: Any = None) -> Any:
        """RE by budget per method (geometric mean across cells, with 95% MC intervals)."""
        return display.plot(self, ax=ax)
