"""Matched-split study engine on 24 synthetic cells x 3 budgets x 100 splits, in 2 processes.

Cells: M = 500 items (``--pool``), K = 6 signals, continuous Z, 20 grid points (the default
grid); budgets 50, 100, 200 (nested prefixes of each split's permutation). Measured in one run:

1. ``study_cells`` with naive + lace + global_cv (issue 4's target: under 60 s on 2 cores);
2. ``study_cells`` with every registered method that runs on these cells (all but lace_oracle);
3. the same three methods refitted from scratch: ``sw.profile`` on a masked copy of the table for
   every split, budget and method (validation, kernels and pool sums redone each time), on the
   same splits and in the same number of processes; its ratio to 1, and the largest difference
   between the two sets of estimates (they must agree). 1 and 3 alternate ``--repeat`` times and
   the best time of each is kept, so that a change in the machine's load affects both;
4. peak resident memory of the parent process and of the worker processes.

Run from the repository root: python -m benchmarks.bench_study [--jobs 2] [--reps 100]
[--pool 500] [--repeat 2] [--skip-all] [--per-method]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import slicewise as sw
from slicewise.methods.registry import METHODS
from slicewise.studies.engine import CellSpec, matched_splits, study_cells

K, G = 6, 20
BUDGETS = (50, 100, 200)
CORE = ("naive", "lace", "global_cv")
SIGNALS = tuple(f"s{k}" for k in range(K))


def make_cell(seed: int, m: int = 500) -> CellSpec:
    """One synthetic cell: theta(z) logistic in z, signals whose usefulness varies with z."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    slope = rng.uniform(0.5, 2.0)
    y = (rng.random(m) < 1.0 / (1.0 + np.exp(-slope * z))).astype(float)
    gamma = rng.uniform(0.2, 1.5, K) * (1.0 + 0.5 * np.tanh(np.outer(z, rng.normal(size=K))))
    signals = gamma * y[:, None] + rng.normal(size=(m, K))
    frame = pd.DataFrame(signals, columns=list(SIGNALS))
    frame["z"] = z
    frame["y"] = y
    return CellSpec(
        name=f"cell{seed:02d}",
        table=frame,
        z="z",
        label="y",
        signals=SIGNALS,
        kind="continuous",
        primary="s0",
    )


def _scratch_cell(args: tuple[CellSpec, np.random.Generator, int, tuple[str, ...]]) -> Any:
    """Refit every split from scratch with sw.profile on a masked table (same splits)."""
    spec, generator, reps, methods = args
    m_pool = len(spec.table)
    _, orders = matched_splits(generator, reps, m_pool)
    est = np.full((len(methods), len(BUDGETS), reps, G), np.nan)
    frame = spec.table
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r, order in enumerate(orders):
            for b, n in enumerate(BUDGETS):
                masked = frame.copy()
                keep = np.zeros(m_pool, dtype=bool)
                keep[order[:n]] = True
                masked.loc[~keep, "y"] = np.nan
                for m, method in enumerate(methods):
                    result = sw.profile(
                        masked,
                        z="z",
                        signals=list(SIGNALS),
                        label="y",
                        kind="continuous",
                        method=method,
                        primary="s0",
                    )
                    est[m, b, r] = result.estimate
    return est


def _rss_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0  # Linux: kilobytes


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the measurements."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_study")
    parser.add_argument("--cells", type=int, default=24)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool", type=int, default=500, help="pool size M of every cell")
    parser.add_argument("--repeat", type=int, default=2, help="alternating runs of 1 and 3")
    parser.add_argument(
        "--skip-all", action="store_true", help="skip the run with every registered method"
    )
    parser.add_argument(
        "--per-method",
        action="store_true",
        help="also time each method alone (with naive) on 2 cells x 20 splits, one process",
    )
    args = parser.parse_args(argv)
    cells = [make_cell(s, args.pool) for s in range(args.cells)]
    every = [m for m in METHODS if m != "lace_oracle"]
    print(
        f"{args.cells} cells (M = {args.pool}, K = {K}, G = {G}, continuous Z) x budgets "
        f"{BUDGETS} x {args.reps} splits, {args.jobs} processes; {os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.1f} at start"
    )
    generators = np.random.default_rng(args.seed).spawn(args.cells)  # as study_cells seeds cells
    jobs = [(c, g, args.reps, CORE) for c, g in zip(cells, generators, strict=True)]
    t_core, t_scratch = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        core = study_cells(
            cells, methods=CORE, budgets=BUDGETS, reps=args.reps, rng=args.seed, n_jobs=args.jobs
        )
        t_core.append(time.perf_counter() - start)
        start = time.perf_counter()
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            scratch = list(pool.map(_scratch_cell, jobs))
        t_scratch.append(time.perf_counter() - start)
    fits = args.cells * len(BUDGETS) * args.reps * len(CORE)
    best = min(t_core)
    print(
        f"1. naive + lace + global_cv: {best:.1f} s (best of {', '.join(f'{t:.1f}' for t in t_core)}"
        f"; {fits} fits, {1e3 * best / fits:.2f} ms/fit)"
    )
    diff = max(
        float(np.nanmax(np.abs(s - c.estimates))) for s, c in zip(scratch, core.cells, strict=True)
    )
    print(
        f"3. from scratch (sw.profile on a masked table per split, budget and method): "
        f"{min(t_scratch):.1f} s (best of {', '.join(f'{t:.1f}' for t in t_scratch)}); ratio to "
        f"the engine {min(t_scratch) / best:.1f}x; largest |estimate difference| {diff:.1e}"
    )
    if not args.skip_all:
        start = time.perf_counter()
        study_cells(
            cells, methods=every, budgets=BUDGETS, reps=args.reps, rng=args.seed, n_jobs=args.jobs
        )
        t_all = time.perf_counter() - start
        print(f"2. all {len(every)} registered methods ({', '.join(every)}): {t_all:.1f} s")
    if args.per_method:
        rows = []
        for method in every[1:]:
            start = time.perf_counter()
            study_cells(cells[:2], methods=["naive", method], budgets=BUDGETS, reps=20, rng=0)
            seconds = time.perf_counter() - start
            rows.append(f"{method} {1e3 * seconds / (2 * len(BUDGETS) * 20):.1f}")
        print("5. ms per (split, budget) with naive, one process: " + ", ".join(rows))
    print(
        f"4. peak RSS: parent {_rss_mb(resource.RUSAGE_SELF):.0f} MB, largest worker "
        f"{_rss_mb(resource.RUSAGE_CHILDREN):.0f} MB; load average {os.getloadavg()[0]:.1f} at end"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
