"""Profiles over discovered topics against the categorical axis a dataset ships with (issue 32).

Run from the repository root::

    python -m research.topics_study --reps 200 --out docs/results/topics

On AlpacaEval 2 (:func:`research.realdata.alpaca_eval`: 10 candidate models, anchors' preferences,
output length and the AlpacaEval 1 preference as signals), the topics of the 805 instructions
(:func:`slicewise.topics`, label-free, fitted once with ``budget=--topic-budget``) replace the
source dataset as the profile axis. ``auto`` and the gold-only mean are fitted on the same matched
label splits (:func:`slicewise.studies.engine.study_cells`) for both axes, and compared per slice
with the realized full-pool profile (:mod:`research.per_slice`): mean coverage, the worst slice
with at least 20 labels in expectation, the geometric-mean relative efficiency over candidates.

``worst()``'s family-wise coverage is scored on the same draws: in each draw, every slice's
interval at Šidák's level 1 - 0.95^(1/J) (the intervals :meth:`slicewise.ProfileResult.worst`
reports, computed from the study's recorded estimates, variances, degrees of freedom and bias
bounds) must cover its truth, and the candidate set must hold the true worst slice.

LLMBar's ``pairs.csv`` in the shared data carries no instruction text, so its topics cannot be
measured here; ``--llmbar-text FILE`` (a CSV with ``item_id`` and ``instruction``) adds it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.inference.bounded import interval_bounds
from slicewise.inference.worst import could_be_worst, sidak_level
from slicewise.reports.markdown import markdown_table
from slicewise.results import critical_value
from slicewise.studies.engine import CellSpec, study_cells
from slicewise.studies.summary import CellStudy

from . import per_slice, realdata
from .stamp import code_version, stamp


def family_wise(cell: CellStudy, method: str = "auto", level: float = 0.95) -> pd.DataFrame:
    """Per budget: the share of draws whose Šidák intervals all cover, and whose candidate set
    holds the true worst slice."""
    m = cell.methods.index(method)
    rows = []
    truth = np.broadcast_to(cell.truth, cell.estimates.shape[2:])
    for b, budget in enumerate(cell.budgets):
        est, var = cell.estimates[m, b], cell.variances[m, b]
        dfs = cell.dfs[m, b] if cell.dfs is not None else np.full(est.shape, np.nan)
        bound = cell.bounds[m, b] if cell.bounds is not None else np.zeros(est.shape)
        all_cover = []
        worst_in = []
        for r in range(est.shape[0]):
            se = np.sqrt(var[r])
            defined = np.isfinite(est[r]) & np.isfinite(se)
            each = sidak_level(level, int(defined.sum()))
            crit = critical_value(1.0 - each, dfs[r])
            naive = cell.naive_estimates
            n_lab = cell.n_labeled_eff
            if cell.unit_labels and naive is not None and n_lab is not None:
                low, high = interval_bounds(
                    est[r],
                    se,
                    crit,
                    bound[r],
                    naive_estimate=naive[b, r],
                    n_labeled_eff=n_lab[b, r],
                )
            else:
                low, high = interval_bounds(est[r], se, crit, bound[r])
            low, high = np.where(defined, low, np.nan), np.where(defined, high, np.nan)
            cover = ~defined | ((low <= truth[r]) & (truth[r] <= high))
            all_cover.append(bool(cover.all()))
            worst_in.append(bool(could_be_worst(low, high, 1)[int(np.argmin(truth[r]))]))
        rows.append(
            {
                "cell": cell.name,
                "budget": budget,
                "reps": est.shape[0],
                "slices": est.shape[1],
                "familywise_coverage": float(np.mean(all_cover)),
                "worst_in_candidates": float(np.mean(worst_in)),
            }
        )
    return pd.DataFrame(rows)


def topic_cells(
    cells: list[CellSpec], texts: list[str], *, method: str, budget: int, rng: int
) -> tuple[list[CellSpec], pd.Series]:
    """The cells with Z = the texts' topics (fitted once, label-free)."""
    topic = sw.topics(
        pd.DataFrame({"text": texts}), text="text", method=method, budget=budget, rng=rng
    )
    out = []
    for cell in cells:
        table = cell.table.copy()
        table["topic"] = topic.astype(str).to_numpy()
        out.append(
            dataclasses.replace(
                cell, name=cell.name.replace("/dataset", "/topic"), table=table, z="topic"
            )
        )
    return out, topic


def run_family(
    cells: list[CellSpec], family: str, budgets: tuple[int, ...], reps: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    result = study_cells(cells, methods=("naive", "auto"), budgets=budgets, reps=reps, rng=seed)
    slices = pd.concat([per_slice.slice_table(c, family) for c in result.cells], ignore_index=True)
    fw = pd.concat([family_wise(c) for c in result.cells], ignore_index=True)
    fw.insert(0, "family", family)
    return slices, fw


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budgets", default="50,100,200")
    parser.add_argument("--topic-budget", type=int, default=100)
    parser.add_argument("--methods", default="tfidf,embedding", help="topic methods")
    parser.add_argument("--candidates", type=int, default=None, help="first N candidates")
    parser.add_argument("--out", default="docs/results/topics")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    commit = code_version()  # the tree the run starts from, even if a commit lands meanwhile
    budgets = tuple(int(b) for b in args.budgets.split(","))
    data = realdata.alpaca_eval(families=["dataset"])
    cells = list(data.family("dataset").cells)[: args.candidates]
    items = pd.read_csv(realdata.data_dir() / "alpaca_eval" / "ae2_weighted_gpt4turbo_items.csv")
    texts = items["instruction"].astype(str).tolist()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    slices, fws = [], []
    found, fw = run_family(cells, "dataset", budgets, args.reps, args.seed)
    slices.append(found)
    fws.append(fw)
    sizes = []
    for method in args.methods.split(","):
        t_cells, topic = topic_cells(
            cells, texts, method=method, budget=args.topic_budget, rng=args.seed
        )
        sizes.append(
            f"- {method}: {topic.cat.categories.size} topics, sizes "
            + ", ".join(f"{name!r} {count}" for name, count in topic.value_counts().items())
        )
        found, fw = run_family(t_cells, f"topic:{method}", budgets, args.reps, args.seed)
        slices.append(found)
        fws.append(fw)
    table = pd.concat(slices, ignore_index=True)
    table.insert(0, "dataset", "alpaca_eval")
    summary = per_slice.family_summary(table)
    familywise = pd.concat(fws, ignore_index=True)
    fw_summary = (
        familywise.groupby(["family", "budget"], sort=False)[
            ["familywise_coverage", "worst_in_candidates"]
        ]
        .agg(["mean", "min"])
        .reset_index()
    )
    flat: list[Any] = list(fw_summary.columns.to_flat_index())
    fw_summary.columns = ["_".join(c for c in col if c) for col in flat]
    table.to_csv(out / "alpaca_eval_slices.csv", index=False)
    familywise.to_csv(out / "alpaca_eval_familywise.csv", index=False)
    text = stamp("python -m research.topics_study " + " ".join(argv), commit=commit)
    text += f"\n\n{time.perf_counter() - start:.0f} s\n\nTopics (label-free, budget={args.topic_budget}):\n\n"
    text += "\n".join(sizes) + "\n\nPer slice (auto against the gold-only mean):\n\n"
    text += (
        markdown_table(summary, digits=3)
        + "\n\nworst(): family-wise coverage per cell, mean and min over cells:\n\n"
    )
    text += markdown_table(fw_summary, digits=3) + "\n"
    (out / "alpaca_eval.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
