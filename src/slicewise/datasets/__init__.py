"""Small real datasets shipped with slicewise.

``alpaca_eval_claude21.csv`` (and the instructions' text, ``alpaca_eval_instructions.csv``) is derived from AlpacaEval 2 (tatsu-lab/alpaca_eval, commit cd543a1,
Apache-2.0; see ``NOTICE`` in this folder) by ``scripts/make_demo_data.py``: 805 instructions, the
GPT-4-turbo judge's preference for claude-2.1 over gpt4_1106_preview as the gold label (a seeded 10%
kept in ``gold``, all of them in ``truth``), five other models' preferences and claude-2.1's log
output length as cheap signals, and log instruction length and source dataset as profiles.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd

DEMO_FILE = "alpaca_eval_claude21.csv"
#: The 805 instructions' text (same source and licence), joined by ``load_demo(instructions=True)``.
TEXT_FILE = "alpaca_eval_instructions.csv"
DEMO_SIGNALS = [
    "pref_claude",
    "pref_claude-2",
    "pref_claude-instant-1.2",
    "pref_Mixtral-8x7B-Instruct-v0.1_concise",
    "pref_Qwen-14B-Chat",
    "log_output_len",
]


def load_demo(*, instructions: bool = False) -> pd.DataFrame:
    """The AlpacaEval 2 demo table (805 rows; ``gold`` is labeled on 80 of them).

    With ``instructions``, an ``instruction`` column holds each item's text (for
    :func:`slicewise.topics`).

    Examples
    --------
    >>> from slicewise.datasets import load_demo
    >>> frame = load_demo()
    >>> int(frame["gold"].notna().sum()), len(frame)
    (80, 805)
    """
    with resources.files(__name__).joinpath(DEMO_FILE).open("r") as handle:
        frame = pd.read_csv(handle)
    if instructions:
        with resources.files(__name__).joinpath(TEXT_FILE).open("r", encoding="utf-8") as handle:
            text = pd.read_csv(handle, keep_default_na=False)
        frame = frame.merge(text, on="item_id", how="left", validate="one_to_one")
    return frame
