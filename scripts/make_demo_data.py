"""Derive the compact demo table shipped in src/slicewise/datasets/ from AlpacaEval 2.

Source: tatsu-lab/alpaca_eval, commit cd543a1 (Apache-2.0), as copied to ../shared/data/alpaca_eval.
Candidate: claude-2.1. Gold label Y = the GPT-4-turbo judge's preference for claude-2.1 over the
baseline gpt4_1106_preview, rescaled to [0, 1] (preference - 1). Cheap signals: five other models'
preferences on the same instruction (how hard the instruction is against the baseline) and the log
of claude-2.1's output length. Profiles: log instruction length (continuous) and source dataset
(categorical). A seeded random 10% keeps its gold label; `truth` keeps every label for comparison.
The instructions' text goes to a second file, for topics found from the text (`demo --topics`).

Run from the repository root: python scripts/make_demo_data.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "data" / "alpaca_eval"
OUT = ROOT / "src" / "slicewise" / "datasets" / "alpaca_eval_claude21.csv"
#: The instructions' text, for ``slicewise demo --topics`` (``load_demo(instructions=True)``).
TEXT_OUT = ROOT / "src" / "slicewise" / "datasets" / "alpaca_eval_instructions.csv"
CANDIDATE = "claude-2.1"
OTHERS = [
    "claude",
    "claude-2",
    "claude-instant-1.2",
    "Mixtral-8x7B-Instruct-v0.1_concise",
    "Qwen-14B-Chat",
]
SEED = 2024
FRACTION = 0.10


def main() -> None:
    prefs = pd.read_csv(SOURCE / "ae2_weighted_gpt4turbo_preference_matrix.csv").set_index(
        "item_id"
    )
    lengths = pd.read_csv(SOURCE / "ae2_weighted_gpt4turbo_output_length_matrix.csv").set_index(
        "item_id"
    )
    items = pd.read_csv(SOURCE / "ae2_weighted_gpt4turbo_items.csv").set_index("item_id")
    frame = pd.DataFrame(index=items.index)
    frame["dataset"] = items["dataset"]
    frame["log_instruction_len"] = np.log(items["instruction_len"]).round(4)
    for name in OTHERS:
        frame[f"pref_{name}"] = (prefs[name] - 1.0).round(5)
    frame["log_output_len"] = np.log(lengths[CANDIDATE]).round(4)
    frame["truth"] = (prefs[CANDIDATE] - 1.0).round(5)
    rng = np.random.default_rng(SEED)
    labeled = rng.permutation(len(frame))[: round(FRACTION * len(frame))]
    gold = np.full(len(frame), np.nan)
    gold[labeled] = frame["truth"].to_numpy()[labeled]
    frame["gold"] = gold
    frame.reset_index().to_csv(OUT, index=False)
    items[["instruction"]].reset_index().to_csv(TEXT_OUT, index=False)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(frame)} items, {len(labeled)} labeled")


if __name__ == "__main__":
    main()
