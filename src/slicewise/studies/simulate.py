"""Repeated-pool simulations of the LACE paper's Appendix I and the pointwise gain-formula check.

Each replication redraws the pool (Y and S, and Z for continuous designs) from a frozen
:class:`~slicewise.studies.paper_designs.Design`, draws nested labeled prefixes of one permutation
for the budgets, and fits every method. The comparison truth is the design's population profile
theta(z) (``target='population'``) or the realized pool profile of that replication
(``target='pool'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from threadpoolctl import threadpool_limits

from .._typing import TARGETS, Target
from .._validation import check_choice, check_level, check_positive_int, check_rng
from ..data.table import make_table
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.run import build_context
from .engine import SplitFits, _check_study_args, _progress, fit_splits, pool_profile
from .paper_designs import DESIGNS, Design
from .summary import CellStudy, StudyResult, log_re_influence, unit_labels

FUNC = "simulate"


def simulate(
    design: str | Design,
    *,
    methods: Sequence[str] = ("naive", "lace", "lace_oracle"),
    budgets: Sequence[int] = (500, 1000, 1500),
    reps: int = 300,
    target: Target = "population",
    ridge: float = DEFAULTS.ridge,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    bandwidth: float | None = None,
    primary: str | None = "s1",
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
    progress: bool = False,
) -> StudyResult:
    """Run a repeated-pool simulation of a frozen design.

    Parameters
    ----------
    design : {'setting-b', 'setting-c', 'specialist'} or Design
    methods : sequence of str
        Methods to compare (``naive`` is always added). ``lace_oracle`` uses the design's
        closed-form beta*(z).
    budgets : sequence of int
    reps : int
        Replications (pools); the paper uses 300.
    target : {'population', 'pool'}
    ridge, nuisance_scale, C, strata_count
        Method options (the paper's defaults: ridge 0.3, b = h, C = 1).
    bandwidth : float, optional
        Profile bandwidth for the continuous design (default: the rule-of-thumb h0 of each pool).
        Ignored by the discrete designs, which use within-group weights.
    primary : str, optional
        Primary judge signal for the single-signal methods (default s1).
    level : float
    rng : int or Generator, optional
    progress : bool

    Returns
    -------
    StudyResult
        One cell named after the design; ``truth`` is theta(z) or the per-replication pool profile.
    """
    if isinstance(design, str):
        chosen = DESIGNS[check_choice(design, tuple(DESIGNS), name="design", func=FUNC)]()
    else:
        chosen = design
    target = check_choice(target, TARGETS, name="target", func=FUNC)
    level = check_level(level, func=FUNC)
    generator = check_rng(rng, func=FUNC)
    options = MethodOptions(
        ridge=ridge,
        nuisance_scale=nuisance_scale,
        coef=chosen.oracle_coef(),
        C=C,
        strata_count=strata_count,
        rng=generator,
        func=FUNC,
    )
    names, budget_list, n_reps = _check_study_args(methods, budgets, reps, chosen.z.size)
    grid = chosen.grid
    fits_all: list[SplitFits] = []
    truths = []
    unit = True
    seeds = np.random.SeedSequence(int(generator.integers(2**63))).spawn(n_reps)
    bar = _progress(n_reps, enabled=progress, desc=chosen.name)
    pool_n_eff = np.zeros(grid.size)
    with threadpool_limits(limits=1):  # small matrix products: BLAS threads only contend
        for seed in seeds:
            draw_seed, perm_seed, fit_seed = seed.spawn(3)
            frame = chosen.draw(np.random.default_rng(draw_seed))
            items = make_table(
                frame, z="z", signals=chosen.signal_names, label="y", kind=chosen.kind, func=FUNC
            )
            grid_arg: Any = grid if chosen.kind == "continuous" else None
            ctx = build_context(items, grid=grid_arg, bandwidth=bandwidth, primary=primary)
            y = np.asarray(items.label, dtype=np.float64)
            order = np.random.default_rng(perm_seed).permutation(items.n_pool)
            fits = fit_splits(
                ctx,
                y,
                [order],
                methods=names,
                budgets=budget_list,
                options=options,
                target=target,
                seeds=[fit_seed],
            )
            fits_all.append(fits)
            unit = unit and unit_labels(y)
            truths.append(chosen.theta if target == "population" else pool_profile(ctx, y))
            pool_n_eff += ctx.moments("none", np.zeros((ctx.n_pool, 0))).n_eff / n_reps
            if bar is not None:
                bar.update()
    if bar is not None:
        bar.close()
    cell = CellStudy(
        name=chosen.name,
        methods=names,
        budgets=budget_list,
        z=np.asarray(grid, dtype=object),
        truth=np.vstack(truths) if target == "pool" else np.asarray(chosen.theta),
        estimates=np.concatenate([f.estimates for f in fits_all], axis=2),
        variances=np.concatenate([f.variances for f in fits_all], axis=2),
        dfs=np.concatenate([f.dfs for f in fits_all], axis=2),
        bounds=np.concatenate([f.bounds for f in fits_all], axis=2),
        naive_estimates=np.concatenate([f.naive_estimates for f in fits_all], axis=1),
        n_labeled_eff=np.concatenate([f.n_labeled_eff for f in fits_all], axis=1),
        unit_labels=unit,
        pool_n_eff=pool_n_eff,
        target=target,
        n_pool=chosen.z.size,
        params={"ridge": ridge, "bandwidth": bandwidth},
    )
    return StudyResult(cells=(cell,), level=level)


def pointwise_re(result: StudyResult, method: str, *, budget: int) -> pd.DataFrame:
    """Pointwise RE(z) = mean_r err_naive(z)^2 / mean_r err_method(z)^2 with 95% MC intervals.

    Uses the first cell of ``result``; intervals from the paired delta method per grid point.
    """
    cell = result.cells[0]
    m = cell.methods.index(method)
    b = cell.budgets.index(budget)
    err = (cell.estimates[:, b] - cell.truth) ** 2
    z95 = stats.norm.ppf(0.975)
    rows = []
    for g, point in enumerate(cell.z):
        log_re, phi = log_re_influence(err[0, :, g], err[m, :, g])
        ok = phi[np.isfinite(phi)]
        se = float(ok.std(ddof=1) / np.sqrt(ok.size)) if ok.size > 1 else np.nan
        rows.append(
            {
                "z": point,
                "re": float(np.exp(log_re)),
                "re_low": float(np.exp(log_re - z95 * se)),
                "re_high": float(np.exp(log_re + z95 * se)),
                "log_re_se": se,
            }
        )
    return pd.DataFrame(rows)


def gain_check(
    design: Design | None = None,
    *,
    budget: int = 2000,
    bandwidth_scales: Sequence[float] = (1.0, 0.5, 0.25),
    reps: int = 200,
    rng: int | np.random.Generator | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Validate the pointwise gain formula 1 / (1 - (1 - pi) R^2(z)) in the I.3 design.

    Runs naive and oracle-coefficient LACE (population target) at shrinking bandwidths
    h = scale x h0 (h0 = 1.5 x 1.06 x sd(Z) x M^(-1/5) for Z ~ U(0, 1), sd = 1/sqrt(12)) and
    compares the observed pointwise RE with the closed-form gain at each grid point.

    Returns
    -------
    DataFrame
        Columns: scale, bandwidth, z, re, re_low, re_high, gain (closed form), r2.
    """
    chosen = design if design is not None else DESIGNS["specialist"]()
    generator = check_rng(rng, func="gain_check")
    check_positive_int(budget, name="budget", func="gain_check")
    m = chosen.z.size
    h0 = 1.5 * 1.06 * np.sqrt(1 / 12) * m ** (-1 / 5)
    fraction = budget / m
    frames = []
    for scale in bandwidth_scales:
        res = simulate(
            chosen,
            methods=("naive", "lace_oracle"),
            budgets=(budget,),
            reps=reps,
            bandwidth=float(scale * h0),
            rng=generator,
            progress=progress,
        )
        frame = pointwise_re(res, "lace_oracle", budget=budget)
        frame.insert(0, "bandwidth", scale * h0)
        frame.insert(0, "scale", scale)
        frame["gain"] = chosen.bound_gain(fraction)
        frame["r2"] = chosen.r2()
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
