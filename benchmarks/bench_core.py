"""sw.profile at M = 1,000,000 pool items, n = 10,000 labeled, K = 6, 20 grid points, continuous Z.

Times, in one run and as ratios to ``lace`` (best of ``--repeat`` calls, the paths interleaved so
that a change in the machine's load hits them alike), as wall time and as this process's
processor time (on a machine busy with other jobs, wall time includes the wait for a core and
processor time does not):

* the floor, the reference every ratio is against: the Gaussian kernel (M x G) plus one BLAS
  product of the pool's [1, S, SS'] columns (the upper triangle of SS'), the sums every LACE pool
  side needs, on arrays already extracted, with BLAS on one thread as in ``sw.profile``
  (:mod:`slicewise._threads`). It is made block by block in preallocated buffers
  (:func:`floor_sums`), as a careful hand-written pass would be; the stored version
  (:func:`floor_sums_stored`, whole (M x G) and (M x 28) arrays) spent most of its time in page
  faults and made every ratio look better than it was. The two agree to 1e-9 (checked each run);
* the same floor with slicewise's own Gaussian kernel (three exponentials per item on an equally
  spaced grid instead of one per entry, which ``sw.profile`` uses since 261e2ec): the floor of a
  pass with the faster kernel, so that a ratio to the first floor is not read as a gain that
  only the kernel brought;
* ``sw.profile`` with ``method='naive'`` (with and without signals), ``'lace'`` and the default
  ``'auto'``, validation of the DataFrame included;
* a plain per-grid-point loop that computes the same LACE estimates (checked to 1e-8).

Memory: the peak traced allocation (tracemalloc; numpy buffers are traced) inside one
``sw.profile`` call per method, in bytes per pool item, beside the input frame's own size.

With ``--runs N`` the rounds are run N times over and the spread of the ratios over the runs
(min, median, max) follows the table: on a shared machine one run's ratios move by a few tenths.

Run: python -m benchmarks.bench_core [--runs N] [--out docs/results/bench_core.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import slicewise as sw
from slicewise.locality.weights import gaussian_kernel

from ._util import peak_memory

M, N, K, G = 1_000_000, 10_000, 6, 20
SIGNALS = [f"s{k}" for k in range(K)]
#: The columns of :func:`make_frame` as ``sw.profile`` keywords.
KWARGS: dict[str, Any] = {"z": "z", "signals": SIGNALS, "label": "y", "kind": "continuous"}


def make_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=M)
    y = (rng.random(M) < 1 / (1 + np.exp(-z))).astype(float)
    signals = y[:, None] * rng.uniform(0.5, 2, K) + rng.normal(size=(M, K))
    frame = pd.DataFrame(signals, columns=SIGNALS)
    frame["z"] = z
    y[rng.permutation(M)[N:]] = np.nan
    frame["y"] = y
    return frame


#: Rows per block of the floor's pass over the pool.
FLOOR_BLOCK = 1 << 15


def floor_sums(
    z: np.ndarray, s: np.ndarray, grid: np.ndarray, h: float, *, ratios: bool = False
) -> np.ndarray:
    """The floor: Gaussian kernel (M x G) and one BLAS product with [1, S, upper SS'].

    Made in blocks of :data:`FLOOR_BLOCK` rows into preallocated kernel and column buffers (the
    elementwise steps write in place), so the floor pays for the arithmetic, not for page faults
    of stored (M x G) and (M x 28) arrays: what any pool pass must at least do. The kernel is
    exp(-u^2 / 2) entry by entry, or with ``ratios`` slicewise's own
    (:func:`slicewise.locality.weights.gaussian_kernel`: three exponentials per item on an
    equally spaced grid), the floor of a pass that uses the faster kernel.
    """
    m, k = s.shape
    rows, cols = np.triu_indices(k)
    width = 1 + k + rows.size
    kernel = np.empty((FLOOR_BLOCK, grid.size), order="F" if ratios else "C")
    columns = np.empty((FLOOR_BLOCK, width), order="F")
    columns[:, 0] = 1.0
    total = np.zeros((grid.size, width))
    grid_2d, bandwidth = grid[:, None], np.array([h])
    for start in range(0, m, FLOOR_BLOCK):
        n = min(FLOOR_BLOCK, m - start)
        block, cols_block = kernel[:n], columns[:n]
        if ratios:
            gaussian_kernel(z[start : start + n, None], grid_2d, bandwidth, out=block)
        else:
            np.subtract(z[start : start + n, None], grid[None, :], out=block)
            block /= h
            np.square(block, out=block)
            block *= -0.5
            np.exp(block, out=block)
        part = s[start : start + n]
        cols_block[:, 1 : 1 + k] = part
        for t, (a, b) in enumerate(zip(rows, cols, strict=True)):
            np.multiply(part[:, a], part[:, b], out=cols_block[:, 1 + k + t])
        total += block.T @ cols_block
    return total


def floor_sums_stored(z: np.ndarray, s: np.ndarray, grid: np.ndarray, h: float) -> np.ndarray:
    """The floor as it was first written: the whole (M x G) kernel and (M x 28) columns stored
    (kept to check :func:`floor_sums` against)."""
    kernel = np.exp(-0.5 * ((z[:, None] - grid[None, :]) / h) ** 2)
    rows, cols = np.triu_indices(s.shape[1])
    columns = np.column_stack([np.ones(s.shape[0]), s, s[:, rows] * s[:, cols]])
    return np.asarray(kernel.T @ columns)


def loop_profile(frame: pd.DataFrame, ridge: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """The obvious implementation: one pass over the pool per grid point."""
    z = frame["z"].to_numpy()
    s = frame[SIGNALS].to_numpy()
    s = (s - s.mean(0)) / s.std(0)
    y = frame["y"].to_numpy()
    lab = ~np.isnan(y)
    h = 1.5 * 1.06 * z.std(ddof=1) * M ** (-0.2)
    grid = np.linspace(*np.percentile(z, [5, 95]), G)
    est, se = np.empty(G), np.empty(G)
    for g, point in enumerate(grid):
        k = np.exp(-0.5 * ((z - point) / h) ** 2)
        w_t = k / k.sum()
        mean_t = w_t @ s
        centred = s - mean_t
        sigma_ss = (centred * w_t[:, None]).T @ centred
        w_l = k[lab] / k[lab].sum()
        sl, yl = s[lab], y[lab]
        mean_l = w_l @ sl
        sigma_sy = (sl - mean_l).T @ (w_l * (yl - w_l @ yl))
        beta = np.linalg.solve(sigma_ss + ridge * np.eye(K), sigma_sy)
        est[g] = w_l @ yl - beta @ (mean_l - mean_t)
        e = yl - sl @ beta
        se[g] = np.sqrt((w_l**2 * (e - w_l @ e) ** 2).sum())
    return est, se


def interleaved(paths: dict[str, Callable[[], Any]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best wall time and best processor time (s) of each path over ``repeat`` rounds, the paths
    run in turn each round."""
    best = dict.fromkeys(paths, (float("inf"), float("inf")))
    for _ in range(repeat):
        for name, func in paths.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            func()
            wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
            best[name] = (min(best[name][0], wall), min(best[name][1], cpu))
    return best


def one_thread(func: Callable[[], Any]) -> Callable[[], Any]:
    """``func`` with BLAS on one thread, as sw.profile runs its products."""

    def run() -> Any:
        with threadpool_limits(1, user_api="blas"):
            return func()

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_core", description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="rounds of timing (best kept)")
    parser.add_argument(
        "--runs",
        type=int,
        default=1,
        help="independent runs of the rounds; the table is the last run's, and the spread of "
        "the ratios over the runs is reported below it",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the stamped tables here")
    args = parser.parse_args(argv)

    frame = make_frame()
    z = frame["z"].to_numpy()
    s = frame[SIGNALS].to_numpy()
    s = (s - s.mean(0)) / s.std(0)
    h = float(1.5 * 1.06 * z.std(ddof=1) * M ** (-0.2))
    grid = np.linspace(*np.percentile(z, [5, 95]), G)

    def profile(method: str, signals: bool = True) -> Any:
        extra = {} if signals else {"signals": None}
        return sw.profile(frame, method=method, **{**KWARGS, **extra})

    paths: dict[str, Callable[[], Any]] = {
        "floor: Gaussian kernel + one BLAS product of [1, S, SS']": one_thread(
            lambda: floor_sums(z, s, grid, h)
        ),
        "floor with slicewise's kernel (by ratios) + the same product": one_thread(
            lambda: floor_sums(z, s, grid, h, ratios=True)
        ),
        "sw.profile, method='lace'": lambda: profile("lace"),
        "sw.profile, method='naive' (no signals)": lambda: profile("naive", signals=False),
        "sw.profile, method='naive' (6 signals passed)": lambda: profile("naive"),
        "sw.profile, method='auto' (the default)": lambda: profile("auto"),
    }
    for func in paths.values():  # warm-up: imports, first-call costs
        func()
    runs = [interleaved(paths, args.repeat) for _ in range(max(1, args.runs))]
    times = dict(runs[-1])
    times["per-grid-point loop (same LACE estimates)"] = interleaved(
        {"loop": one_thread(lambda: loop_profile(frame))}, 1
    )["loop"]
    np.testing.assert_allclose(profile("lace").estimate, loop_profile(frame)[0], rtol=1e-8)
    for ratios in (False, True):
        np.testing.assert_allclose(
            floor_sums(z, s, grid, h, ratios=ratios),
            floor_sums_stored(z, s, grid, h),
            rtol=1e-9,
            atol=1e-9,
        )
    memory = {
        "naive (no signals)": peak_memory(lambda: profile("naive", signals=False)),
        "naive (6 signals passed)": peak_memory(lambda: profile("naive")),
        "lace": peak_memory(lambda: profile("lace")),
        "auto": peak_memory(lambda: profile("auto")),
    }
    frame_bytes = frame.memory_usage(deep=True).sum()

    lace_key, auto_key = "sw.profile, method='lace'", "sw.profile, method='auto' (the default)"
    floor_key = "floor: Gaussian kernel + one BLAS product of [1, S, SS']"
    lace, lace_cpu = times[lace_key]
    floor, floor_cpu = times[floor_key]
    lines = [
        f"M={M:,} n={N:,} K={K} G={G} (continuous Z); python {sys.version.split()[0]}, numpy "
        f"{np.__version__}, {platform.machine()}; best of {args.repeat} interleaved rounds; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end (other jobs "
        "slow every path)",
        "",
        "Processor time is this process's; the floor and the loop run BLAS on one thread, as the "
        "fits of sw.profile do.",
        "",
        "| path | wall time (s) | ratio to lace | ratio to the floor | processor time (s) | "
        "ratio to lace | ratio to the floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (wall, cpu) in times.items():
        lines.append(
            f"| {name} | {wall:.3f} | {wall / lace:.2f} | {wall / floor:.2f} | {cpu:.3f} | "
            f"{cpu / lace_cpu:.2f} | {cpu / floor_cpu:.2f} |"
        )
    if len(runs) > 1:
        spread = {
            "lace / floor": [run[lace_key][1] / run[floor_key][1] for run in runs],
            "auto / lace": [run[auto_key][1] / run[lace_key][1] for run in runs],
            "auto (s)": [run[auto_key][1] for run in runs],
            "floor (s)": [run[floor_key][1] for run in runs],
        }
        lines += [
            "",
            f"Spread over {len(runs)} runs of {args.repeat} rounds in this process (processor "
            "time; the table above is the last run):",
            "",
            "| quantity | min | median | max |",
            "|---|---|---|---|",
        ]
        for name, values in spread.items():
            lines.append(
                f"| {name} | {min(values):.2f} | {float(np.median(values)):.2f} | "
                f"{max(values):.2f} |"
            )
    lines += [
        "",
        f"Peak traced memory inside one sw.profile call, beyond the input frame "
        f"({frame_bytes / M:.0f} bytes/item, {frame_bytes / 1e6:.0f} MB):",
        "",
        "| method | peak (MB) | bytes per pool item |",
        "|---|---|---|",
    ]
    for name, mb in memory.items():
        lines.append(f"| {name} | {mb:.0f} | {mb * 1e6 / M:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out is not None:
        from research.stamp import command_line, stamp

        command = command_line(["python", "-m", "benchmarks.bench_core", *(argv or sys.argv[1:])])
        header = "# sw.profile at M = 1e6: time against lace and the floor, peak memory\n\n"
        args.out.write_text(stamp(command) + "\n" + header + text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
