"""Out-of-core pools: wall time and peak memory of sw.profile on a Parquet pool on disk.

Generates (once, in --dir) a pool of --rows rows in Parquet files (id, a continuous z, a
50-level categorical segment, 6 float32 signals) and --labels gold labels in a separate Parquet
file, then times, each in a fresh process (peak RSS of the whole process tree, JVM and Python
workers included, sampled from /proc every 50 ms):

* ``duckdb``: ``sw.profile('<dir>/pool/*.parquet', gold=..., on='id', method=...)``;
* ``spark``: the same on ``spark.read.parquet(...)`` in local[2] mode (session start excluded,
  reported apart);
* ``floor``: DuckDB computing the same pool sums as one SQL aggregate over the files. For
  ``lace``: kernel mass, w^2, wS, wSS' per grid point (the grid's count, sd and percentiles of z
  in a query of its own, timed); for ``auto`` (:func:`auto_floor_sql`): those of the
  standardised signals at every scale ``auto`` sums (h and 2h for a continuous profile, and the
  global sums), and the learned control variates' (every fold model's prediction, their
  average a, a^2, a x, and for a categorical profile the synthetic covariate's prediction),
  with the standardisation, grid, bandwidth and the fitted models' coefficients of the
  ``duckdb`` ``auto`` row of the same pool and profile (saved in ``--dir``; run that row
  first), and its sums checked against that row's (the note gives the largest difference);
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
import math
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
    spec_file = root / f"auto-spec-{z}.json"
    captured = capture_passes() if (engine, method) == ("duckdb", "auto") else None
    spec = None
    if (engine, method) == ("floor", "auto"):
        if not spec_file.exists():
            raise SystemExit(f"{spec_file} is missing: run the duckdb auto row of --z {z} first")
        spec = json.loads(spec_file.read_text())
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
        if engine == "floor" and spec is not None:
            import duckdb

            files = str(root / "pool" / "*.parquet")
            found = duckdb.connect().sql(auto_floor_sql(files, spec)).fetchall()
        elif engine == "floor":
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
    if spec is not None:
        out["largest_difference"] = largest_difference(floor_sums(found, spec), spec["sums"])
    if captured is not None:
        spec_file.write_text(json.dumps(auto_spec(captured)))
    return out


def floor(root: Path, z: str) -> int:
    """The pool sums of ``lace`` as one DuckDB SQL aggregate (grid and bandwidth computed as sw
    computes them, in the timed query: count, sd and percentiles of z)."""
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


# ---------------------------------------------------------------------------------------------
# the floor of auto: its pool sums (the signals' and the learned control variates') in one query


def _number(value: float) -> str:
    return "'Infinity'::DOUBLE" if math.isinf(value) else f"{value:.17e}"


def _triangle(k: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(k) for b in range(a, k)]


def auto_floor_sql(files: str, spec: dict[str, Any]) -> str:
    """The pool sums that ``auto``'s pool side computes, as one DuckDB aggregate over ``files``,
    given the standardisation of the signals, the grid and bandwidth (continuous) and the
    fitted models' coefficients of ``spec`` (:func:`auto_spec`).

    Categorical (``spec['z']`` a text column), per level: the count, the sums of the standardised
    signals x and of x_a x_b (a <= b), of each fold model's prediction p_m = expit(a_m(level) +
    b_m(level)' x), of their average a, a^2, a x, and of the synthetic covariate's prediction
    (one logistic model of x). Continuous, per grid point g and per scale s x h (``scales``), with
    w = exp(-0.5 ((z - g) / (s h))^2): sum w, w^2, w x, w x_a x_b, w a, w a^2, w a x, and at h
    also w p_m, the fold models predicting from [x, zs, square, zs x] (the learner's design);
    one more group with an infinite bandwidth (w = 1) gives the global sums.
    """
    k = len(spec["signals"])
    x = [f"x{j}" for j in range(k)]
    scanned = [
        f"(CAST({name} AS DOUBLE) - {_number(m)}) / {_number(s)} AS x{j}"
        for j, (name, m, s) in enumerate(
            zip(spec["signals"], spec["mean"], spec["scale"], strict=True)
        )
    ]
    pairs = _triangle(k)
    products = [f"x{a} * x{b} AS xx{t}" for t, (a, b) in enumerate(pairs)]
    source = f"read_parquet('{files}')"
    if spec["kind"] == "categorical":
        logits = np.asarray(spec["logits"])  # (levels, models, 1 + k)
        folds = logits.shape[1]
        names = [f"c{m}_{j}" for m in range(folds) for j in range(1 + k)]
        values = ", ".join(
            "(" + ", ".join(["'" + str(level).replace("'", "''") + "'"]
                            + [_number(float(v)) for v in row.ravel()]) + ")"
            for level, row in zip(spec["levels"], logits, strict=True)
        )  # fmt: skip
        etas = [
            " + ".join([f"c{m}_0", *(f"c{m}_{j + 1} * x{j}" for j in range(k))])
            for m in range(folds)
        ]
        if spec["synthetic"] is not None:
            b = spec["synthetic"]
            etas.append(
                " + ".join(
                    [_number(b[0]), *(f"{_number(c)} * {v}" for c, v in zip(b[1:], x, strict=True))]
                )
            )
        p = [f"1 / (1 + exp(-({eta}))) AS p{m}" for m, eta in enumerate(etas)]
        average = f"({' + '.join(f'p{m}' for m in range(folds))}) / {folds} AS a"
        sums = ["count(*)", *(f"sum({v})" for v in x)]
        sums += [f"sum(x{a} * x{b})" for a, b in pairs]
        sums += [f"sum(p{m})" for m in range(len(etas))]
        sums += ["sum(a)", "sum(a * a)", *(f"sum(a * {v})" for v in x)]
        return (
            f"SELECT level, {', '.join(sums)} FROM (SELECT *, {average} FROM (SELECT level, "
            f"{', '.join([*x, *p])} FROM (SELECT {spec['z']} AS level, {', '.join(scanned)} "
            f"FROM {source}) JOIN (VALUES {values}) AS models(level, {', '.join(names)}) "
            "USING (level))) GROUP BY level"
        )
    z_mean, z_scale, square_mean, square_scale = spec["basis"]
    models = np.asarray(spec["models"])  # (folds, 1 + 3 k + 1 ... ): intercept, coefficients
    folds = models.shape[0]
    design = [*x, "zs", "sq", *(f"zs * x{j}" for j in range(k))]
    etas = [
        " + ".join(
            [
                _number(row[0]),
                *(f"{_number(c)} * {d}" for c, d in zip(row[1:], design, strict=True)),
            ]
        )
        for row in models
    ]
    p = [f"1 / (1 + exp(-({eta}))) AS p{m}" for m, eta in enumerate(etas)]
    learned = [f"p{m}" for m in range(folds)]
    rows = (
        f"SELECT z, {', '.join([*x, *products, *p])} FROM (SELECT *, (zs * zs - "
        f"{_number(square_mean)}) / {_number(square_scale)} AS sq FROM (SELECT z, "
        f"(z - {_number(z_mean)}) / {_number(z_scale)} AS zs, {', '.join(scanned)} FROM {source}))"
    )
    made = (
        f"SELECT *, a * a AS aa, {', '.join(f'a * x{j} AS ax{j}' for j in range(k))} FROM "
        f"(SELECT *, ({' + '.join(learned)}) / {folds} AS a FROM ({rows}))"
    )
    shared = [*x, *(f"xx{t}" for t in range(len(pairs))), "a", "aa", *(f"ax{j}" for j in range(k))]
    h = float(spec["bandwidth"])
    grid = [(i, float(g), [s * h for s in spec["scales"]]) for i, g in enumerate(spec["grid"])]
    grid.append((len(grid), 0.0, [math.inf for _ in spec["scales"]]))
    table = ", ".join(
        f"({i}, {_number(g)}, {', '.join(_number(b) for b in widths)})" for i, g, widths in grid
    )
    w_names = [f"w{i}" for i in range(len(spec["scales"]))]
    kernels = [f"exp(-0.5 * ((z - g) / h{i}) ** 2) AS {w}" for i, w in enumerate(w_names)]
    sums = []
    for i, w in enumerate(w_names):
        sums += [f"sum({w})", f"sum({w} * {w})", *(f"sum({w} * {c})" for c in shared)]
        if spec["scales"][i] == 1.0:
            sums += [f"sum({w} * {c})" for c in learned]
    columns = ", ".join(shared + learned)
    return (
        f"SELECT gi, {', '.join(sums)} FROM (SELECT gi, {', '.join(kernels)}, {columns} FROM "
        f"({made}) CROSS JOIN (VALUES {table}) AS grid(gi, g, "
        f"{', '.join(f'h{i}' for i in range(len(w_names)))})) GROUP BY gi"
    )


def floor_sums(found: list[tuple[Any, ...]], spec: dict[str, Any]) -> dict[str, Any]:
    """The rows of :func:`auto_floor_sql` as named arrays, in the layout of
    :func:`slicewise_sums`."""
    k = len(spec["signals"])
    t = k * (k + 1) // 2
    rows = {row[0]: np.asarray(row[1:], dtype=np.float64) for row in found}
    if spec["kind"] == "categorical":
        table = np.vstack([rows[level] for level in spec["levels"]])
        folds = np.asarray(spec["logits"]).shape[1]
        cut = np.cumsum([1, k, t, folds, 1 if spec["synthetic"] is not None else 0, 1, 1, k])
        parts = np.split(table, cut, axis=1)
        out = dict(zip(["count", "x", "xx", "p", "q", "a", "aa", "ax"], parts[:-1], strict=True))
        if spec["synthetic"] is None:
            del out["q"]
        return out
    table = np.vstack([rows[i] for i in range(len(spec["grid"]) + 1)])
    folds = len(spec["models"])
    out = {}
    start = 0
    for s in spec["scales"]:
        widths = {"w": 1, "ww": 1, "x": k, "xx": t, "a": 1, "aa": 1, "ax": k}
        if s == 1.0:
            widths["p"] = folds
        for name, width in widths.items():
            out[f"{s}:{name}"] = table[:-1, start : start + width]
            if s == spec["scales"][0] and name != "ww" and name != "p":
                out[f"inf:{name}"] = table[-1:, start : start + width]
            start += width
    return out


def slicewise_sums(captured: list[tuple[Any, Any]], kind: str) -> dict[str, Any]:
    """auto's pool sums as the DuckDB source's passes gave them (``captured``: (pass, state)
    pairs), named as in :func:`floor_sums`."""
    states = {type(p).__name__: (p, state) for p, state in captured}
    if kind == "categorical":
        pass_, moments = states["MomentsPass"]
        order = np.argsort(pass_.locality.grid[:, 0])
        sums = moments[1.0]
        learned_pass, learned = states["ColumnSumsPass"]
        block = learned[1.0][order]
        folds = len(getattr(learned_pass.compute, "first", learned_pass.compute).models)
        k = len(pass_.signals)
        out = {
            "count": sums.mass[order, None],
            "x": sums.first[order],
            "xx": sums.second[order],
            "p": block[:, 1 : 1 + folds],
            "a": block[:, 1 + folds : 2 + folds],
            "aa": block[:, 2 + folds : 3 + folds],
            "ax": block[:, 3 + folds : 3 + folds + k],
        }
        if block.shape[1] > 3 + folds + k:
            out["q"] = block[:, 3 + folds + k :]
        return out
    fused, (moments, learned) = states["FusedPass"]
    folds = len(fused.compute.models)
    k = len(fused.reader.signals)
    out = {}
    for s, sums in moments.items():
        name = "inf" if math.isinf(s) else str(float(s))
        block = learned[s]
        out.update(
            {
                f"{name}:w": sums.mass[:, None],
                f"{name}:x": sums.first,
                f"{name}:xx": sums.second,
                f"{name}:a": block[:, 1 + folds : 2 + folds],
                f"{name}:aa": block[:, 2 + folds : 3 + folds],
                f"{name}:ax": block[:, 3 + folds : 3 + folds + k],
            }
        )
        if not math.isinf(s):
            out[f"{name}:ww"] = sums.sq_mass[:, None]
        if s == 1.0:
            out[f"{name}:p"] = block[:, 1 : 1 + folds]
    return out


def auto_spec(captured: list[tuple[Any, Any]]) -> dict[str, Any]:
    """What :func:`auto_floor_sql` is given, from the passes of a DuckDB ``auto`` run
    (``captured``: (pass, state) pairs): the standardisation of the signals, the grid and the
    bandwidth, the fitted fold models' (and synthetic covariate's) coefficients, and the sums
    the run found (:func:`slicewise_sums`)."""
    from slicewise.sources.kernel_passes import level_logits

    states = {type(p).__name__: p for p, _ in captured}
    if "FusedPass" in states:
        fused = states["FusedPass"]
        reader, compute = fused.reader, fused.compute
        basis = compute.basis
        spec: dict[str, Any] = {
            "kind": "continuous",
            "grid": reader.locality.grid[:, 0].tolist(),
            "bandwidth": float(reader.locality.bandwidth[0]),
            "scales": sorted(float(s) for s in reader.scales if not math.isinf(s)),
            "basis": [
                float(basis.z_mean[0]),
                float(basis.z_scale[0]),
                float(basis.square_mean[0]),
                float(basis.square_scale[0]),
            ],
            "models": [[float(m.intercept), *map(float, m.coef)] for m in compute.models],
        }
    else:
        learned = states["ColumnSumsPass"]
        reader = learned.reader
        compute = getattr(learned.compute, "first", learned.compute)
        synthetic = getattr(learned.compute, "second", None)
        codes = np.arange(len(reader.levels), dtype=np.float64)
        logits = level_logits(
            compute.models, codes, len(reader.signals), compute.kind, compute.learner, compute.basis
        )
        assert logits is not None
        spec = {
            "kind": "categorical",
            "levels": list(reader.levels),
            "logits": logits.tolist(),
            "synthetic": None
            if synthetic is None
            else [float(synthetic.model.intercept), *map(float, synthetic.model.coef)],
        }
    spec.update(
        z=reader.z[0],
        signals=list(reader.signals),
        mean=[float(v) for v in reader.mean],
        scale=[float(v) for v in reader.scale],
    )
    found = slicewise_sums(captured, spec["kind"])
    spec["sums"] = {name: value.tolist() for name, value in found.items()}
    return spec


def capture_passes() -> list[tuple[Any, Any]]:
    """Records every (pass, state) the DuckDB source runs from now on, in this process."""
    from slicewise.sources import duckdb as duckdb_source

    captured: list[tuple[Any, Any]] = []
    run = duckdb_source.DuckDBSource.run

    def logged(self: Any, pass_: Any) -> Any:
        state = run(self, pass_)
        captured.append((pass_, state))
        return state

    duckdb_source.DuckDBSource.run = logged  # type: ignore[method-assign]
    return captured


def largest_difference(a: dict[str, Any], b: dict[str, Any]) -> float:
    """The largest |a - b| / max(|b|, 1) over the sums both name."""
    return max(
        float(np.max(np.abs(np.asarray(a[n]) - np.asarray(b[n])) / np.maximum(np.abs(b[n]), 1.0)))
        for n in set(a) & set(b)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e7, help="pool rows (default 1e7)")
    parser.add_argument("--labels", type=int, default=10_000, help="gold labels (10,000)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/slicewise-bench-pool"))
    parser.add_argument("--engines", default="duckdb,floor,spark", help="and memory")
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
            for method in args.methods.split(","):
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
                if "largest_difference" in out:
                    note += f"; sums within {out['largest_difference']:.0e} of duckdb auto's"
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
