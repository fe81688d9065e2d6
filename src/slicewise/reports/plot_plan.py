"""Plot of a labeling plan (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .plot import new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..planning.plan import PlanResult


def plot_plan(plan: PlanResult, *, ax: Axes | None = None) -> Any:
    """Current and predicted half-widths per grid point against the target; n_more on top."""
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    z = np.asarray(plan.z)
    position = np.arange(plan.size) if z.ndim > 1 or z.dtype.kind not in "fiu" else z
    ax.plot(position, plan.halfwidth, "o-", label="now")
    ax.plot(position, plan.predicted, "s--", label=f"after +{plan.total_more} labels")
    ax.axhline(plan.target, color="black", linewidth=0.8, label="target")
    for x, y, more in zip(position, plan.predicted, plan.n_more, strict=True):
        if more > 0:
            ax.annotate(
                f"+{int(more)}",
                (x, y),
                textcoords="offset points",
                xytext=(0, 6),
                ha="center",
                fontsize=8,
            )
    if z.ndim == 1 and z.dtype.kind not in "fiu":
        ax.set_xticks(position, [str(v) for v in z], rotation=45, ha="right")
    ax.set_xlabel(plan.z_names[0] if len(plan.z_names) == 1 else "grid point")
    ax.set_ylabel(f"{plan.level:.0%} interval half-width")
    ax.set_title(f"Labels to reach half-width {plan.target:g} ({plan.method})")
    ax.legend(frameon=False)
    return ax
