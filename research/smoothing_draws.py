"""Direct fits of the real families on matched label draws, kept for the smoothing rules (issue 29).

Run from the repository root::

    python -m research.smoothing_draws --dataset llmbar --reps 200 --out /tmp/sw_draws

For every family of disjoint domains of a dataset (:mod:`research.realdata`: categorical or
exact-level ordinal profiles), every cell, budget and draw, this fits the gold-only mean and the
direct ``auto`` estimate (``smooth='none'``) on the labeled sets of
:func:`slicewise.studies.engine.study_cells` with the same seeds (so the draws are those of
``research.per_slice``), and keeps what every smoothing rule needs: the direct estimate, its pool
variance and degrees of freedom, the sampling variance the smoothing model is given (floored as
in :mod:`slicewise.methods.smoothed`), the synthetic domain covariate, the labeled effective
sizes, the gold-only estimate and variance, and the truth. :mod:`research.smoothing_frontier`
then scores smoothing rules on exactly these draws without refitting ``auto``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet, labeled_sizes
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.methods.smoothed import (
    _floored,
    disjoint_domains,
    synthetic_covariate,
)
from slicewise.studies.engine import CellSpec, matched_splits, pool_profile

from . import realdata

#: Arrays kept per (budget, draw, slice).
FIELDS = (
    "direct",
    "direct_var",
    "direct_df",
    "naive",
    "naive_var",
    "n_eff",
    "fraction",
    "covariate",
    "psi",
    "default",
    "default_var",
    "default_df",
    "default_bound",
)


def cell_draws(
    spec: CellSpec, budgets: tuple[int, ...], reps: int, seed: Any, with_default: bool = False
) -> dict[str, Any]:
    """Every kept array of one cell, each of shape (budgets, reps, G), plus the truth."""
    items = make_table(
        spec.table,
        z=spec.z,
        signals=list(spec.signals),
        label=spec.label,
        kind=spec.kind,
        func="study",
    )
    ctx = build_context(items, grid=spec.grid, bandwidth=spec.bandwidth, primary=spec.primary)
    y = np.asarray(items.label, dtype=np.float64)
    generator = np.random.default_rng(seed)
    seeds, orders = matched_splits(generator, reps, items.n_pool)
    g = ctx.grid_size
    out = {name: np.full((len(budgets), reps, g), np.nan) for name in FIELDS}
    base = MethodOptions(func="study")
    if not disjoint_domains(ctx):
        raise ValueError(f"cell {spec.name}: the grid points are not disjoint domains")
    with threadpool_limits(limits=1):
        for r, (order, sd) in enumerate(zip(orders, seeds, strict=True)):
            children = sd.spawn(len(budgets))
            for b, n in enumerate(budgets):
                index = np.sort(order[:n])
                labeled = LabeledSet(index=index, y=y[index])
                opts = replace(base, rng=np.random.default_rng(children[b]))
                with np.errstate(all="ignore"):
                    naive = METHODS["naive"].fit(ctx, labeled, opts)
                    direct = METHODS["auto"].fit(ctx, labeled, replace(opts, smooth="none"))
                    default = (
                        METHODS["auto"].fit(
                            ctx, labeled, replace(base, rng=np.random.default_rng(children[b]))
                        )
                        if with_default
                        else direct
                    )
                    cov = synthetic_covariate(ctx, labeled, opts)
                    psi = _floored(ctx, labeled, direct, direct.var_pool)
                n_eff, fraction = labeled_sizes(ctx, labeled)
                row = {
                    "direct": direct.estimate,
                    "direct_var": direct.var_pool,
                    "direct_df": direct.df if direct.df is not None else np.nan,
                    "naive": naive.estimate,
                    "naive_var": naive.var_pool,
                    "n_eff": n_eff,
                    "fraction": fraction,
                    "covariate": cov,
                    "psi": psi,
                    "default": default.estimate,
                    "default_var": default.var_pool,
                    "default_df": default.df if default.df is not None else np.nan,
                    "default_bound": default.bias_bound if default.bias_bound is not None else 0.0,
                }
                for name, value in row.items():
                    out[name][b, r] = value
    out["truth"] = pool_profile(ctx, y)
    out["z"] = np.asarray([str(v) for v in ctx.locality.labels])
    out["pool_n"] = ctx.moments("none", np.zeros((ctx.n_pool, 0))).n_eff
    return out


def _job(args: tuple[CellSpec, tuple[int, ...], int, Any, bool]) -> dict[str, Any]:
    return cell_draws(*args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=sorted(realdata.BUILDERS))
    parser.add_argument("--families", default=None)
    parser.add_argument("--budgets", default=None)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--with-default",
        action="store_true",
        help="also fit the current default (auto with its smoothing) on every draw",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    data = realdata.load(
        args.dataset, families=None if args.families is None else args.families.split(",")
    )
    budgets = (
        data.budgets if args.budgets is None else tuple(int(b) for b in args.budgets.split(","))
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for family in data.families:
        if family.kind == "continuous":
            continue
        cells = list(family.cells)
        # the seeds of study_cells(rng=seed): one child per cell
        children = np.random.default_rng(args.seed).spawn(len(cells))
        start = time.perf_counter()
        jobs = [
            (c, budgets, args.reps, child, args.with_default)
            for c, child in zip(cells, children, strict=True)
        ]
        if args.jobs == 1:
            results = [_job(j) for j in jobs]
        else:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                results = list(pool.map(_job, jobs))
        for cell, res in zip(cells, results, strict=True):
            name = f"{args.dataset}__{family.name}__{cell.name.replace('/', '_')}"
            np.savez_compressed(out / f"{name}.npz", budgets=np.asarray(budgets), **res)
        print(
            f"{args.dataset} {family.name}: {len(cells)} cells, {time.perf_counter() - start:.0f} s"
        )


if __name__ == "__main__":
    main()
