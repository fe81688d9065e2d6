"""Synthetic texts with planted topics: each text draws its words from one of four disjoint
vocabularies, plus words shared by all."""

from __future__ import annotations

import numpy as np
import pandas as pd

VOCABULARIES = {
    "cooking": [
        "recipe",
        "oven",
        "bake",
        "flour",
        "sugar",
        "dough",
        "pasta",
        "sauce",
        "garlic",
        "onion",
        "simmer",
        "boil",
    ],
    "code": [
        "python",
        "function",
        "variable",
        "loop",
        "compile",
        "debug",
        "array",
        "class",
        "module",
        "import",
        "syntax",
    ],
    "travel": [
        "flight",
        "hotel",
        "passport",
        "luggage",
        "airport",
        "beach",
        "museum",
        "itinerary",
        "train",
        "ticket",
    ],
    "health": [
        "doctor",
        "fever",
        "vaccine",
        "symptom",
        "therapy",
        "diet",
        "sleep",
        "exercise",
        "muscle",
        "vitamin",
    ],
}
SHARED = ["please", "explain", "how", "what", "best", "good", "help", "write", "short", "list"]


def planted(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """``n`` texts, the planted topic in column ``truth`` (never read by topics)."""
    rng = np.random.default_rng(seed)
    names = list(VOCABULARIES)
    truth = rng.integers(len(names), size=n)
    texts = []
    for t in truth:
        words = list(rng.choice(VOCABULARIES[names[t]], size=5)) + list(rng.choice(SHARED, size=3))
        texts.append(" ".join(rng.permutation(words)))
    return pd.DataFrame({"prompt": texts, "truth": np.array(names)[truth], "gold": rng.random(n)})
