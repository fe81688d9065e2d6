"""Does ``sw.plan`` come true when ``sw.next_items`` draws its labels? (issue 30)

Run from the repository root (single-threaded BLAS)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m research.plan_loop --reps 60 \\
        [--only split-judge,setting-b] [--strategy adaptive]

For each scenario of ``benchmarks.bench_adaptive`` (its pools, pilots and signals; the pool of
replication s drawn as :func:`benchmarks.bench_adaptive.one_run` draws it) and each replication:
a uniform pilot of 100 labels; ``sw.plan(..., halfwidth=h, strategy=...)`` with the default
method (``auto``); one ``sw.next_items`` batch of the plan's ``total_more`` items with the same
strategy; the selected items labeled; ``sw.profile(..., inclusion='pi')``. Reported per scenario:
the median over replications of the realized worst-slice half-width over the planned one (the
largest of ``PlanResult.predicted``), the share of replications within +-20% of the plan, the
labels the plan asked for, the coverage of the final intervals (all grid points, and the worst
grid point) and the safeguard's strength (``attrs['design']``). ``--rounds R`` labels in R
batches, planning again before each: round r labels 1 / (R - r) of the plan's ``total_more``
(the last round all of it), and the ratio is the last plan's, made from the labels of the
rounds before.

The targets h (:data:`TARGETS`) are about the adaptive design's mean worst half-width at 550
labels in the benchmark, so that the plan asks for a few hundred labels after the pilot.
"""

from __future__ import annotations

import argparse
import warnings
from typing import Any

import numpy as np
import pandas as pd

import slicewise as sw
from benchmarks.bench_adaptive import COVER_TOL, Scenario, scenarios, start
from slicewise.reports.markdown import markdown_table

#: Target half-width of each scenario's plan.
TARGETS = {
    "judge-quality": 0.06,
    "split-judge": 0.055,
    "setting-b": 0.03,
    "setting-c": 0.06,
    "specialist-i3": 0.045,
    "alpacaeval": 0.08,
    "psn-irt": 0.1,
    "unieval": 0.04,
    "llmbar": 0.13,
}


def one_loop(sc: Scenario, seed: int, strategy: str, rounds: int = 1) -> dict[str, Any]:
    """Pilot, then ``rounds`` times plan -> next_items -> labels; the last profile's realized
    worst half-width against the last plan's."""
    begin = start(sc, seed)
    rng, full, table, common, truth = (
        begin.rng,
        begin.full,
        begin.table,
        begin.common,
        begin.truth,
    )
    asked = 0
    for left in range(rounds, 0, -1):
        planned = sw.plan(
            table,
            halfwidth=TARGETS[sc.name],
            strategy=strategy,  # type: ignore[arg-type]
            inclusion="pi" if "pi" in table.columns else None,
            **common,
        )
        more = max(-(-int(planned.total_more) // left), 1)  # this round's share of the plan
        asked += more
        table = sw.next_items(table, batch=more, strategy=strategy, rng=rng, **common)  # type: ignore[arg-type]
        table.loc[table["selected"], "y"] = full["y"][table["selected"]]
    res = sw.profile(table, inclusion="pi", **common)
    ci = res.ci()
    half = (ci.high - ci.low) / 2
    covered = (ci.low - COVER_TOL <= truth) & (truth <= ci.high + COVER_TOL)
    return {
        "scenario": sc.name,
        "seed": seed,
        "planned": float(np.nanmax(planned.predicted)),
        "realized": float(np.nanmax(half)),
        "asked": asked,
        "labels": int(table["y"].notna().sum()),
        "coverage": float(np.mean(covered)),
        "covered": covered,
        "strength": table.attrs.get("design", {}).get("strength", np.nan),
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One table row per scenario (module notes)."""
    ratio = np.array([r["realized"] / r["planned"] for r in runs])
    covered = np.array([r["covered"] for r in runs])
    return {
        "scenario": runs[0]["scenario"],
        "reps": len(runs),
        "target": TARGETS[runs[0]["scenario"]],
        "labels asked (median)": int(np.median([r["asked"] for r in runs])),
        "planned worst (median)": round(float(np.median([r["planned"] for r in runs])), 4),
        "realized worst (median)": round(float(np.median([r["realized"] for r in runs])), 4),
        "realized / planned, median": round(float(np.median(ratio)), 3),
        "within +-20%": round(float(np.mean(np.abs(ratio - 1.0) <= 0.2)), 3),
        "range": f"{ratio.min():.2f}-{ratio.max():.2f}",
        "coverage (worst point)": f"{covered.mean():.3f} ({covered.mean(axis=0).min():.3f})",
        "strength (mean)": round(float(np.nanmean([r["strength"] for r in runs])), 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m research.plan_loop", description=__doc__)
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--strategy", default="adaptive", choices=["adaptive", "uniform"])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    chosen = None if args.only is None else set(args.only.split(","))
    rows = []
    for sc in scenarios():
        if chosen is not None and sc.name not in chosen:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = [one_loop(sc, s, args.strategy, args.rounds) for s in range(args.reps)]
        rows.append(summarize(runs))
        print(markdown_table(pd.DataFrame(rows[-1:])), flush=True)
    print()
    print(markdown_table(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
