"""Simulated item tables shared by test modules in several folders."""

from __future__ import annotations

from typing import Any

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


def kernel_weights(
    rng: np.random.Generator, n: int, g: int, *, with_design: bool
) -> tuple[np.ndarray, np.ndarray, Any]:
    """Random Gaussian-shaped kernel weights of n labeled items at g grid points (columns summing
    to 1), local labeled fractions in [0.05, 0.3], and (``with_design``) the DesignWeights of
    random inclusion probabilities in [0.1, 0.9], else None."""
    from slicewise.inference.cv_variance import design_weights

    kernel = np.exp(-0.5 * rng.normal(size=(n, g)) ** 2)
    mass = kernel.sum(axis=0)
    weights = kernel / mass
    fraction = rng.uniform(0.05, 0.3, g)
    pi = rng.uniform(0.1, 0.9, n)
    design = design_weights(weights, mass, pi, mass / fraction) if with_design else None
    return weights, fraction, design
