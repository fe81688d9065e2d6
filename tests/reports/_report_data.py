"""A small simulated item table for the report tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def frame(seed: int = 0, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    level = rng.integers(1, 6, n)
    subject = rng.choice(["algebra", "biology", "chemistry", "drama"], n)
    y = (rng.random(n) < 0.9 - 0.12 * level).astype(float)
    judge = y + rng.normal(0, 0.6, n)
    x = rng.uniform(0, 1, n)
    label = np.where(rng.random(n) < 0.25, y, np.nan)
    return pd.DataFrame(
        {"level": level, "subject": subject, "x": x, "judge": judge, "correct": label, "full": y}
    )


def three_models() -> pd.DataFrame:
    """A long table: three models graded on the same items (one row per model and item)."""
    base = frame()
    rng = np.random.default_rng(1)
    parts = []
    for k, name in enumerate(("a", "b", "c")):
        flip = rng.random(len(base)) < 0.15 * k
        y = np.where(flip, 1.0 - base["full"], base["full"])
        part = base.assign(
            full=y,
            correct=np.where(base["correct"].notna(), y, np.nan),
            judge=y + rng.normal(0, 0.6, len(base)),
            model=name,
            item=range(len(base)),
        )
        parts.append(part)
    return pd.concat(parts, ignore_index=True)
