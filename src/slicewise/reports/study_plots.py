"""Plots of relative-efficiency studies (matplotlib imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .fonts import readable_plot
from .plot import new_axes

if TYPE_CHECKING:
    from ..studies.summary import StudyResult


@readable_plot
def plot_re(result: StudyResult, *, ax: Any = None) -> Any:
    """Geometric-mean RE (log scale) by budget, one line per method, with 95% MC intervals."""
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    agg = result.aggregate()
    agg = agg[agg["budget"] != "overall"]
    for k, method in enumerate(result.methods):
        rows = agg[agg["method"] == method].sort_values("budget")
        x = rows["budget"].astype(float).to_numpy() * (1 + 0.02 * (k - len(result.methods) / 2))
        y = rows["re"].to_numpy()
        err = np.vstack([y - rows["re_low"].to_numpy(), rows["re_high"].to_numpy() - y])
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=method)
    ax.axhline(1.0, color="k", linewidth=0.8, linestyle=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(result.budgets))
    ax.set_xticklabels([str(b) for b in result.budgets])
    ax.xaxis.set_minor_formatter(plain_ticks(minor=True))
    ax.yaxis.set_major_formatter(plain_ticks())
    ax.yaxis.set_minor_formatter(plain_ticks(minor=True))
    ax.set_xlabel("gold labels (budget n)")
    ax.set_ylabel("relative efficiency vs gold-only")
    ax.set_title(
        f"How many times fewer labels each method needs ({len(result.cells)} cell(s), "
        "95% Monte-Carlo intervals)",
        fontsize="medium",
    )
    ax.legend(frameon=False, fontsize="small", ncol=2)
    return ax


def plain_ticks(*, minor: bool = False) -> Any:
    """Log-axis tick labels as plain numbers ('4', '0.5'), not '4x10^0'; minor ticks at 2 and 5."""
    from matplotlib.ticker import FuncFormatter

    def fmt(value: float, _pos: object) -> str:
        if value <= 0:
            return ""
        mantissa = value / 10 ** np.floor(np.log10(value) + 1e-9)
        if minor and not any(abs(mantissa - m) < 1e-6 for m in (2.0, 5.0)):
            return ""
        return f"{value:g}"

    return FuncFormatter(fmt)


@readable_plot
def plot_gain_check(frame: pd.DataFrame, *, ax: Any = None) -> Any:
    """Observed pointwise RE of oracle LACE against the closed-form gain, per bandwidth."""
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    z = frame["z"].astype(float)
    first = frame[frame["scale"] == frame["scale"].iloc[0]]
    ax.plot(first["z"].astype(float), first["gain"], "k-", label="closed-form gain")
    for k, (scale, rows) in enumerate(frame.groupby("scale", sort=False)):
        x = rows["z"].astype(float).to_numpy() + 0.004 * (k - 1)
        y = rows["re"].to_numpy()
        err = np.vstack([y - rows["re_low"].to_numpy(), rows["re_high"].to_numpy() - y])
        ax.errorbar(x, y, yerr=err, fmt="o", capsize=2, label=f"h = {scale:g} h0")
    ax.set_xlim(z.min() - 0.05, z.max() + 0.05)
    ax.set_xlabel("z")
    ax.set_ylabel("pointwise RE of oracle LACE")
    ax.legend(frameon=False, fontsize="small")
    return ax


@readable_plot
def plot_panels(
    cell_z: np.ndarray,
    truth: np.ndarray,
    curves: dict[str, np.ndarray],
    *,
    title: str = "",
    ax: Any = None,
) -> Any:
    """One split's profiles (truth, naive, a method) on a shared grid; text levels are rows of a
    horizontal plot sorted by the truth."""
    from .plot import Series, forest, forest_height, sort_order

    numeric = all(isinstance(v, int | float | np.number) for v in cell_z)
    if not numeric:
        if ax is None:
            _, axes = new_axes(height=forest_height(len(cell_z)))
            ax = axes[0]
        series: list[Series] = [("truth", truth, None, None, "k", "x")]
        series += [
            (name, values, None, None, f"C{k % 10}", "o")
            for k, (name, values) in enumerate(curves.items())
        ]
        forest(ax, [str(v) for v in cell_z], series, order=sort_order(truth))
        ax.set_title(title)
        ax.legend(frameon=False, fontsize="small")
        return ax
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    x = np.asarray(cell_z, dtype=float) if numeric else np.arange(len(cell_z), dtype=float)
    ax.plot(x, truth, "k--", label="truth")
    for name, values in curves.items():
        ax.plot(x, values, label=name)
    ax.set_title(title)
    ax.legend(frameon=False, fontsize="small")
    return ax
