"""Matched-split relative-efficiency studies on fully labeled tables (LACE paper, Section 5.3).

For one *cell* (a fully labeled pool, a profile axis, a candidate's labels and signals) the study
draws ``reps`` random permutations of the items and uses their nested prefixes as the labeled sets
for every budget, so that every method sees exactly the same labeled sets. Each fitted profile is
evaluated on the same grid against the realized full-pool profile sum_T w_{i,T}(z) Y_i (the pool
target), or against a known population profile in simulations.

All pool-side sums (kernels, pool moments, cross-fitting-independent quantities) are computed once
per cell by the :class:`~slicewise.methods.base.PoolContext` cache and reused across every split,
budget and method; only labeled-side sums are recomputed per split.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from .._typing import TARGETS, FloatArray, Kind, Target
from .._validation import check_choice, check_level, check_positive_int, check_rng
from ..data.table import make_table
from ..methods.base import LabeledSet, PoolContext, labeled_sizes
from ..methods.options import DEFAULTS, MethodOptions, options_taken
from ..methods.registry import METHODS
from ..methods.run import build_context, check_method_needs
from ..moments.kernel_ops import column_sums, weighted_sums
from .summary import CellStudy, StudyResult, unit_labels

FUNC = "study"


@dataclass(frozen=True)
class CellSpec:
    """A cell of a multi-cell study: a fully labeled table and how to profile it."""

    name: str
    table: pd.DataFrame
    z: str | Sequence[str]
    label: str
    signals: Sequence[str] = ()
    kind: Kind | None = None
    grid: Any = None
    bandwidth: Any = None
    primary: str | None = None
    coef: Any = None


def pool_profile(ctx: PoolContext, values: FloatArray) -> FloatArray:
    """Realized full-pool kernel profile sum_T w_{i,T}(z) V_i (NaN where the pool has no mass)."""
    kernel = ctx.kernel(1.0)
    mass = column_sums(kernel)
    sums = weighted_sums(kernel, values.reshape(-1, 1))[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mass > 0, sums / np.where(mass > 0, mass, 1.0), np.nan)


class SplitFits(NamedTuple):
    """Every fit of a study, each array of shape (n_methods, n_budgets, reps, G), and per labeled
    set (shape (n_budgets, reps, G)) the gold-only mean and the labeled effective size, which the
    Wilson-type intervals of labels in [0, 1] need (:func:`slicewise.inference.bounded.interval_bounds`)."""

    estimates: FloatArray
    variances: FloatArray
    dfs: FloatArray
    bounds: FloatArray
    naive_estimates: FloatArray
    n_labeled_eff: FloatArray


def fit_splits(
    ctx: PoolContext,
    y: FloatArray,
    orders: Iterable[np.ndarray],
    *,
    methods: Sequence[str],
    budgets: Sequence[int],
    options: MethodOptions,
    target: Target,
    seeds: Sequence[np.random.SeedSequence],
    tick: Callable[[], None] | None = None,
) -> SplitFits:
    """Fit every method at every budget on the nested prefixes of each permutation.

    Estimates, variances, interval degrees of freedom and bias bounds (the half-width added by
    the slice objective of the smoothing), each of shape (n_methods, n_budgets, reps, G).
    """
    order_list = list(orders)
    shape = (len(methods), len(budgets), len(order_list), ctx.grid_size)
    est = np.full(shape, np.nan)
    var = np.full(shape, np.nan)
    dfs = np.full(shape, np.nan)
    bounds = np.zeros(shape)
    naive_est = np.full(shape[1:], np.nan)
    n_lab_eff = np.full(shape[1:], np.nan)
    with threadpool_limits(limits=1):  # many small matrix products: BLAS threads only contend
        for r, (order, seed) in enumerate(zip(order_list, seeds, strict=True)):
            children = seed.spawn(len(budgets))
            for b, n in enumerate(budgets):
                index = np.sort(order[:n])
                labeled = LabeledSet(index=index, y=y[index])
                n_lab_eff[b, r] = labeled_sizes(ctx, labeled)[0]
                if "naive" not in methods:
                    with np.errstate(all="ignore"):
                        naive_est[b, r] = METHODS["naive"].fit(ctx, labeled, options).estimate
                for m, method in enumerate(methods):
                    opts = _with_rng(options, children[b])
                    with np.errstate(all="ignore"):
                        fit = METHODS[method].fit(ctx, labeled, opts)
                    if method == "naive":
                        naive_est[b, r] = fit.estimate
                    est[m, b, r] = fit.estimate
                    var[m, b, r] = fit.var_pool if target == "pool" else fit.var_population
                    if fit.df is not None:
                        dfs[m, b, r] = fit.df
                    if fit.bias_bound is not None:
                        bounds[m, b, r] = fit.bias_bound
                if tick is not None:
                    tick()
    return SplitFits(est, var, dfs, bounds, naive_est, n_lab_eff)


def matched_splits(
    generator: np.random.Generator, reps: int, n_pool: int
) -> tuple[list[np.random.SeedSequence], Iterator[np.ndarray]]:
    """Seeds and label permutations of ``reps`` matched splits of a pool of ``n_pool`` items.

    One draw from ``generator`` seeds a SeedSequence whose ``reps`` children seed split r's
    permutation (and, in :func:`fit_splits`, its methods' cross-fitting). Every study of a cell
    that starts from the same generator state therefore sees the same labeled sets.
    """
    seeds = np.random.SeedSequence(int(generator.integers(2**63))).spawn(reps)
    return seeds, (np.random.default_rng(s).permutation(n_pool) for s in seeds)


def _with_rng(options: MethodOptions, seed: np.random.SeedSequence) -> MethodOptions:
    from dataclasses import replace

    return replace(options, rng=np.random.default_rng(seed))


def _check_study_args(
    methods: Sequence[str], budgets: Sequence[int], reps: int, n_pool: int
) -> tuple[tuple[str, ...], tuple[int, ...], int]:
    names = tuple(check_choice(m, tuple(METHODS), name="methods", func=FUNC) for m in methods)
    if "naive" not in names:
        names = ("naive", *names)
    if not budgets:
        raise ValueError(f"The 'budgets' parameter of {FUNC} must list at least one label budget.")
    checked = tuple(check_positive_int(n, name="budgets", func=FUNC, minimum=2) for n in budgets)
    too_big = [n for n in checked if n > n_pool]
    if too_big:
        raise ValueError(
            f"The 'budgets' parameter of {FUNC} must not exceed the pool size M = {n_pool}. "
            f"Got {too_big} instead."
        )
    return names, tuple(sorted(set(checked))), check_positive_int(reps, name="reps", func=FUNC)


def study(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    label: str,
    signals: str | Sequence[str] | None = None,
    methods: Sequence[str] = ("naive", "lace", "global_cv"),
    budgets: Sequence[int] = (50, 100, 200),
    reps: int = 100,
    kind: Kind | None = None,
    grid: Any = None,
    bandwidth: Any = None,
    primary: str | None = None,
    coef: Any = None,
    ridge: float = DEFAULTS.ridge,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    ppci_multiplier: float = DEFAULTS.ppci_multiplier,
    ppi_bandwidth_scale: float = DEFAULTS.ppi_bandwidth_scale,
    smooth: str = DEFAULTS.smooth,
    objective: str = DEFAULTS.objective,
    target: Target = "pool",
    truth: FloatArray | None = None,
    level: float = 0.95,
    name: str = "cell",
    rng: int | np.random.Generator | None = None,
    progress: bool = False,
) -> StudyResult:
    """Relative efficiency of profile methods on matched label splits of a fully labeled table.

    Parameters
    ----------
    table : DataFrame or path
        A fully labeled pool (every label present); labels are masked by the study.
    z, label, signals, kind, grid, bandwidth, primary, coef
        As in :func:`slicewise.profile`.
    methods : sequence of str
        Methods to compare; ``naive`` is always included (it is the reference of RE).
    budgets : sequence of int
        Label budgets n; the labeled sets are nested prefixes of one permutation per split.
    reps : int
        Number of matched splits B.
    ridge, nuisance_scale, C, strata_count, ppci_multiplier, ppi_bandwidth_scale, smooth, objective
        Method options, shared by every method (see :func:`slicewise.profile`).
    target : {'pool', 'population'}
        Which variance the recorded intervals use. The comparison truth is the realized full-pool
        profile unless ``truth`` is given.
    truth : array of shape (G,), optional
        A known profile to compare with (simulations).
    level : float
        Interval level for coverage.
    name : str
        Cell name in the summaries.
    rng : int or Generator, optional
        Seeds the permutations and every method's cross-fitting.
    progress : bool
        Show a progress bar (tqdm) over splits.

    Returns
    -------
    StudyResult

    Notes
    -----
    For split r and method m, MSE_{m,r} = mean over grid points of {theta_hat_{m,r}(z) -
    theta_T(z)}^2 (points where the fit is NaN are omitted for that split, as in the paper's
    Appendix H.1); RE_m = mean_r MSE_naive,r / mean_r MSE_m,r (LACE paper, Section 5.3).

    Examples
    --------
    How much a noisy judge is worth on a fully labeled table (``sw.study`` is this function):

    >>> import numpy as np, pandas as pd
    >>> import slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> level = rng.integers(1, 6, 1000)
    >>> y = (rng.random(1000) < 0.9 - 0.1 * level).astype(float)
    >>> items = pd.DataFrame({"level": level, "judge": y + rng.normal(0, 0.5, 1000), "correct": y})
    >>> res = sw.study(items, z="level", kind="ordinal", signals="judge", label="correct",
    ...                methods=["naive", "lace"], budgets=[100, 200], reps=5, rng=0)
    >>> re = res.summary().set_index(["method", "budget"])["re"]
    >>> re["lace"].round(1).tolist()  # RE > 1: lace needs fewer labels than the gold-only mean
    [1.8, 2.0]
    """
    level = check_level(level, func=FUNC)
    target = check_choice(target, TARGETS, name="target", func=FUNC)
    generator = check_rng(rng, func=FUNC)
    options = MethodOptions.from_arguments({**locals(), "rng": generator}, func=FUNC)
    items = make_table(table, z=z, signals=signals, label=label, kind=kind, func=FUNC)
    if items.n_labeled != items.n_pool:
        raise ValueError(
            f"A study needs a fully labeled table, but label column '{label}' is missing on "
            f"{items.n_pool - items.n_labeled} of {items.n_pool} rows."
        )
    names, budget_list, n_reps = _check_study_args(methods, budgets, reps, items.n_pool)
    ctx = build_context(items, grid=grid, bandwidth=bandwidth, primary=primary)
    for method in names:
        check_method_needs(ctx, method, options)
    y = np.asarray(items.label, dtype=np.float64)
    if truth is None:
        target_profile = pool_profile(ctx, y)
    else:
        target_profile = np.asarray(truth, dtype=np.float64)
        if target_profile.shape != (ctx.grid_size,):
            raise ValueError(
                f"The 'truth' parameter of {FUNC} must have one value per grid point "
                f"({ctx.grid_size}). Got shape {target_profile.shape} instead."
            )
    seeds, orders = matched_splits(generator, n_reps, items.n_pool)
    bar = _progress(n_reps * len(budget_list), enabled=progress, desc=name)
    try:
        fits = fit_splits(
            ctx,
            y,
            orders,
            methods=names,
            budgets=budget_list,
            options=options,
            target=target,
            seeds=seeds,
            tick=bar.update if bar is not None else None,
        )
    finally:
        if bar is not None:
            bar.close()
    cell = CellStudy(
        name=name,
        methods=names,
        budgets=budget_list,
        z=np.asarray(ctx.locality.labels, dtype=object),
        truth=target_profile,
        estimates=fits.estimates,
        variances=fits.variances,
        pool_n_eff=ctx.moments("none", np.zeros((ctx.n_pool, 0))).n_eff,
        target=target,
        n_pool=ctx.n_pool,
        params={"ridge": options.ridge, "bandwidth": ctx.locality.bandwidth.tolist()},
        dfs=fits.dfs,
        bounds=fits.bounds,
        naive_estimates=fits.naive_estimates,
        n_labeled_eff=fits.n_labeled_eff,
        unit_labels=unit_labels(y),
    )
    return StudyResult(cells=(cell,), level=level)


def _progress(total: int, *, enabled: bool, desc: str) -> Any:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - the progress extra is optional
        return None
    return tqdm(total=total, desc=desc, leave=False)


def run_spec(args: tuple[CellSpec, dict[str, Any]]) -> StudyResult:
    """The study of one real-data cell: ``study`` on the spec's table and columns with ``kwargs``."""
    spec, kwargs = args
    return study(
        spec.table,
        z=spec.z,
        label=spec.label,
        signals=list(spec.signals),
        kind=spec.kind,
        grid=spec.grid,
        bandwidth=spec.bandwidth,
        primary=spec.primary,
        coef=spec.coef,
        name=spec.name,
        **kwargs,
    )


def study_cells(
    cells: Sequence[CellSpec],
    *,
    methods: Sequence[str] = ("naive", "lace", "global_cv"),
    budgets: Sequence[int] = (50, 100, 200),
    reps: int = 100,
    rng: int | np.random.Generator | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    **options: Any,
) -> StudyResult:
    """Run :func:`study` on several cells (in ``n_jobs`` processes) and combine the results.

    ``options`` are the method options of :func:`study` (ridge, nuisance_scale, C, ...,
    target, level). Each cell gets an independent child seed of ``rng``.
    """
    if not cells:
        raise ValueError("The 'cells' parameter of study_cells must list at least one cell.")
    names = [c.name for c in cells]
    if len(set(names)) != len(names):
        raise ValueError(f"Cell names must be unique; got duplicates in {names}.")
    allowed = {*options_taken(study), "target", "level"} - {"rng"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(
            f"study_cells got unknown option(s) {unknown}; valid options: {sorted(allowed)}."
        )
    generator = check_rng(rng, func="study_cells")
    children = generator.spawn(len(cells))
    jobs = [
        (
            spec,
            {
                "methods": methods,
                "budgets": budgets,
                "reps": reps,
                "rng": child,
                "progress": progress and n_jobs == 1,
                **options,
            },
        )
        for spec, child in zip(cells, children, strict=True)
    ]
    workers = check_positive_int(n_jobs, name="n_jobs", func="study_cells")
    if workers == 1:
        results = [run_spec(job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(run_spec, jobs))
    return StudyResult.concat(results)
