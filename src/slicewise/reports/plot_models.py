"""Plots of several models' profiles and of pairwise gaps (needs matplotlib, imported lazily)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .plot import _label, new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..models import ModelProfiles


def plot_model_profiles(
    result: ModelProfiles,
    *,
    ax: Axes | None = None,
    level: float | None = None,
    models: Sequence[str] | None = None,
) -> Axes:
    """One line with a pointwise band per model (continuous Z), or offset error bars (discrete)."""
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    assert ax is not None
    names = list(result.models) if models is None else list(models)
    lvl = result.level if level is None else level
    first = result[names[0]]
    numeric = first.kind == "continuous" and first.z.ndim == 1
    x = first.z.astype(float) if numeric else np.arange(first.size, dtype=float)
    width = 0.6 / max(len(names), 1)
    for k, name in enumerate(names):
        prof = result[name]
        interval = prof.ci(lvl)
        color = f"C{k % 10}"
        if numeric:
            ax.plot(x, prof.estimate, color=color, label=name)
            ax.fill_between(x, interval.low, interval.high, color=color, alpha=0.15, linewidth=0)
        else:
            xs = x + (k - (len(names) - 1) / 2) * width
            ax.errorbar(
                xs,
                prof.estimate,
                yerr=np.vstack([prof.estimate - interval.low, interval.high - prof.estimate]),
                fmt="o",
                color=color,
                capsize=3,
                label=name,
            )
    if not numeric:
        ax.set_xticks(x)
        ax.set_xticklabels([_label(v) for v in first.z], rotation=30, ha="right")
    ax.set_xlabel(", ".join(first.z_names))
    ax.set_ylabel("estimate")
    ax.set_title(f"{first.method}: {round(lvl * 100)}% pointwise intervals ({first.target})")
    ax.legend(frameon=False, fontsize="small")
    return ax
