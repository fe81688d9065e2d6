"""Simulated item tables shared by test modules in several folders."""

from __future__ import annotations

import numpy as np
import pandas as pd


def continuous_frame(m: int = 600, n: int = 150, seed: int = 1) -> pd.DataFrame:
    """Continuous Z ~ U(0, 1), Y ~ Bernoulli(0.2 + 0.6 z), signals s1-s3 of changing usefulness.

    s1 helps most at large z, s2 at small z (and is shifted by 3), s3 is pure noise; the label is
    kept on a random n of the m items.
    """
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.2 + 0.6 * z).astype(float)
    frame = pd.DataFrame(
        {
            "z": z,
            "s1": 2 * y * z + rng.normal(0, 0.7, m),
            "s2": y * (1 - z) + rng.normal(0, 0.5, m) + 3,
            "s3": rng.exponential(2.0, m),
            "y": y,
        }
    )
    frame.loc[rng.permutation(m)[n:], "y"] = np.nan
    return frame
