"""Paired gaps on a simulated two-model design with a judge per model (issue 29).

Run from the repository root::

    python -m research.gap_design --reps 200

Design (seeded, known truth): 6 domains of 100 to 3,000 items (6,000 in all); two models A and B
answer every item, correctly with a probability that depends on the domain and on a latent item
difficulty the two models share, so their correctness is correlated across items; each model has
its own judge (its correctness plus Gaussian noise, sd 0.9); 400 items are labeled for both
models (simple random sampling). The target is each domain's pool gap mean(Y_A - Y_B).

Per domain over the draws: the error of ``sw.gap`` (its default, ``auto``, under each
objective) and of two separate gold-only profiles (each model's labels-only mean, differenced);
coverage of the reported 95% intervals; the bias in Monte-Carlo standard errors. Overall: the
relative efficiency mean MSE(gold-only difference) / mean MSE(gap) over domains and draws.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np
import pandas as pd

import slicewise as sw

SIZES = np.array([100, 200, 400, 800, 1500, 3000])
ABILITY_A = np.array([0.6, -0.2, 0.3, 0.1, -0.4, 0.2])
ABILITY_B = np.array([0.2, 0.1, -0.1, 0.3, -0.3, 0.0])


def pool(seed: int) -> pd.DataFrame:
    """The fully labeled wide table of the design (fixed pool)."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(SIZES.size), SIZES)
    u = rng.normal(size=g.size)
    frame = pd.DataFrame({"id": np.arange(g.size), "domain": [f"d{k}" for k in g]})
    for name, ability in (("a", ABILITY_A), ("b", ABILITY_B)):
        y = (ability[g] - u + rng.normal(0, 0.6, g.size) > 0).astype(float)
        frame[f"y_{name}"] = y
        frame[f"judge_{name}"] = y + rng.normal(0, 0.9, g.size)
    return frame


def run(reps: int, n: int, seed: int, objectives: tuple[str, ...]) -> pd.DataFrame:
    """One row per (estimator, domain): MSE, bias in MC se, coverage, and the RE."""
    full = pool(seed)
    truth = (full["y_a"] - full["y_b"]).groupby(full["domain"]).mean().to_numpy()
    rng = np.random.default_rng(seed + 1)
    err: dict[str, list[np.ndarray]] = {o: [] for o in ("gold-only", *objectives)}
    cov: dict[str, list[np.ndarray]] = {o: [] for o in objectives}
    for r in range(reps):
        frame = full.copy()
        drop = rng.permutation(len(frame))[n:]
        frame.loc[drop, ["y_a", "y_b"]] = np.nan
        labeled = frame.dropna(subset=["y_a"])
        naive = (
            labeled.groupby("domain")[["y_a", "y_b"]].mean().reindex(sorted(set(full["domain"])))
        )
        err["gold-only"].append((naive["y_a"] - naive["y_b"]).to_numpy() - truth)
        for objective in objectives:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sw.gap(
                    frame,
                    z="domain",
                    model_a="a",
                    model_b="b",
                    label={"a": "y_a", "b": "y_b"},
                    signals={"a": ["judge_a"], "b": ["judge_b"]},
                    kind="categorical",
                    objective=objective,
                    rng=r,
                )
            low, high = res.ci()
            err[objective].append(res.estimate - truth)
            cov[objective].append((low <= truth) & (truth <= high))
    rows = []
    base = np.array(err["gold-only"])
    for name, values in err.items():
        e = np.array(values)
        mcse = e.std(axis=0, ddof=1) / np.sqrt(reps)
        rows.append(
            {
                "estimator": name,
                "re": float(np.mean(base**2) / np.mean(e**2)),
                "worst_coverage": float(np.array(cov[name]).mean(axis=0).min())
                if name in cov
                else np.nan,
                "mean_coverage": float(np.array(cov[name]).mean()) if name in cov else np.nan,
                "max_abs_bias_mcse": float(np.max(np.abs(e.mean(axis=0)) / mcse)),
                "per_domain_re": " ".join(
                    f"{v:.2f}" for v in np.mean(base**2, axis=0) / np.mean(e**2, axis=0)
                ),
                "per_domain_bias_mcse": " ".join(f"{v:.1f}" for v in e.mean(axis=0) / mcse),
                "per_domain_coverage": " ".join(
                    f"{v:.3f}" for v in np.array(cov[name]).mean(axis=0)
                )
                if name in cov
                else "",
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--objectives", default="slice,ensemble")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    start = time.perf_counter()
    table = run(args.reps, args.n, args.seed, tuple(args.objectives.split(",")))
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(table.to_string(index=False))
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
