"""Plot of a labeling plan (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .fonts import readable_plot
from .plot import Series, _label, forest, forest_height, new_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..planning.result import PlanResult


@readable_plot
def plot_plan(plan: PlanResult, *, ax: Axes | None = None) -> Any:
    """Current and predicted half-widths per grid point against the target; n_more on top.

    Text slices (categorical or text ordinal levels) are a horizontal plot, the slices sorted by
    their current half-width (widest on top), each annotated with its gold labels now and the
    labels it still needs.
    """
    z = np.asarray(plan.z)
    if z.ndim == 1 and z.dtype.kind not in "fiu":
        return _plot_plan_rows(plan, ax=ax)
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
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
    ax.set_xlabel(plan.z_names[0] if len(plan.z_names) == 1 else "grid point")
    ax.set_ylabel(f"{plan.level:.0%} interval half-width")
    ax.set_title(f"Labels to reach half-width {plan.target:g} ({plan.method})")
    ax.legend(frameon=False)
    return ax


def _plot_plan_rows(plan: PlanResult, *, ax: Axes | None) -> Any:
    if ax is None:
        _, axes = new_axes(height=forest_height(plan.size))
        ax = axes[0]
    series: list[Series] = [
        ("now", plan.halfwidth, None, None, "C0", "o"),
        (f"after +{plan.total_more} labels", plan.predicted, None, None, "C1", "s"),
    ]
    now = np.asarray(plan.halfwidth, dtype=float)
    order = np.argsort(np.where(np.isfinite(now), now, np.inf), kind="stable")
    forest(
        ax,
        [_label(v) for v in np.asarray(plan.z)],
        series,
        order=order,
        notes=[
            f"n={n:.0f}" + (f", +{int(m)}" if m > 0 else "")
            for n, m in zip(plan.n_labeled, plan.n_more, strict=True)
        ],
    )
    ax.axvline(plan.target, color="black", linewidth=0.8, label="target")
    ax.set_ylabel(plan.z_names[0])
    ax.set_xlabel(f"{plan.level:.0%} interval half-width")
    ax.set_title(
        f"Labels to reach half-width {plan.target:g} ({plan.method}); n = gold labels now, "
        "+ = labels to add",
        fontsize="medium",
    )
    ax.legend(frameon=False, fontsize="small")
    return ax
