"""Sensitivity studies of the LACE paper's Appendix H.1 on matched label splits.

* :func:`stress_grid`: the ridge x bandwidth stress grid (Table 27). LACE is fitted at every
  lambda in {0.03, 0.1, 0.3, 1, 3} and every profile bandwidth h = s h0, s in {0.5, 0.75, 1, 1.5,
  2}, with the nuisance bandwidth b = h, and compared with the naive smoother at the same h
  against the realized full-pool profile at that h (so the target changes with h).
* :func:`cv_study`: within-L K-fold cross-validation of every method's tuning parameter inside
  every outer split (Table 28), the selection rule of :func:`slicewise.select`.
* :func:`sparse_region`: the study restricted to each cell's grid points with the lowest pool
  effective sample size (the sparse-region analysis; it uses no gold outcomes).

Every study here draws its splits exactly as :func:`slicewise.studies.engine.study` does
(:func:`~slicewise.studies.engine.matched_splits`), so with the same ``rng`` all configurations and
the plain study see the same labeled sets; pool-side sums are computed once per cell and
bandwidth (one :class:`~slicewise.methods.base.PoolContext` per bandwidth) and shared by every
ridge value, budget and split.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from slicewise._typing import TARGETS, FloatArray, Target
from slicewise._validation import check_choice, check_level, check_positive_int, check_rng
from slicewise.data.folds import balanced_folds
from slicewise.data.table import ItemTable, make_table
from slicewise.methods.base import LabeledSet, MethodFit, PoolContext
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context, check_method_needs
from slicewise.selection.cv import MIN_PER_FOLD, fold_scores
from slicewise.studies.engine import (
    CellSpec,
    SplitFits,
    _check_study_args,
    fit_splits,
    matched_splits,
    pool_profile,
)
from slicewise.studies.summary import CellStudy, StudyResult, unit_labels

#: Ridge penalties of the stress grid (LACE paper, Appendix H.1).
RIDGES = (0.03, 0.1, 0.3, 1.0, 3.0)
#: Profile bandwidths of the stress grid as multiples h / h0.
BANDWIDTH_SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)
#: The paper's default configuration (lambda, h / h0).
DEFAULT_CONFIG = (0.3, 1.0)

_T = TypeVar("_T")
_R = TypeVar("_R")


# --------------------------------------------------------------------------------------------
# shared preparation
# --------------------------------------------------------------------------------------------


def _items(spec: CellSpec, func: str) -> ItemTable:
    """Validated, fully labeled table of a cell."""
    items = make_table(
        spec.table,
        z=spec.z,
        signals=list(spec.signals),
        label=spec.label,
        kind=spec.kind,
        func=func,
    )
    if items.n_labeled != items.n_pool:
        raise ValueError(
            f"A {func} needs fully labeled cells, but label column '{spec.label}' of cell "
            f"'{spec.name}' is missing on {items.n_pool - items.n_labeled} of {items.n_pool} rows."
        )
    return items


def _cell_study(
    spec: CellSpec,
    ctx: PoolContext,
    y: FloatArray,
    methods: tuple[str, ...],
    budgets: tuple[int, ...],
    estimates: FloatArray,
    variances: FloatArray,
    params: Mapping[str, Any],
    dfs: FloatArray | None = None,
    labeled: SplitFits | None = None,
) -> CellStudy:
    """The study of one cell; ``labeled`` (any fit of the same splits) adds the gold-only means
    and labeled sizes that the default Wilson-type intervals of labels in [0, 1] need."""
    return CellStudy(
        name=spec.name,
        methods=methods,
        budgets=budgets,
        z=np.asarray(ctx.locality.labels, dtype=object),
        truth=pool_profile(ctx, y),
        estimates=estimates,
        variances=variances,
        pool_n_eff=ctx.moments("none", np.zeros((ctx.n_pool, 0))).n_eff,
        target="pool",
        n_pool=ctx.n_pool,
        params=dict(params),
        dfs=dfs,
        naive_estimates=None if labeled is None else labeled.naive_estimates,
        n_labeled_eff=None if labeled is None else labeled.n_labeled_eff,
        unit_labels=labeled is not None and unit_labels(y),
    )


def _map(func: Callable[[_T], _R], jobs: Sequence[_T], n_jobs: int) -> list[_R]:
    if n_jobs == 1 or len(jobs) == 1:
        return [func(job) for job in jobs]
    with ProcessPoolExecutor(max_workers=n_jobs) as pool:
        return list(pool.map(func, jobs))


def _check_cells(cells: Sequence[CellSpec], func: str) -> None:
    if not cells:
        raise ValueError(f"The 'cells' parameter of {func} must list at least one cell.")
    names = [c.name for c in cells]
    if len(set(names)) != len(names):
        raise ValueError(f"The 'cells' parameter of {func} needs unique names; got {names}.")


def _check_values(
    values: Sequence[float], *, name: str, func: str, rule: str, ok: Callable[[float], bool]
) -> tuple[float, ...]:
    try:
        checked = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        checked = ()
    if not checked or not all(ok(v) for v in checked) or len(set(checked)) != len(checked):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a non-empty list of distinct {rule}. "
            f"Got {values!r} instead."
        )
    return checked


# --------------------------------------------------------------------------------------------
# ridge x bandwidth stress grid (Table 27)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StressResult:
    """Outcome of :func:`stress_grid`.

    Attributes
    ----------
    studies : mapping of (ridge, scale) to StudyResult
        For every configuration, the naive-vs-LACE study of every cell (naive at the same h).
    ridges, scales : tuple of float
        The grid (scale = h / h0).
    level : float
    """

    studies: Mapping[tuple[float, float], StudyResult]
    ridges: tuple[float, ...]
    scales: tuple[float, ...]
    level: float = 0.95

    @property
    def budgets(self) -> tuple[int, ...]:
        """Label budgets."""
        return next(iter(self.studies.values())).budgets

    @property
    def cells(self) -> tuple[str, ...]:
        """Cell names."""
        return tuple(c.name for c in next(iter(self.studies.values())).cells)

    def frame(self) -> pd.DataFrame:
        """LACE against naive at every configuration, cell and budget.

        Columns: ridge, scale, cell, budget, re, re_low, re_high, mean_mse (LACE), naive_mse,
        bias_rms, coverage.
        """
        frames = []
        for (ridge, scale), result in self.studies.items():
            summary = result.summary()
            naive = summary[summary["method"] == "naive"][["cell", "budget", "mean_mse"]]
            lace = summary[summary["method"] == "lace"].merge(
                naive.rename(columns={"mean_mse": "naive_mse"}), on=["cell", "budget"]
            )
            lace.insert(0, "scale", scale)
            lace.insert(0, "ridge", ridge)
            frames.append(lace.drop(columns=["method", "log_re_se", "omitted"]))
        return pd.concat(frames, ignore_index=True)

    def cell_minimum(self) -> pd.DataFrame:
        """Per cell and budget: the minimum RE over the grid, where it occurs, and the default RE.

        Columns: cell, budget, min_re, min_re_high, ridge_at_min, scale_at_min, default_re,
        any_below_one (some configuration has RE < 1), any_below_ci (some configuration's RE
        interval lies entirely below 1).
        """
        frame = self.frame()
        rows = []
        for (cell, budget), group in frame.groupby(["cell", "budget"], sort=False):
            worst = group.iloc[int(np.argmin(group["re"].to_numpy()))]
            default = group[
                np.isclose(group["ridge"], DEFAULT_CONFIG[0])
                & np.isclose(group["scale"], DEFAULT_CONFIG[1])
            ]
            rows.append(
                {
                    "cell": cell,
                    "budget": budget,
                    "min_re": float(worst["re"]),
                    "min_re_high": float(worst["re_high"]),
                    "ridge_at_min": float(worst["ridge"]),
                    "scale_at_min": float(worst["scale"]),
                    "default_re": float(default["re"].iloc[0]) if len(default) else math.nan,
                    "any_below_one": bool((group["re"] < 1).any()),
                    "any_below_ci": bool((group["re_high"] < 1).any()),
                }
            )
        return pd.DataFrame(rows)

    def summary(self) -> pd.DataFrame:
        """The Table-27 summary: per budget, the distribution of the cellwise minimum RE.

        Columns: budget, cells, min, q25, median, q75, max (of the cellwise minimum RE over the
        grid), below_one (cells with some configuration below RE 1), below_ci (cells with some
        configuration below 1 beyond its MC interval), default_below_one (cells below 1 at the
        default lambda = 0.3, h = h0), min_re_at_h0 (smallest RE over cells and ridges at h0).
        """
        minimum = self.cell_minimum()
        frame = self.frame()
        rows = []
        for budget in self.budgets:
            values = minimum[minimum["budget"] == budget]
            at_h0 = frame[(frame["budget"] == budget) & np.isclose(frame["scale"], 1.0)]
            mins = values["min_re"].to_numpy()
            rows.append(
                {
                    "budget": budget,
                    "cells": len(values),
                    "min": float(mins.min()),
                    "q25": float(np.quantile(mins, 0.25)),
                    "median": float(np.median(mins)),
                    "q75": float(np.quantile(mins, 0.75)),
                    "max": float(mins.max()),
                    "below_one": int(values["any_below_one"].sum()),
                    "below_ci": int(values["any_below_ci"].sum()),
                    "default_below_one": int((values["default_re"] < 1).sum()),
                    "min_re_at_h0": float(at_h0["re"].min()) if len(at_h0) else math.nan,
                }
            )
        return pd.DataFrame(rows)

    def grid(self, budget: int | Literal["overall"]) -> pd.DataFrame:
        """Geometric-mean RE of LACE over the cells: rows lambda, columns h / h0."""
        table = pd.DataFrame(index=pd.Index(self.ridges, name="ridge"), columns=self.scales)
        for (ridge, scale), result in self.studies.items():
            agg = result.aggregate()
            row = agg[(agg["method"] == "lace") & (agg["budget"] == budget)]
            table.loc[ridge, scale] = float(row["re"].iloc[0])
        table.columns.name = "h/h0"
        return table.astype(float)

    def table(self, *, digits: int = 3) -> str:
        """Markdown version of :meth:`summary` (one row per budget)."""
        frame = self.summary()
        header = (
            "| n | cells | min | q25 | median | q75 | max | cells with RE < 1 (any config) | "
            "below 1 beyond MC CI | below 1 at default | min RE at h0 (any lambda) |"
        )
        lines = [header, "|" + "---|" * 11]
        for row in frame.itertuples(index=False):
            lines.append(
                f"| {row.budget} | {row.cells} | {row.min:.{digits}f} | {row.q25:.{digits}f} | "
                f"{row.median:.{digits}f} | {row.q75:.{digits}f} | {row.max:.{digits}f} | "
                f"{row.below_one}/{row.cells} | {row.below_ci}/{row.cells} | "
                f"{row.default_below_one}/{row.cells} | {row.min_re_at_h0:.{digits}f} |"
            )
        return "\n".join(lines)


def _stress_cell(args: tuple[CellSpec, dict[str, Any]]) -> dict[tuple[float, float], CellStudy]:
    spec, kw = args
    generator: np.random.Generator = kw["rng"]
    ridges: tuple[float, ...] = kw["ridges"]
    scales: tuple[float, ...] = kw["scales"]
    options = MethodOptions(rng=generator, func="stress_grid")
    items = _items(spec, "stress_grid")
    _, budgets, reps = _check_study_args(("lace",), kw["budgets"], kw["reps"], items.n_pool)
    base = build_context(items, grid=spec.grid, bandwidth=spec.bandwidth, primary=spec.primary)
    if base.locality.kind == "categorical":
        raise ValueError(
            "The stress grid varies the profile bandwidth, which a categorical profile does not "
            f"have; cell '{spec.name}' is categorical. Use continuous or ordinal cells."
        )
    y = np.asarray(items.label, dtype=np.float64)
    seeds, orders = matched_splits(generator, reps, items.n_pool)
    order_list = list(orders)
    h0 = base.locality.bandwidth
    out: dict[tuple[float, float], CellStudy] = {}
    for scale in scales:
        ctx = (
            base
            if scale == 1.0
            else build_context(items, grid=spec.grid, bandwidth=h0 * scale, primary=spec.primary)
        )
        naive = fit_splits(
            ctx,
            y,
            order_list,
            methods=("naive",),
            budgets=budgets,
            options=options,
            target="pool",
            seeds=seeds,
        )
        for ridge in ridges:
            lace = fit_splits(
                ctx,
                y,
                order_list,
                methods=("lace",),
                budgets=budgets,
                options=dataclasses.replace(options, ridge=ridge),
                target="pool",
                seeds=seeds,
            )
            out[(ridge, scale)] = _cell_study(
                spec,
                ctx,
                y,
                ("naive", "lace"),
                budgets,
                np.concatenate([naive.estimates, lace.estimates]),
                np.concatenate([naive.variances, lace.variances]),
                {"ridge": ridge, "scale": scale, "bandwidth": ctx.locality.bandwidth.tolist()},
                dfs=np.concatenate([naive.dfs, lace.dfs]),
                labeled=naive,
            )
    return out


def stress_grid(
    cells: Sequence[CellSpec],
    *,
    ridges: Sequence[float] = RIDGES,
    scales: Sequence[float] = BANDWIDTH_SCALES,
    budgets: Sequence[int] = (50, 100, 200),
    reps: int = 40,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    n_jobs: int = 1,
) -> StressResult:
    """The ridge x bandwidth stress grid of LACE on matched splits (LACE paper, Table 27).

    Parameters
    ----------
    cells : sequence of CellSpec
        Fully labeled cells with an ordered profile (continuous or ordinal). A cell's own
        ``bandwidth`` (or the rule-of-thumb h0 when it is None) is the reference h0.
    ridges : sequence of float
        Ridge penalties lambda >= 0.
    scales : sequence of float
        Profile bandwidths as multiples h / h0 (> 0); the nuisance bandwidth is b = h.
    budgets : sequence of int
        Label budgets (nested prefixes of each split).
    reps : int
        Matched splits per cell (the paper uses 40).
    level : float
        Interval level for coverage.
    rng : int or Generator, optional
        Seeds the splits. With the same ``rng``, cell ``c`` sees exactly the splits of
        ``study_cells(cells, rng=rng)``: configuration (0.3, 1) reproduces that study's LACE.
    n_jobs : int
        Worker processes over cells.

    Returns
    -------
    StressResult

    Notes
    -----
    For configuration (lambda, s), both LACE (ridge lambda, b = h) and the naive smoother use
    h = s h0, and the comparison target is the realized pool profile at that bandwidth,
    :math:`\\theta_{T,h}(z) = \\sum_T w_{i,T,h}(z) Y_i`, on the cell's fixed grid. So the RE at
    s != 1 compares estimators of a different (finer or coarser) estimand; narrowing h also
    shrinks the local effective sample size. For ordinal cells the half-width b_ord is scaled
    (with exact integer levels every s < 1 gives the same weights as s = 1).

    References
    ----------
    LACE paper, Appendix H.1 ("Ridge and bandwidth sensitivity"), Table 27.
    """
    func = "stress_grid"
    _check_cells(cells, func)
    ridge_values = _check_values(
        ridges,
        name="ridges",
        func=func,
        rule="finite floats >= 0",
        ok=lambda v: math.isfinite(v) and v >= 0,
    )
    scale_values = _check_values(
        scales,
        name="scales",
        func=func,
        rule="finite floats > 0",
        ok=lambda v: math.isfinite(v) and v > 0,
    )
    level = check_level(level, func=func)
    workers = check_positive_int(n_jobs, name="n_jobs", func=func)
    children = check_rng(rng, func=func).spawn(len(cells))
    jobs = [
        (
            spec,
            {
                "rng": child,
                "ridges": ridge_values,
                "scales": scale_values,
                "budgets": tuple(budgets),
                "reps": reps,
            },
        )
        for spec, child in zip(cells, children, strict=True)
    ]
    per_cell = _map(_stress_cell, jobs, workers)
    studies = {
        (ridge, scale): StudyResult(
            cells=tuple(cell[(ridge, scale)] for cell in per_cell), level=level
        )
        for scale in scale_values
        for ridge in ridge_values
    }
    return StressResult(studies=studies, ridges=ridge_values, scales=scale_values, level=level)


# --------------------------------------------------------------------------------------------
# within-L cross-validation of every method (Table 28)
# --------------------------------------------------------------------------------------------


def _with_value(options: MethodOptions, parameter: str, value: float) -> MethodOptions:
    if not hasattr(options, parameter):
        raise ValueError(
            f"Unknown tuning parameter {parameter!r} (not an option of MethodOptions)."
        )
    typed: float | int = int(value) if parameter == "strata_count" else float(value)
    changes: dict[str, Any] = {parameter: typed}
    return dataclasses.replace(options, **changes)


def cv_fit(
    ctx: PoolContext,
    labeled: LabeledSet,
    method: str,
    options: MethodOptions,
    *,
    folds: int = 3,
    param_grid: Sequence[float] | None = None,
    rng: np.random.Generator,
) -> tuple[MethodFit, float]:
    """Fit ``method`` on ``labeled`` with its tuning parameter chosen by within-L K-fold CV.

    The selection rule and random streams are those of :func:`slicewise.select` (outcome-balanced
    folds; held-out items stay unlabeled pool items; kernel-mass-weighted squared distance to the
    held-out fold's h-smoothed gold profile; refit on all of L with the best value), so for the
    same generator this returns ``select(...)``'s refit on the table with only L labeled.

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    method : str
        A registered method; one without a tuning parameter is fitted as is.
    options : MethodOptions
        The other options; the tuned one is replaced by each candidate.
    folds : int
    param_grid : sequence of float, optional
        Candidate values (default: the method's grid in the registry).
    rng : numpy Generator
        Folds and cross-fitting randomness.

    Returns
    -------
    fit : MethodFit
    chosen : float
        The selected value (NaN for a method without a tuning parameter, or when no held-out
        fold could score any candidate; the method's given option is then used).
    """
    spec = METHODS[method]
    base = dataclasses.replace(options, rng=rng)
    if spec.tunable is None:
        return spec.fit(ctx, labeled, base), math.nan
    grid = spec.grid if param_grid is None else tuple(param_grid)
    fold_rng, *fit_rngs = rng.spawn(folds + 1)
    fold = balanced_folds(labeled.y, folds, fold_rng)
    candidates = [_with_value(base, spec.tunable, v) for v in grid]
    scores = np.column_stack(
        [
            fold_scores(ctx, labeled, fold == k, method, candidates, fit_rngs[k])
            for k in range(folds)
        ]
    )
    usable = np.isfinite(scores).any(axis=0)
    if not usable.any():
        return spec.fit(ctx, labeled, base), math.nan
    mean = scores[:, usable].mean(axis=1)
    best = int(np.argmin(mean))
    return spec.fit(ctx, labeled, candidates[best]), float(grid[best])


def _cv_cell(args: tuple[CellSpec, dict[str, Any]]) -> CellStudy:
    spec, kw = args
    func = "cv_study"
    generator: np.random.Generator = kw["rng"]
    options = MethodOptions(rng=generator, func=func)
    items = _items(spec, func)
    names, budgets, reps = _check_study_args(kw["methods"], kw["budgets"], kw["reps"], items.n_pool)
    folds: int = kw["folds"]
    if budgets[0] < MIN_PER_FOLD * folds:
        raise ValueError(
            f"The 'budgets' parameter of {func} must be >= {MIN_PER_FOLD * folds} "
            f"({MIN_PER_FOLD} labeled items per fold, {folds} folds). Got {budgets[0]} instead."
        )
    ctx = build_context(items, grid=spec.grid, bandwidth=spec.bandwidth, primary=spec.primary)
    for method in names:
        check_method_needs(ctx, method, options)
    y = np.asarray(items.label, dtype=np.float64)
    target: Target = kw["target"]
    grids: Mapping[str, Sequence[float]] = kw["param_grids"] or {}
    seeds, orders = matched_splits(generator, reps, items.n_pool)
    shape = (len(names), len(budgets), reps, ctx.grid_size)
    est, var = np.full(shape, np.nan), np.full(shape, np.nan)
    chosen = np.full(shape[:3], np.nan)
    with threadpool_limits(limits=1):
        for r, (order, seed) in enumerate(zip(orders, seeds, strict=True)):
            children = seed.spawn(len(budgets))
            for b, n in enumerate(budgets):
                index = np.sort(order[:n])
                labeled = LabeledSet(index=index, y=y[index])
                for m, method in enumerate(names):
                    with np.errstate(all="ignore"):
                        fit, value = cv_fit(
                            ctx,
                            labeled,
                            method,
                            options,
                            folds=folds,
                            param_grid=grids.get(method),
                            rng=np.random.default_rng(children[b]),
                        )
                    est[m, b, r] = fit.estimate
                    var[m, b, r] = fit.var_pool if target == "pool" else fit.var_population
                    chosen[m, b, r] = value
    params = {
        "folds": folds,
        "chosen": {method: chosen[m] for m, method in enumerate(names)},
        "bandwidth": ctx.locality.bandwidth.tolist(),
    }
    cell = _cell_study(spec, ctx, y, names, budgets, est, var, params)
    return dataclasses.replace(cell, target=target)


def cv_study(
    cells: Sequence[CellSpec],
    *,
    methods: Sequence[str] = ("naive", "lace", "global_cv"),
    budgets: Sequence[int] = (50, 100, 200),
    reps: int = 100,
    folds: int = 3,
    param_grids: Mapping[str, Sequence[float]] | None = None,
    target: Target = "pool",
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    n_jobs: int = 1,
) -> StudyResult:
    """Every method with its tuning parameter chosen by within-L CV in every split (Table 28).

    Parameters
    ----------
    cells : sequence of CellSpec
    methods : sequence of str
        Methods to compare (``naive`` is always added and varies nothing).
    budgets : sequence of int
        Label budgets; each must allow ``2 * folds`` labeled items.
    reps : int
        Matched outer splits per cell.
    folds : int
        Folds of L (the paper uses 3).
    param_grids : mapping of method to values, optional
        Candidate values per method (default: the registry's five-point grids).
    target : {'pool', 'population'}
        Which variance the recorded intervals use (the truth is the pool profile).
    level : float
    rng : int or Generator, optional
        Seeds the splits exactly as :func:`~slicewise.studies.engine.study_cells` with the same
        ``rng`` does, so the fixed-parameter study on the same splits is the matched comparison.
    n_jobs : int
        Worker processes over cells.

    Returns
    -------
    StudyResult
        Each cell's ``params['chosen']`` maps a method to the selected values, shape
        (n_budgets, reps) (NaN where nothing is tuned); see :func:`chosen_parameters`.

    Notes
    -----
    Inside outer split r and budget n, L is split into ``folds`` outcome-balanced folds; each
    candidate is fitted on the other folds (held-out items stay unlabeled pool items, so pool-side
    sums are unchanged) and scored by the kernel-mass-weighted squared distance between its
    profile and the held-out fold's h-smoothed gold profile; the value with the smallest mean
    score is refitted on all of L (:func:`cv_fit`). No gold outcome outside L enters.

    References
    ----------
    LACE paper, Appendix H.1 ("Within-L three-fold cross-validation"), Table 28.
    """
    func = "cv_study"
    _check_cells(cells, func)
    target = check_choice(target, TARGETS, name="target", func=func)
    level = check_level(level, func=func)
    folds = check_positive_int(folds, name="folds", func=func, minimum=2)
    workers = check_positive_int(n_jobs, name="n_jobs", func=func)
    if param_grids is not None:
        unknown = sorted(set(param_grids) - {m for m, s in METHODS.items() if s.tunable})
        if unknown:
            raise ValueError(
                f"The 'param_grids' parameter of {func} names methods without a tuning "
                f"parameter or unknown methods: {unknown}."
            )
    children = check_rng(rng, func=func).spawn(len(cells))
    jobs = [
        (
            spec,
            {
                "rng": child,
                "methods": tuple(methods),
                "budgets": tuple(budgets),
                "reps": reps,
                "folds": folds,
                "param_grids": dict(param_grids) if param_grids else None,
                "target": target,
            },
        )
        for spec, child in zip(cells, children, strict=True)
    ]
    return StudyResult(cells=tuple(_map(_cv_cell, jobs, workers)), level=level)


def chosen_parameters(result: StudyResult) -> pd.DataFrame:
    """How often each value was selected in a :func:`cv_study`.

    Returns
    -------
    DataFrame
        Columns: method, budget, value, count, share (over cells and splits); methods without a
        tuning parameter are left out; value NaN counts splits where no fold could score.
    """
    rows = []
    for cell in result.cells:
        chosen: Mapping[str, FloatArray] = cell.params.get("chosen", {})
        for method, values in chosen.items():
            if METHODS[method].tunable is None:
                continue
            for b, budget in enumerate(cell.budgets):
                for value in values[b]:
                    rows.append({"method": method, "budget": budget, "value": float(value)})
    frame = pd.DataFrame(rows, columns=["method", "budget", "value"])
    counts = (
        frame.assign(value=frame["value"].fillna(-1.0))
        .groupby(["method", "budget", "value"], sort=True)
        .size()
        .rename("count")
        .reset_index()
    )
    counts["value"] = counts["value"].where(counts["value"] >= 0, np.nan)
    totals = counts.groupby(["method", "budget"])["count"].transform("sum")
    counts["share"] = counts["count"] / totals
    return counts


# --------------------------------------------------------------------------------------------
# sparse region
# --------------------------------------------------------------------------------------------


def sparse_region(result: StudyResult, *, k: int = 5) -> StudyResult:
    """The study evaluated on each cell's ``k`` grid points with the lowest pool n_eff.

    The pool effective sample size :math:`n_{eff}(z) = \\{\\sum_T w_{i,T}(z)^2\\}^{-1}` uses no
    gold outcome (LACE paper, Appendix H.1: five points, the lowest quartile of a 20-point grid).
    """
    k = check_positive_int(k, name="k", func="sparse_region")
    return result.restrict("sparse", k=k)


def sparse_summary(result: StudyResult, *, k: int = 5) -> pd.DataFrame:
    """Per method and budget on the sparse region: median cellwise RE and cells below one.

    Columns: method, budget, cells, median_re, min_re, below_one (RE < 1), below_ci (RE
    interval entirely below 1), geo_re, geo_low, geo_high (geometric mean over cells).
    """
    sparse = sparse_region(result, k=k)
    summary = sparse.summary()
    agg = sparse.aggregate()
    geometric: dict[tuple[str, object], tuple[float, float, float]] = {
        (str(method), budget): (float(re), float(low), float(high))
        for method, budget, re, low, high in zip(
            agg["method"], agg["budget"], agg["re"], agg["re_low"], agg["re_high"], strict=True
        )
    }
    rows = []
    for (method, budget), group in summary.groupby(["method", "budget"], sort=False):
        geo_re, geo_low, geo_high = geometric[(str(method), budget)]
        rows.append(
            {
                "method": method,
                "budget": budget,
                "cells": len(group),
                "median_re": float(group["re"].median()),
                "min_re": float(group["re"].min()),
                "below_one": int((group["re"] < 1).sum()),
                "below_ci": int((group["re_high"] < 1).sum()),
                "geo_re": geo_re,
                "geo_low": geo_low,
                "geo_high": geo_high,
            }
        )
    return pd.DataFrame(rows)
