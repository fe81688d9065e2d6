"""Profile plots (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import FloatArray

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..results import ProfileResult


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError("Plotting needs matplotlib: pip install 'slicewise[plot]'.") from err
    return plt


def new_axes(ncols: int = 1, *, width: float = 6.0, height: float = 3.6) -> tuple[Any, Any]:
    """A figure with ``ncols`` axes side by side."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, axes[0]


def plot_profile(
    result: ProfileResult,
    *,
    ax: Axes | None = None,
    naive: bool = False,
    truth: FloatArray | None = None,
    level: float | None = None,
) -> Axes:
    """Draw a profile with its pointwise band; categorical and ordinal profiles as error bars."""
    if ax is None:
        _, axes = new_axes()
        ax = axes[0]
    assert ax is not None
    interval = result.ci(level)
    lvl = result.level if level is None else level
    numeric = result.kind == "continuous" and result.z.ndim == 1
    x = result.z.astype(float) if numeric else np.arange(result.size, dtype=float)
    series = [(result.method, result.estimate, interval.low, interval.high, "C0")]
    if naive and result.method != "naive":
        low, high = _naive_interval(result, lvl)
        series.append(("naive", result.naive_estimate, low, high, "C1"))
    offset = 0.12 if not numeric and len(series) > 1 else 0.0
    for k, (name, est, low, high, color) in enumerate(series):
        if numeric:
            ax.plot(x, est, color=color, label=f"{name}")
            ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
        else:
            xs = x + (k - (len(series) - 1) / 2) * 2 * offset
            ax.errorbar(
                xs,
                est,
                yerr=np.vstack([est - low, high - est]),
                fmt="o",
                color=color,
                capsize=3,
                label=name,
            )
    if truth is not None:
        style = "k--" if numeric else "kx"
        ax.plot(x, np.asarray(truth, dtype=float), style, label="truth")
    if not numeric:
        ax.set_xticks(x)
        ax.set_xticklabels([_label(v) for v in result.z], rotation=30, ha="right")
    ax.set_xlabel(", ".join(result.z_names))
    ax.set_ylabel("estimate")
    ax.set_title(f"{result.method}: {round(lvl * 100)}% pointwise intervals ({result.target})")
    ax.legend(frameon=False, fontsize="small")
    return ax


def _naive_interval(result: ProfileResult, level: float) -> tuple[FloatArray, FloatArray]:
    from ..results import normal_interval

    interval = normal_interval(result.naive_estimate, result.naive_se, level)
    return interval.low, interval.high


def _label(value: object) -> str:
    if isinstance(value, np.ndarray):
        return ", ".join(_label(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
