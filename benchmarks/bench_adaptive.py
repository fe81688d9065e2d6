"""Adaptive against uniform labeling (issue 14): a uniform pilot of 100 labels, then 3 batches
chosen by ``sw.next_items``, then ``sw.profile(..., inclusion='pi')``; uniform labeling at the
same expected total as the baseline.

Scenarios (full-pool truth known in each; the target is the pool profile):

* ``split-judge``: 4 ordinal levels, M = 3000; the judge is right 98% of the time on 'easy' items
  and a coin flip on the others, the easy share falling from 0.8 to 0.2 with the level (signals
  judge, easy and judge x easy); method global_cv; batches of 150.
* ``setting-b``: the LACE paper's Setting B (5 ordinal levels of 1000, K = 6, one specialist
  signal per level); method lace; batches of 150.
* ``setting-c``: Setting C (10 categories of 500, K = 6, one or two specialists per category);
  method lace; batches of 150.
* ``specialist-i3``: the continuous specialist design of Appendix I.3 (M = 3000, Z uniform,
  9 grid points 0.1-0.9, bandwidth 0.08); method lace; batches of 150.
* ``alpacaeval``, ``psn-irt``: see :func:`real_scenarios`.
* ``unieval``: UniEval (../shared/data), the four data sets of research.realdata.unieval pooled,
  Z = data set (4 categories, M = 2,890), Y = human score in [0, 1], S = the primary UniEval
  score; method global_cv; batches of 150 (:func:`unieval_pool`).
* ``llmbar``: LLMBar (../shared/data), Y = gold preference, four judges' Metrics_Reference
  verdicts, Z = subset (13 categories, M = 1,173); method global_cv; batches of 100.

Per scenario and strategy (uniform labeling at every batch multiplier): mean over the grid of
the MSE, the worst grid point's MSE, the coverage of the 95% intervals (all grid points, and the worst grid point; a slice labeled
completely has its exact mean and a zero-width interval, counted as covering when the error is
within :data:`COVER_TOL` of rounding), the mean worst-slice
half-width, and the labels uniform labeling needs for the adaptive mean worst-slice half-width
(uniform runs at batch multipliers 1, 1.25, 1.5, 2, 2.5, interpolated), hence the labels saved;
the paired never-worse comparison of :func:`never_worse`; and, beside the worst-slice metric, the
largest over the grid of the mean half-width ("worst mean half-width", which the standard errors'
own noise does not inflate) with the labels saved on it, from the same uniform curve.

``--method auto`` replaces every scenario's method by ``auto`` (the default of ``sw.profile``)
for the planning (``sw.next_items``) and for the final ``sw.profile(..., inclusion='pi')``.

Run from the repository root (single-threaded BLAS, as in the numbers quoted):
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m benchmarks.bench_adaptive [--reps 60]
[--method auto] [--only split-judge,setting-b] [--floor 0.3] [--multipliers 1,1.5,2]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.studies.paper_designs import setting_b, setting_c, specialist

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LLMBAR_JUDGES = (
    "GPT-4|Metrics_Reference",
    "PaLM2|Metrics_Reference",
    "ChatGPT|Metrics_Reference",
    "LLaMA2|Metrics_Reference",
)
MULTIPLIERS = (1.0, 1.25, 1.5, 2.0, 2.5)
COVER_TOL = 1e-9


@dataclass(frozen=True)
class Scenario:
    name: str
    draw: Callable[[np.random.Generator], pd.DataFrame]  # fully labeled pool
    z: str
    kind: str
    signals: tuple[str, ...]
    method: str
    batch: int
    redraw: bool  # a new pool per replication (simulations) or one fixed pool (real data)
    grid: tuple[float, ...] | None = None  # continuous profiles: the evaluation points
    bandwidth: float | None = None
    uncertainty: tuple[str, ...] = ()  # uncertainty= columns of next_items and profile


def judge_quality(rng: np.random.Generator, m: int = 3000) -> pd.DataFrame:
    """Judge quality by item (issue 30): Z ~ Uniform(0, 1), P(Y = 1 | z) = 0.25 + 0.5 z; on a
    random half of the items the judge is right 98% of the time, on the other half it is a fair
    coin; the confidence column is Uniform(0.6, 1) on the first half and Uniform(0, 0.4) on the
    second, so it says which half."""
    z = rng.random(m)
    y = (rng.random(m) < 0.25 + 0.5 * z).astype(float)
    good = rng.random(m) < 0.5
    right = np.where(rng.random(m) < 0.98, y, 1.0 - y)
    judge = np.where(good, right, (rng.random(m) < 0.5).astype(float))
    confidence = np.where(good, rng.uniform(0.6, 1.0, m), rng.uniform(0.0, 0.4, m))
    return pd.DataFrame({"z": z, "judge": judge, "confidence": confidence, "y": y})


def split_judge(rng: np.random.Generator, m: int = 3000) -> pd.DataFrame:
    theta = np.array([0.3, 0.5, 0.6, 0.8])
    easy_share = np.array([0.8, 0.6, 0.4, 0.2])
    level = rng.integers(1, 5, m)
    y = (rng.random(m) < theta[level - 1]).astype(float)
    easy = (rng.random(m) < easy_share[level - 1]).astype(float)
    coin = (rng.random(m) < 0.5).astype(float)
    judge = np.where(easy == 1, np.where(rng.random(m) < 0.98, y, 1 - y), coin)
    return pd.DataFrame(
        {"level": level, "easy": easy, "judge": judge, "judge_easy": judge * easy, "y": y}
    )


def llmbar_pool() -> pd.DataFrame:
    frame = pd.read_csv(DATA / "llmbar" / "pairs.csv")
    frame = frame[frame[list(LLMBAR_JUDGES)].notna().all(axis=1)].reset_index(drop=True)
    table = pd.DataFrame(
        {"subset": frame["subset"].astype(str), "y": (frame["gold_label"] == 1).astype(float)}
    )
    for judge in LLMBAR_JUDGES:  # verdict 1 -> 1, 2 -> 0, 0 (orders disagreed) -> 0.5
        table[judge] = frame[judge].map({1.0: 1.0, 2.0: 0.0, 0.0: 0.5})
    return table


def _fixed(table: pd.DataFrame) -> Callable[[np.random.Generator], pd.DataFrame]:
    """A scenario's draw that returns the same (real) pool every time."""
    return lambda rng: table


def _one_z(z: str | Sequence[str]) -> str:
    if not isinstance(z, str):
        raise ValueError(f"The adaptive benchmark needs a single profile column, got {z!r}.")
    return z


def real_scenarios() -> list[Scenario]:
    """AlpacaEval 2 (Z = dataset, first candidate of research.realdata, M = 805, batches of 60),
    PSN-IRT (Z = benchmark, candidate model_0, S = the other 11 models, a fixed random 6,000
    of the 41,871 items as the pool, batches of 150) and UniEval (:func:`unieval_pool`, batches
    of 150); skipped when the data are absent."""
    from research import realdata

    out = []
    if (DATA / "alpaca_eval").exists():
        cell = realdata.alpaca_eval(families=["dataset"]).cells()[0]
        table = cell.table[[cell.z, *cell.signals, cell.label]].rename(columns={cell.label: "y"})
        out.append(
            Scenario(
                "alpacaeval",
                _fixed(table),
                _one_z(cell.z),
                "categorical",
                tuple(cell.signals),
                "global_cv",
                60,
                False,
            )
        )
    if (DATA / "psn_irt").exists():
        cell = realdata.psn_irt(families=["benchmark"], candidates=["model_0"]).cells()[0]
        keep = np.random.default_rng(0).choice(len(cell.table), 6000, replace=False)
        table = cell.table.iloc[np.sort(keep)][[cell.z, *cell.signals, cell.label]]
        table = table.rename(columns={cell.label: "y"}).reset_index(drop=True)
        out.append(
            Scenario(
                "psn-irt",
                _fixed(table),
                _one_z(cell.z),
                "categorical",
                tuple(cell.signals),
                "global_cv",
                150,
                False,
            )
        )
    if (DATA / "unieval").exists():
        pool = unieval_pool()
        out.append(
            Scenario(
                "unieval",
                _fixed(pool),
                "dataset",
                "categorical",
                ("unieval_score",),
                "global_cv",
                150,
                False,
            )
        )
    return out


def unieval_pool() -> pd.DataFrame:
    """UniEval (research.realdata.unieval, its 'length' cells): the four data sets pooled, Z =
    data set (Topical-Chat 360, SF-RES 1,181, SF-HOT 875, QAGS 474 texts), Y = the human score
    rescaled to [0, 1] as there, S = the cell's primary UniEval score (overall; consistency on
    QAGS)."""
    from research import realdata

    parts = []
    for cell in realdata.unieval(families=["length"]).cells():
        parts.append(
            pd.DataFrame(
                {
                    "dataset": cell.name.split("/")[0],
                    "unieval_score": cell.table[cell.primary].to_numpy(),
                    "y": cell.table[cell.label].to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def scenarios() -> list[Scenario]:
    design = setting_b(1000)
    design_c = setting_c(500)
    design_i3 = specialist(3000)
    out = [
        Scenario(
            "judge-quality",
            judge_quality,
            "z",
            "continuous",
            ("judge", "confidence"),
            "auto",
            150,
            True,
            grid=tuple(round(0.1 * k, 1) for k in range(1, 10)),
            bandwidth=0.08,
            uncertainty=("confidence",),
        ),
        Scenario(
            "split-judge",
            split_judge,
            "level",
            "ordinal",
            ("judge", "easy", "judge_easy"),
            "global_cv",
            150,
            True,
        ),
        Scenario(
            "setting-b", design.draw, "z", "ordinal", tuple(design.signal_names), "lace", 150, True
        ),
        Scenario(
            "setting-c",
            design_c.draw,
            "z",
            "categorical",
            tuple(design_c.signal_names),
            "lace",
            150,
            True,
        ),
        Scenario(
            "specialist-i3",
            design_i3.draw,
            "z",
            "continuous",
            tuple(design_i3.signal_names),
            "lace",
            150,
            True,
            grid=tuple(float(v) for v in design_i3.grid[::2]),
            bandwidth=0.08,
        ),
    ]
    out.extend(real_scenarios())
    if (DATA / "llmbar" / "pairs.csv").exists():
        pool = llmbar_pool()
        out.append(
            Scenario(
                "llmbar",
                lambda rng: pool,
                "subset",
                "categorical",
                LLMBAR_JUDGES,
                "global_cv",
                100,
                False,
            )
        )
    return out


def with_pilot(full: pd.DataFrame, n0: int, rng: np.random.Generator) -> pd.DataFrame:
    """The pool with the label kept on a uniform random ``n0`` of its rows (the pilot)."""
    table = full.copy()
    pilot = np.zeros(len(table), dtype=bool)
    pilot[rng.choice(len(table), n0, replace=False)] = True
    table.loc[~pilot, "y"] = np.nan
    return table


@dataclass(frozen=True)
class Start:
    """A replication's pool, its pilot of 100 labels, the keywords of the scenario's columns
    (with its uncertainty= columns) and the pool profile (the truth)."""

    rng: np.random.Generator
    full: pd.DataFrame
    table: pd.DataFrame
    common: dict[str, Any]
    truth: np.ndarray


def start(sc: Scenario, seed: int) -> Start:
    """Replication ``seed`` of scenario ``sc``: what every protocol starts from."""
    rng = np.random.default_rng(seed)
    full = sc.draw(rng)
    table = with_pilot(full, 100, rng)
    common: dict[str, Any] = dict(z=sc.z, signals=list(sc.signals), label="y", kind=sc.kind)
    if sc.grid is not None:
        common.update(grid=list(sc.grid), bandwidth=sc.bandwidth)
    # the pool profile: the (kernel-weighted) mean of every item's label at each grid point
    truth = sw.profile(full, **{**common, "method": "naive"}).estimate
    if sc.uncertainty:
        common["uncertainty"] = list(sc.uncertainty)
    return Start(rng, full, table, common, truth)


def one_run(
    sc: Scenario,
    seed: int,
    strategy: Literal["adaptive", "uniform"],
    batch: int,
    floor: float = 0.3,
    halfwidth: float = 0.05,
) -> dict[str, np.ndarray | int]:
    begin = start(sc, seed)
    rng, full, table, truth = begin.rng, begin.full, begin.table, begin.truth
    common = {**begin.common, "method": sc.method}
    for _ in range(3):
        table = sw.next_items(
            table,
            batch=batch,
            strategy=strategy,
            floor=floor,
            halfwidth=halfwidth,
            rng=rng,
            **common,
        )
        table.loc[table["selected"], "y"] = full["y"][table["selected"]]
    res = sw.profile(table, inclusion="pi", **common)
    ci = res.ci()
    saving = res.params.get("design_saving", {})  # issue 30's report (absent before)
    return {
        "saved": np.array([saving.get(k, np.nan) for k in ("saved", "low", "high")]),
        "error": res.estimate - truth,
        # a slice labeled completely has the exact estimate and a zero-width interval: compare
        # with a tolerance for the floating-point rounding of its weighted mean
        "covered": (ci.low - COVER_TOL <= truth) & (truth <= ci.high + COVER_TOL),
        "half": (ci.high - ci.low) / 2,
        "n": int(table["y"].notna().sum()),
        # the design, for research.adaptive_oracle: every item's inclusion probability and
        # whether it ended labeled
        "pi": table["pi"].to_numpy(dtype=np.float64),
        "labeled": table["y"].notna().to_numpy(),
    }


def never_worse(
    adaptive: list[dict[str, np.ndarray | int]], uniform: list[dict[str, np.ndarray | int]]
) -> str:
    """Paired comparison at the same budget (same pools and pilots): the worst-slice half-width
    difference adaptive - uniform with its Monte-Carlo se, the ratio of the mean grid MSEs with
    its MC se (delta method on the paired runs), and the grid point where the adaptive
    design's MSE is largest relative to uniform's, that ratio and its MC se (delta method on the
    paired squared errors), in table-row form."""
    half_a = np.array([np.nanmax(r["half"]) for r in adaptive])
    half_u = np.array([np.nanmax(r["half"]) for r in uniform])
    diff = half_a - half_u
    sq_a = np.array([r["error"] for r in adaptive]) ** 2
    sq_u = np.array([r["error"] for r in uniform]) ** 2
    n = sq_a.shape[0]
    mean_a, mean_u = sq_a.mean(axis=0), sq_u.mean(axis=0)
    ratio = mean_a / mean_u
    worst = int(np.nanargmax(ratio))
    a, b, r = sq_a[:, worst], sq_u[:, worst], ratio[worst]
    cov = np.cov(a, b)
    se_ratio = np.sqrt(max(cov[0, 0] + r**2 * cov[1, 1] - 2 * r * cov[0, 1], 0.0) / n) / b.mean()
    grid_a, grid_u = np.nanmean(sq_a, axis=1), np.nanmean(sq_u, axis=1)  # each run's mean grid MSE
    mean_r = grid_a.mean() / grid_u.mean()
    c2 = np.cov(grid_a, grid_u)
    se_mean = (
        np.sqrt(max(c2[0, 0] + mean_r**2 * c2[1, 1] - 2 * mean_r * c2[0, 1], 0.0) / n)
        / grid_u.mean()
    )
    return (
        f"{diff.mean():+.4f} ({diff.std(ddof=1) / np.sqrt(n):.4f}) | {mean_r:.3f} "
        f"({se_mean:.3f}) | {worst} | {r:.2f} ({se_ratio:.2f}) |"
    )


def summarize(runs: list[dict[str, np.ndarray | int]]) -> dict[str, Any]:
    err = np.array([r["error"] for r in runs])
    cov = np.array([r["covered"] for r in runs])
    half = np.array([r["half"] for r in runs])
    mse = np.nanmean(err**2, axis=0)
    return {
        "mean_mse": float(np.nanmean(mse)),
        "worst_mse": float(np.nanmax(mse)),
        "coverage": float(np.nanmean(cov)),
        "worst_coverage": float(np.min(cov.mean(axis=0))),
        "worst_point": int(np.argmin(cov.mean(axis=0))),
        "worst_half": float(np.nanmean(np.nanmax(half, axis=1))),
        # beside it: the largest over the grid of the mean half-width (no standard-error noise)
        "worst_mean_half": float(np.nanmax(np.nanmean(half, axis=0))),
        "labels": float(np.mean([r["n"] for r in runs])),
        # the saving the profile reported (issue 30): mean of the point and of the interval ends
        "reported": np.nanmean(np.array([r["saved"] for r in runs]), axis=0),
    }


def _labels_saved(n: float, goal: float, halves: np.ndarray, labels: np.ndarray) -> str:
    """'uniform labels for goal | labels saved' cells: the uniform curve (half-widths falling as
    the labels grow) interpolated at the adaptive design's half-width ``goal``."""
    if goal > halves[0]:  # adaptive is worse than uniform at the same budget
        return f"< {labels[0]:.0f} | < {1.0 - n / labels[0]:+.0%}"
    if goal < halves[-1]:  # beyond the curve: a bound on the labels saved
        return f"> {labels[-1]:.0f} | > {1.0 - n / labels[-1]:+.0%}"
    equiv = float(np.interp(goal, halves[::-1], labels[::-1]))
    return f"{equiv:.0f} | {1.0 - n / equiv:+.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--only", default=None, help="run these scenarios (comma-separated)")
    parser.add_argument("--method", default=None, help="method for every scenario (e.g. auto)")
    parser.add_argument("--floor", type=float, default=0.3, help="uniform floor of next_items")
    parser.add_argument("--halfwidth", type=float, default=0.05, help="target of next_items")
    parser.add_argument(
        "--no-uncertainty",
        action="store_true",
        help="leave out the scenarios' uncertainty= columns (the code before issue 30)",
    )
    parser.add_argument(
        "--multipliers",
        default=",".join(f"{m:g}" for m in MULTIPLIERS),
        help="batch multipliers of the uniform curve (comma-separated, the first 1)",
    )
    parser.add_argument("--save", default=None, help="pickle every run to this file")
    args = parser.parse_args()
    multipliers = tuple(float(m) for m in args.multipliers.split(","))
    if multipliers[0] != 1.0:
        parser.error(f"--multipliers must start with 1 (the same budget). Got {args.multipliers}.")
    warnings.simplefilter("ignore")
    lines = [
        "| scenario | strategy | labels | mean grid MSE | worst-point MSE | coverage | "
        "worst-point coverage (point) | mean worst half-width | worst mean half-width |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    saved_lines: list[str] = []
    worse_lines: list[str] = []
    saved_runs: dict[str, dict[str, Any]] = {}
    for sc in scenarios():
        if args.only and sc.name not in args.only.split(","):
            continue
        if args.method:
            sc = replace(sc, method=args.method)
        if args.no_uncertainty:
            sc = replace(sc, uncertainty=())
        start = time.perf_counter()
        adaptive_runs = [
            one_run(sc, s, "adaptive", sc.batch, args.floor, args.halfwidth)
            for s in range(args.reps)
        ]
        adaptive = summarize(adaptive_runs)
        uniform_curve = []
        for mult in multipliers:
            batch = round(sc.batch * mult)
            runs = [one_run(sc, s, "uniform", batch) for s in range(args.reps)]
            if mult == 1.0:
                worse_lines.append(f"| {sc.name} | " + never_worse(adaptive_runs, runs))
            uniform_curve.append(summarize(runs))
            saved_runs.setdefault(sc.name, {})[f"uniform x{mult:g}"] = runs
        saved_runs[sc.name]["adaptive"] = adaptive_runs
        uniform = uniform_curve[0]
        rows = [("adaptive", adaptive), ("uniform", uniform)]
        curve_rows = zip(multipliers[1:], uniform_curve[1:], strict=True)
        rows += [(f"uniform, batch x{m:g}", u) for m, u in curve_rows]
        if sc.uncertainty:  # the baseline: uniform labels, the default estimate
            plain = replace(sc, uncertainty=())
            runs = [one_run(plain, s, "uniform", sc.batch) for s in range(args.reps)]
            saved_runs[sc.name]["uniform, no uncertainty="] = runs
            rows.append(("uniform, without uncertainty=", summarize(runs)))
            worse_lines.append(
                f"| {sc.name} against uniform without uncertainty= | "
                + never_worse(adaptive_runs, runs)
            )
        for name, row in rows:
            lines.append(
                f"| {sc.name} | {name} | {row['labels']:.0f} | {row['mean_mse']:.3g} | "
                f"{row['worst_mse']:.3g} | {row['coverage']:.3f} | {row['worst_coverage']:.3f} "
                f"({row['worst_point']}) | {row['worst_half']:.4f} | "
                f"{row['worst_mean_half']:.4f} |"
            )
        labels = np.array([u["labels"] for u in uniform_curve])
        cells = []
        for key in ("worst_half", "worst_mean_half"):
            halves = np.array([u[key] for u in uniform_curve])
            cells.append(_labels_saved(adaptive["labels"], adaptive[key], halves, labels))
        curve = ", ".join(
            f"{n:.0f}: {u['worst_half']:.4f}" for n, u in zip(labels, uniform_curve, strict=True)
        )
        reported = adaptive["reported"]
        saved_lines.append(
            f"| {sc.name} | {adaptive['labels']:.0f} | {adaptive['worst_half']:.4f} | "
            f"{cells[0]} | {curve} | {adaptive['worst_mean_half']:.4f} | {cells[1]} | "
            f"{reported[0]:+.0%} ({reported[1]:+.0%} to {reported[2]:+.0%}) |"
        )
        print(f"{sc.name} ({sc.method}): {time.perf_counter() - start:.0f} s", flush=True)
    print("\n".join(lines))
    print()
    print(
        "| scenario | adaptive labels | adaptive mean worst half-width | uniform labels for it | "
        "labels saved | uniform curve (labels: mean worst half-width) | adaptive worst mean "
        "half-width | uniform labels for it | labels saved on it | labels saved as the profile "
        "reported them (mean; mean 95% interval) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(saved_lines))
    print()
    print(
        "| scenario | worst half-width, adaptive - uniform (MC se) | mean grid MSE, adaptive / "
        "uniform (MC se) | grid point with the largest MSE ratio | MSE adaptive / uniform there "
        "(MC se) |"
    )
    print("|---|---|---|---|---|")
    print("\n".join(worse_lines))
    if args.save:
        import pickle

        with open(args.save, "wb") as handle:
            pickle.dump(saved_runs, handle)


if __name__ == "__main__":
    main()
