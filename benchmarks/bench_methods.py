"""Time per fit of every registered profile method (not a test).

Two sizes on the continuous specialist design (LACE paper, Appendix I.3; K = 6 signals, 20 grid
points): M = 500 pool items with n = 200 labels, and M = 100,000 with n = 2,000. The pool context
(standardised signals, kernels, pool-side sums) is built once per size, as in a study; each method
is fitted once to warm its caches ("first"), then timed over ``--repeats`` fits on the same labeled
set (median). Output: a markdown table with ratios to naive.

Usage::

    .venv/bin/python benchmarks/bench_methods.py [--repeats 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from threadpoolctl import threadpool_limits

from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context
from slicewise.studies.paper_designs import specialist

SIZES = ((500, 200), (100_000, 2_000))


def time_methods(m: int, n: int, repeats: int, seed: int = 0) -> dict[str, tuple[float, float]]:
    """(first fit, median of ``repeats`` fits) in seconds for every registered method."""
    rng = np.random.default_rng(seed)
    design = specialist(m)
    frame = design.draw(rng)
    frame.loc[rng.permutation(m)[n:], "y"] = np.nan
    table = make_table(frame, z="z", signals=design.signal_names, label="y", kind="continuous")
    ctx = build_context(table, grid=20, primary="s1")
    labeled = LabeledSet.from_table(table)
    out: dict[str, tuple[float, float]] = {}
    for name, spec in METHODS.items():
        options = MethodOptions(coef=np.zeros(design.n_signals), rng=np.random.default_rng(seed))
        start = time.perf_counter()
        spec.fit(ctx, labeled, options)
        first = time.perf_counter() - start
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            spec.fit(ctx, labeled, options)
            times.append(time.perf_counter() - start)
        out[name] = (first, float(np.median(times)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: library default)")
    args = parser.parse_args()
    limits = None if args.threads == 0 else args.threads
    results = {}
    with threadpool_limits(limits=limits):
        for m, n in SIZES:
            results[(m, n)] = time_methods(m, n, args.repeats)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores, "
        f"BLAS threads {args.threads or 'default'}, median of {args.repeats} fits, "
        f"load average {load[0]:.1f}"
    )
    header = "| method |"
    rule = "|---|"
    for m, n in SIZES:
        header += f" M={m:,}, n={n:,}: ms (first) | ratio to naive |"
        rule += "---|---|"
    print(header)
    print(rule)
    for name in METHODS:
        row = f"| {name} |"
        for size in SIZES:
            first, median = results[size][name]
            naive = results[size]["naive"][1]
            row += f" {1e3 * median:.1f} ({1e3 * first:.1f}) | {median / naive:.1f} |"
        print(row)


if __name__ == "__main__":
    main()
