"""Speed and memory of :func:`slicewise.topics` (issue 32): 1e5 short texts in memory, 1e6
streamed from Parquet through DuckDB, and the stability of the topics between two seeds when
the fit sample is drawn from a pool larger than it.

Run from the repository root (one process; each case in a fresh interpreter, so its peak
resident memory is its own)::

    python -m benchmarks.bench_topics --rows 100000,1000000

The texts are synthetic but made of real vocabulary: each is 6-20 words of one AlpacaEval 2
instruction (the shipped demo's), shuffled, plus three words drawn from all the instructions'
words, so the pool has the instructions' topics blurred by noise. Each case runs with seeds 0 and
1, and the adjusted Rand index between their topics is reported (in memory the fit is
deterministic below the fit sample size, so it is 1 by construction; from Parquet each seed draws
its own fit sample). Reported: wall time, peak resident memory (ru_maxrss, the interpreter and
libraries included), the processor time of the process (user + system: on a machine shared with
other work it moves less than the wall time), the machine's one-minute load average when the case
started and, as a ratio, the time of a plain scikit-learn TF-IDF + k-means (same k,
``n_init=1``) on the same texts in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def synthetic_texts(n: int, seed: int = 0) -> list[str]:
    """``n`` short texts built from the demo's instructions (see the module notes)."""
    from slicewise.datasets import load_demo

    source = [t.split() for t in load_demo(instructions=True)["instruction"]]
    words = np.array([w for t in source for w in t])
    rng = np.random.default_rng(seed)
    picks = rng.integers(len(source), size=n)
    out = []
    for i, which in enumerate(picks):
        base = source[which]
        size = min(len(base), 6 + i % 15)
        body = list(rng.permutation(base)[:size]) + list(words[rng.integers(words.size, size=3)])
        out.append(" ".join(body))
    return out


def _case(kind: str, n: int, path: str | None, seed: int) -> dict[str, float]:
    import resource

    import slicewise as sw

    load = os.getloadavg()[0]
    start = time.perf_counter()
    if kind == "memory":
        frame = pd.DataFrame({"text": synthetic_texts(n)})
        made = time.perf_counter() - start
        start = time.perf_counter()
        cpu = time.process_time()
        found = sw.topics(frame, text="text", rng=seed)
    elif kind == "parquet":
        made = 0.0
        cpu = time.process_time()
        found = sw.topics(path, text="text", rng=seed)
    else:  # plain scikit-learn baseline at the same k
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer

        texts = synthetic_texts(n)
        made = time.perf_counter() - start
        start = time.perf_counter()
        cpu = time.process_time()
        matrix = TfidfVectorizer(stop_words="english").fit_transform(texts)
        KMeans(int(path or 8), n_init=1, random_state=seed).fit(matrix)
        found = None
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"seconds": seconds, "cpu": cpu, "load": load, "make_texts": made, "peak_mb": peak}
    if found is not None:
        out["k"] = float(found.cat.categories.size)
        np.save(
            Path(tempfile.gettempdir()) / f"bench_topics_{kind}_{n}_{seed}.npy", found.cat.codes
        )
    return out


def _run(kind: str, n: int, path: str | None = None, seed: int = 0) -> dict[str, float]:
    code = (
        "import json, sys; from benchmarks.bench_topics import _case; "
        f"print(json.dumps(_case({kind!r}, {n}, {path!r}, {seed})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _cells(case: dict[str, float]) -> str:
    return (
        f"{case['k']:.0f} | {case['seconds']:.1f} | {case['cpu']:.1f} | {case['load']:.1f} | "
        f"{case['peak_mb']:.0f}"
    )


def main(argv: list[str] | None = None) -> None:
    from sklearn.metrics import adjusted_rand_score

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="100000,1000000")
    args = parser.parse_args(argv)
    rows = [int(float(r)) for r in args.rows.split(",")]
    tmp = Path(tempfile.gettempdir())
    lines = [
        "| case | rows | k | seconds (wall) | seconds (processor) | load | peak RSS (MB) | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in rows:
        if n <= 200_000:
            first = _run("memory", n, seed=0)
            second = _run("memory", n, seed=1)
            a = np.load(tmp / f"bench_topics_memory_{n}_0.npy")
            b = np.load(tmp / f"bench_topics_memory_{n}_1.npy")
            ari = adjusted_rand_score(a, b)
            base = _run("sklearn", n, path=str(int(first["k"])))
            lines.append(
                f"| in memory, seed 0 | {n:,} | {_cells(first)} | "
                f"{first['cpu'] / base['cpu']:.1f}x the processor time of plain TF-IDF + "
                f"k-means ({base['seconds']:.1f} s wall, {base['cpu']:.1f} s processor, "
                f"{base['peak_mb']:.0f} MB) |"
            )
            lines.append(
                f"| in memory, seed 1 | {n:,} | {_cells(second)} | ARI with seed 0: {ari:.3f} |"
            )
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            path = tmp / f"bench_topics_{n}.parquet"
            if not path.exists():
                table = pa.table({"text": synthetic_texts(n)})
                pq.write_table(table, path, row_group_size=1 << 17)
            found = _run("parquet", n, path=str(path), seed=0)
            again = _run("parquet", n, path=str(path), seed=1)
            a = np.load(tmp / f"bench_topics_parquet_{n}_0.npy")
            b = np.load(tmp / f"bench_topics_parquet_{n}_1.npy")
            size = path.stat().st_size / 1e6
            lines.append(
                f"| streamed from Parquet ({size:.0f} MB), seed 0 | {n:,} | {_cells(found)} | "
                "fit on a sample of 100,000, assigned in batches of 131,072 |"
            )
            lines.append(
                f"| streamed from Parquet, seed 1 | {n:,} | {_cells(again)} | another fit sample; "
                f"ARI with seed 0: {adjusted_rand_score(a, b):.3f} |"
            )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
