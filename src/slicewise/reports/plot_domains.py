"""Domain forest plots (needs the ``plot`` extra: matplotlib, imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._typing import FloatArray
from ..estimators.survey.direct import DIRECT
from .fonts import readable_plot
from .plot import _label, new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..domains.results import DomainResult


@readable_plot
def plot_domains(
    result: DomainResult,
    *,
    ax: Axes | None = None,
    direct: bool = True,
    truth: FloatArray | None = None,
    level: float | None = None,
    xlabel: str | None = None,
) -> Axes:
    """Horizontal forest plot: one row per domain, estimate with its interval.

    Direct estimates are drawn as hollow circles when they differ from the estimate (smoothed
    methods), and known truths as crosses.
    """
    if ax is None:
        height = max(2.5, 0.22 * result.size + 1.0)
        _, axes = new_axes(width=6.0, height=min(height, 40.0))
        ax = axes[0]
    if ax is None:  # pragma: no cover - new_axes always returns axes
        raise RuntimeError("matplotlib returned no axes")
    interval = result.ci(level)
    lvl = result.level if level is None else level
    y = np.arange(result.size, dtype=float)[::-1]
    est = result.estimate
    ax.errorbar(
        est,
        y,
        xerr=np.vstack([est - interval.low, interval.high - est]),
        fmt="o",
        color="C0",
        capsize=2,
        markersize=4,
        label=result.method,
    )
    if direct and result.method not in DIRECT:
        ax.plot(
            result.direct_estimate, y, "o", mfc="none", color="C1", markersize=5, label="direct"
        )
    if truth is not None:
        ax.plot(np.asarray(truth, dtype=float), y, "kx", label="truth")
    names = result.domain
    ax.set_yticks(y)
    ax.set_yticklabels([_label(v) for v in names], fontsize="small")
    value = f"mean {xlabel}" if xlabel else "mean gold label"
    ax.set_xlabel(value)
    ax.set_title(f"{value} by {', '.join(result.domain_names)} ({round(lvl * 100)}% intervals)")
    ax.legend(frameon=False, fontsize="small")
    return ax
