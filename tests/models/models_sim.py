"""Seeded designs shared by the multi-model tests (several models on one item pool)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

GROUPS = np.array(["algebra", "geometry", "logic", "physics"])


def ability(k: int) -> np.ndarray:
    """Model k's ability per group: a common trend plus a model-specific zigzag."""
    g = np.arange(GROUPS.size)
    return np.asarray(0.3 * (g - 1.5) + 0.2 * k * (-1.0) ** g)


def shared_difficulty_pool(
    rng: np.random.Generator,
    m: int = 2400,
    n_models: int = 2,
    *,
    noise: float = 0.6,
    proxy_noise: float = 0.6,
) -> pd.DataFrame:
    """A wide table: Z = group, a latent item difficulty shared by every model.

    Model k answers item i correctly when ability(k)[g] - u_i + noise > 0, so the models' correct-
    ness is strongly correlated across items. Signals: an item-level difficulty proxy (`diff`) and
    a per-model judge score (`s<k>`). Labels are complete (callers mask them).
    """
    g = rng.integers(0, GROUPS.size, m)
    u = rng.normal(size=m)
    frame = pd.DataFrame({"g": GROUPS[g], "id": [f"item{i}" for i in range(m)]})
    frame["diff"] = u + rng.normal(0, proxy_noise, m)
    for k in range(n_models):
        y = (ability(k)[g] - u + rng.normal(0, noise, m) > 0).astype(float)
        frame[f"y{k}"] = y
        frame[f"s{k}"] = y + rng.normal(0, 0.9, m)
    return frame


def to_long(wide: pd.DataFrame, n_models: int) -> pd.DataFrame:
    """The long layout of :func:`shared_difficulty_pool`: one row per (model, item)."""
    parts = []
    for k in range(n_models):
        part = wide[["id", "g", "diff"]].copy()
        part["model"] = f"m{k}"
        part["y"] = wide[f"y{k}"].to_numpy()
        part["judge"] = wide[f"s{k}"].to_numpy()
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def mask_rows(frame: pd.DataFrame, columns: list[str], keep: np.ndarray) -> pd.DataFrame:
    """Set ``columns`` to NaN outside the rows ``keep`` (positions)."""
    out = frame.copy()
    drop = np.ones(len(out), dtype=bool)
    drop[keep] = False
    for col in columns:
        values = out[col].to_numpy(dtype=float).copy()
        values[drop] = np.nan
        out[col] = values
    return out


def check_coverage(covered: np.ndarray, nominal: float = 0.95) -> float:
    """Pooled coverage within [0.93, 0.97]; no grid point outside a 99.9% binomial band."""
    pooled = float(covered.mean())
    assert 0.93 <= pooled <= 0.97, f"pooled coverage {pooled:.4f}"
    if covered.ndim == 2:
        reps = covered.shape[0]
        lo, hi = stats.binom.ppf([0.0005, 0.9995], reps, nominal) / reps
        per_point = covered.mean(axis=0)
        assert np.all((per_point >= lo) & (per_point <= hi)), per_point
    return pooled


def z_stat(errors: np.ndarray) -> np.ndarray:
    """Mean error over draws divided by its Monte-Carlo standard error, per column."""
    return np.asarray(errors.mean(0) / (errors.std(0, ddof=1) / np.sqrt(errors.shape[0])))
