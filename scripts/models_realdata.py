"""Real-data check of paired gaps and deployment scores on PSN-IRT.

The numbers of docs/results/models_gaps_deploy.md.

Run from the repository root:

    .venv/bin/python scripts/models_realdata.py [--draws 200] [--n 2000]

The table ``../shared/data/psn_irt/items.csv`` is fully labeled (12 models x 41,871 items), so the
full-pool values are known; each draw masks all but n random items (the same items for every
model) and re-estimates. Cheap signals are other models' correctness (item-level signals, shared
by the two models of the gap): never the candidates' own columns.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.reports.markdown import markdown_table

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "psn_irt" / "items.csv"
A, B = "model_0", "model_5"
DEPLOY = {"HumanEval": 0.25, "MBPP": 0.25, "GSM8K": 0.25, "MATH": 0.25}


def load() -> tuple[pd.DataFrame, list[str], list[str]]:
    items = pd.read_csv(DATA)
    models = [f"model_{k}" for k in range(12)]
    others_gap = [m for m in models if m not in (A, B)]
    others_a = [m for m in models if m != A]
    # leak-free difficulty for the gap: share of the other 10 models correct (11 ordinal levels)
    items["difficulty"] = (10 * items[others_gap].mean(axis=1)).round().astype(int)
    return items, others_gap, others_a


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.nanmean(np.where(den > 0, num / np.where(den > 0, den, 1), np.nan), 0))


def masked(items: pd.DataFrame, keep: np.ndarray, cols: tuple[str, ...] = (A, B)) -> pd.DataFrame:
    out = items.copy()
    drop = np.ones(len(out), dtype=bool)
    drop[keep] = False
    for col in cols:
        values = out[col].to_numpy(dtype=float)
        values[drop] = np.nan
        out[col] = values
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    items, others_gap, others_a = load()
    labels = {A: A, B: B}
    gap_kw = {"label": labels, "signals": others_gap, "kind": "categorical"}
    truth_bench = (items[A] - items[B]).groupby(items["benchmark"]).mean().sort_index().to_numpy()
    truth_diff = (items[A] - items[B]).groupby(items["difficulty"]).mean().sort_index().to_numpy()
    counts = items["benchmark"].value_counts().sort_index()
    truth_deploy = float(
        sum(w * items.loc[items["benchmark"] == k, A].mean() for k, w in DEPLOY.items())
    )

    # one draw, shown in the note
    rng = np.random.default_rng(args.seed)
    keep = rng.permutation(len(items))[: args.n]
    one = masked(items, keep)
    one_a = masked(items, keep, (A,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shown = {
            m: sw.gap(one, z="benchmark", model_a=A, model_b=B, method=m, **gap_kw)
            for m in ("naive", "lace", "global_cv")
        }
        shown_diff = sw.gap(
            one,
            z="difficulty",
            model_a=A,
            model_b=B,
            label=labels,
            signals=others_gap,
            kind="ordinal",
            method="global_cv",
        )
        dep = {
            m: sw.deployment_score(
                one_a, z="benchmark", signals=others_a, label=A, deploy=DEPLOY, method=m
            )
            for m in ("lace", "global_cv")
        }
    frame = shown["global_cv"].to_frame()[["z", "estimate", "se", "naive_estimate", "naive_se"]]
    frame.insert(1, "items", counts.to_numpy())
    frame.insert(2, "truth", truth_bench)
    frame["lace"] = shown["lace"].estimate
    frame["lace_se"] = shown["lace"].se
    print(f"## One draw (seed {args.seed}, n = {args.n}): gap {A} - {B} by benchmark\n")
    print(markdown_table(frame, 4))
    diff = shown_diff.to_frame()[["z", "estimate", "se", "naive_estimate", "naive_se"]]
    diff.insert(1, "truth", truth_diff)
    print(f"\n## Same draw: gap {A} - {B} by difficulty (share of the other 10 correct x 10)\n")
    print(markdown_table(diff, 4))
    print(f"\n## Same draw: deployment score of {A}, mix {DEPLOY}\n")
    rows = [
        {
            "method": m,
            "estimate": d.estimate,
            "se": d.se,
            "naive": d.naive_estimate,
            "naive_se": d.naive_se,
            "truth": truth_deploy,
        }
        for m, d in dep.items()
    ]
    print(markdown_table(pd.DataFrame(rows), 4))
    print("\n" + markdown_table(dep["global_cv"].contributions(), 4))

    # repeated draws
    start = time.process_time()
    est = {m: [] for m in ("naive", "lace", "global_cv")}
    se = {m: [] for m in est}
    sep = []
    dep_est = {m: [] for m in ("naive", "lace", "global_cv")}
    dep_se = {m: [] for m in dep_est}
    for _ in range(args.draws):
        keep = rng.permutation(len(items))[: args.n]
        data = masked(items, keep)
        data_a = masked(items, keep, (A,))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m in ("lace", "global_cv"):
                res = sw.gap(data, z="benchmark", model_a=A, model_b=B, method=m, **gap_kw)
                est[m].append(res.estimate)
                se[m].append(res.se)
                d = sw.deployment_score(
                    data_a, z="benchmark", signals=others_a, label=A, deploy=DEPLOY, method=m
                )
                dep_est[m].append(d.estimate)
                dep_se[m].append(d.se)
            est["naive"].append(res.naive_estimate)
            se["naive"].append(res.naive_se)
            dep_est["naive"].append(d.naive_estimate)
            dep_se["naive"].append(d.naive_se)
            each = [
                sw.profile(data, z="benchmark", label=m, method="naive", kind="categorical")
                for m in (A, B)
            ]
            sep.append(np.sqrt(each[0].se ** 2 + each[1].se ** 2))
    cpu = time.process_time() - start
    print(f"\n## {args.draws} label draws of n = {args.n} (CPU {cpu:.0f} s)\n")
    rows = []
    mse_naive = np.nanmean((np.array(est["naive"]) - truth_bench) ** 2, axis=0)
    for m in est:
        e = np.array(est[m])
        s = np.array(se[m])
        mse = np.nanmean((e - truth_bench) ** 2, axis=0)
        cover = np.nanmean(np.abs(e - truth_bench) <= 1.959964 * s, axis=0)
        rows.append(
            {
                "method": m,
                "RE (sum of MSE over benchmarks)": mse_naive.sum() / mse.sum(),
                "RE median over benchmarks": float(np.median(mse_naive / mse)),
                "RE min": float(np.min(mse_naive / mse)),
                "coverage (pooled)": float(np.nanmean(cover)),
                "coverage min": float(np.min(cover)),
                "NaN se (share)": float(np.mean(~np.isfinite(s))),
            }
        )
    print(markdown_table(pd.DataFrame(rows), 3))
    per = pd.DataFrame(
        {
            "benchmark": counts.index,
            "items": counts.to_numpy(),
            "RE lace": mse_naive / np.nanmean((np.array(est["lace"]) - truth_bench) ** 2, axis=0),
            "RE global_cv": mse_naive
            / np.nanmean((np.array(est["global_cv"]) - truth_bench) ** 2, axis=0),
            "paired naive se / sqrt(se_a^2 + se_b^2)": _ratio(np.array(se["naive"]), np.array(sep)),
        }
    )
    print("\n" + markdown_table(per, 3))
    print("\nDeployment score:\n")
    rows = []
    naive_mse = np.mean((np.array(dep_est["naive"]) - truth_deploy) ** 2)
    for m in dep_est:
        e, s = np.array(dep_est[m]), np.array(dep_se[m])
        rows.append(
            {
                "method": m,
                "RE vs naive": naive_mse / np.mean((e - truth_deploy) ** 2),
                "coverage (finite se)": float(
                    np.mean((np.abs(e - truth_deploy) <= 1.959964 * s)[np.isfinite(s)])
                ),
                "NaN se (share)": float(np.mean(~np.isfinite(s))),
                "mean se": float(np.nanmean(s)),
                "sd of estimate": float(np.std(e)),
            }
        )
    print(markdown_table(pd.DataFrame(rows), 4))


if __name__ == "__main__":
    main()
