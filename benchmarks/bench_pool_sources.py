"""Out-of-core pools: wall time and peak memory of sw.profile on a Parquet pool on disk.

Generates (once, in --dir) a pool of --rows rows in Parquet files (id, a continuous z, a
50-level categorical segment, 6 float32 signals) and --labels gold labels in a separate Parquet
file, then times, each in a fresh process (peak RSS of the whole process tree, JVM and Python
workers included, sampled from /proc every 50 ms):

* ``duckdb``: ``sw.profile('<dir>/pool/*.parquet', gold=..., on='id', method=...)``;
* ``spark``: the same on ``spark.read.parquet(...)`` in local[2] mode (session start excluded,
  reported apart);
* ``floor``: DuckDB computing the same pool sums (kernel mass, w^2, wS, wSS' per grid point) as
  one SQL aggregate over the files, on a grid and bandwidth given to it;
* ``memory``: the in-memory path, ``sw.profile(frame, ...)`` on the pool read into a pandas
  frame with the gold labels merged in; besides the time, the peak RSS beyond the process's
  RSS with the frame loaded, per row (the bytes per item beyond the input frame).

Methods: ``--methods lace,auto`` (``auto`` is the default method of ``sw.profile``). Beside the
wall time, the processor time of the measuring process (all its threads: DuckDB's too; not for
Spark, whose work is in other processes), less sensitive than the wall time to other work on a
loaded machine.

Run:  python -m benchmarks.bench_pool_sources --rows 10000000
Not a test: numbers go to docs/results/bench_pool_sources.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

SIGNALS = [f"s{i}" for i in range(6)]
ROWS_PER_FILE = 2_000_000


def generate(root: Path, rows: int, labels: int, seed: int = 0) -> None:
    """Write pool/part-*.parquet and gold.parquet under ``root`` (skipped when present)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = root / f"done-{rows}-{labels}"
    if done.exists():
        return
    (root / "pool").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    segments = np.asarray([f"segment_{i:02d}" for i in range(50)])
    graded = np.sort(rng.choice(rows, size=labels, replace=False))
    gold_y = []
    for start in range(0, rows, ROWS_PER_FILE):
        m = min(ROWS_PER_FILE, rows - start)
        z = rng.normal(size=m)
        code = rng.integers(0, 50, size=m)
        p = 1.0 / (1.0 + np.exp(-(0.8 * z + 0.02 * code - 0.5)))
        y = (rng.random(m) < p).astype(np.float32)
        columns: dict[str, Any] = {
            "id": np.arange(start, start + m, dtype=np.int64),
            "z": z,
            "segment": segments[code],
        }
        for k, name in enumerate(SIGNALS):
            noise = rng.normal(0.0, 0.6 + 0.3 * k, size=m)
            columns[name] = (y * (1.0 - 0.15 * k) + noise).astype(np.float32)
        table = pa.table(columns)
        pq.write_table(table, root / "pool" / f"part-{start // ROWS_PER_FILE:04d}.parquet")
        inside = graded[(graded >= start) & (graded < start + m)] - start
        gold_y.append(np.column_stack([inside + start, y[inside]]))
    gold = np.vstack(gold_y)
    pq.write_table(
        pa.table({"id": gold[:, 0].astype(np.int64), "human": gold[:, 1]}), root / "gold.parquet"
    )
    done.touch()


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


class PeakRSS:
    """Samples the process tree's RSS in a thread; ``peak`` in bytes."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            time.sleep(0.05)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss(os.getpid()))


def run_one(engine: str, root: Path, z: str, method: str) -> dict[str, Any]:
    """One measurement in this process (called in a fresh child process)."""
    import slicewise as sw

    pool = str(root / "pool" / "*.parquet")
    gold = root / "gold.parquet"
    out: dict[str, Any] = {"engine": engine, "z": z, "method": method}
    profile = sw.profile  # import the package's modules before the clock starts
    if engine == "memory":
        import pandas as pd

        frame = pd.read_parquet(root / "pool").merge(pd.read_parquet(gold), on="id", how="left")
        # the heavy modules the methods import on first use, before the baseline (fixed costs)
        import scipy.optimize
        import scipy.stats  # noqa: F401
        import sklearn.linear_model  # noqa: F401

        base = _tree_rss(os.getpid())
        with PeakRSS() as rss:
            start = time.perf_counter()
            res = profile(frame, z=z, signals=SIGNALS, label="human", method=method)
            out["seconds"] = time.perf_counter() - start
        out["estimate_head"] = [float(v) for v in res.estimate[:3]]
        out["peak_rss_mb"] = rss.peak / 1e6
        out["beyond_frame_mb"] = (rss.peak - base) / 1e6
        return out
    with PeakRSS() as rss:
        if engine == "spark":
            os.environ["PYSPARK_PYTHON"] = sys.executable
            from pyspark.sql import SparkSession

            start = time.perf_counter()
            spark = (
                SparkSession.builder.master("local[2]")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.memory", "1g")
                .config("spark.sql.execution.arrow.maxRecordsPerBatch", "131072")
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            out["session_s"] = time.perf_counter() - start
            source: Any = spark.read.parquet(str(root / "pool"))
        elif engine == "duckdb":
            source = pool
        start = time.perf_counter()
        processor = time.process_time()  # every thread of this process (DuckDB's included)
        if engine == "floor":
            out["result"] = floor(root, z)
        else:
            res = profile(
                source, gold=gold, on="id", z=z, signals=SIGNALS, label="human", method=method
            )
            out["estimate_head"] = [float(v) for v in res.estimate[:3]]
        out["seconds"] = time.perf_counter() - start
        if engine != "spark":  # Spark's work is in its JVM and Python workers
            out["processor_s"] = time.process_time() - processor
    out["peak_rss_mb"] = rss.peak / 1e6
    return out


def floor(root: Path, z: str) -> int:
    """The pool sums as one DuckDB SQL aggregate (grid and bandwidth given, as sw computes them)."""
    import duckdb

    files = str(root / "pool" / "*.parquet")
    con = duckdb.connect()
    pairs = [(a, b) for i, a in enumerate(SIGNALS) for b in SIGNALS[i:]]
    if z == "segment":
        sums = ", ".join(
            ["count(*)"]
            + [f"sum({s})" for s in SIGNALS]
            + [f"sum({a}::DOUBLE * {b})" for a, b in pairs]
        )
        sql = f"SELECT segment, {sums} FROM read_parquet('{files}') GROUP BY segment"
    else:
        n, sd, lo, hi = con.sql(
            f"SELECT count(*), stddev_samp(z), quantile_cont(z, 0.05), quantile_cont(z, 0.95) "
            f"FROM read_parquet('{files}')"
        ).fetchall()[0]
        h = 1.5 * 1.06 * sd * n ** (-0.2)
        grid = ", ".join(repr(float(g)) for g in np.linspace(lo, hi, 20))
        sums = ", ".join(
            ["sum(w)", "sum(w * w)"]
            + [f"sum(w * {s})" for s in SIGNALS]
            + [f"sum(w * {a} * {b})" for a, b in pairs]
        )
        sql = (
            f"SELECT g, {sums} FROM (SELECT g, exp(-0.5 * ((z - g) / {h}) ** 2) AS w, "
            f"{', '.join(SIGNALS)} FROM read_parquet('{files}') CROSS JOIN "
            f"(SELECT unnest([{grid}]) AS g)) GROUP BY g"
        )
    return len(con.sql(sql).fetchall())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7, help="pool rows (default 1e7)")
    parser.add_argument("--labels", type=int, default=10_000, help="gold labels (10,000)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/slicewise-bench-pool"))
    parser.add_argument("--engines", default="floor,duckdb,spark", help="and memory")
    parser.add_argument("--methods", default="lace,auto")
    parser.add_argument("--z", default="z,segment", help="profiles: z (continuous), segment")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # engine,z,method
    args = parser.parse_args(argv)
    rows = int(args.rows)
    root = args.dir / f"rows-{rows}"
    if args.one is not None:
        engine, z, method = args.one.split(",")
        print(json.dumps(run_one(engine, root, z, method)))
        return
    start = time.perf_counter()
    generate(root, rows, args.labels)
    print(f"pool of {rows:,} rows in {root} ({time.perf_counter() - start:.0f} s to generate)")
    load = os.getloadavg()[0]
    print(f"load average at start: {load:.1f} on {os.cpu_count()} cores")
    print("| engine | z | method | seconds | peak RSS (MB) | bytes / row | note |")
    print("|---|---|---|---|---|---|---|")
    for z in args.z.split(","):
        for engine in args.engines.split(","):
            for method in ["-"] if engine == "floor" else args.methods.split(","):
                command = [
                    sys.executable, "-m", "benchmarks.bench_pool_sources", "--rows", str(rows),
                    "--labels", str(args.labels), "--dir", str(args.dir),
                    "--one", f"{engine},{z},{method}",
                ]  # fmt: skip
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode != 0:
                    print(f"| {engine} | {z} | {method} | failed: {done.stderr[-300:]!r} |")
                    continue
                out = json.loads(done.stdout.strip().splitlines()[-1])
                note = f"session start {out['session_s']:.1f} s" if "session_s" in out else ""
                if "processor_s" in out:
                    note = f"processor {out['processor_s']:.1f} s"
                if "beyond_frame_mb" in out:
                    note = f"{out['beyond_frame_mb'] * 1e6 / rows:.0f} bytes / row beyond the frame"
                print(
                    f"| {engine} | {z} | {method} | {out['seconds']:.1f} | "
                    f"{out['peak_rss_mb']:.0f} | {out['peak_rss_mb'] * 1e6 / rows:.1f} | {note} "
                    f"(load {os.getloadavg()[0]:.1f}) |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
