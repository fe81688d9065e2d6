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
