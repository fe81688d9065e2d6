"""Profile plots (needs the ``plot`` extra: matplotlib)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import FloatArray
from .fonts import readable_plot

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


@readable_plot
def plot_profile(
    result: ProfileResult,
    *,
    ax: Axes | None = None,
    naive: bool = False,
    truth: FloatArray | None = None,
    level: float | None = None,
    ylabel: str | None = None,
    zero_line: bool | None = None,
) -> Axes:
    """Draw a profile with its pointwise band.

    Continuous profiles are lines with bands; ordinal profiles error bars in their order;
    categorical profiles a horizontal forest plot sorted by estimate, each row annotated with its
    number of gold labels. The value axis names the label (``ylabel``, else the result's
    ``params['label']``); the gold-only overlay uses the estimate's critical values (Student t
    with the result's ``df`` where finite). ``zero_line`` marks 0 (default: for a gap between
    two models).
    """
    if zero_line is None:
        zero_line = is_gap(result)
    if result.kind == "categorical" and result.z.ndim == 1:
        return _plot_categorical(
            result,
            ax=ax,
            naive=naive,
            truth=truth,
            level=level,
            xlabel=ylabel,
            zero_line=zero_line,
        )
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
        series.append(("gold labels only", result.naive_estimate, low, high, "C1"))
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
    if zero_line:
        ax.axhline(0.0, color="0.4", linewidth=0.8, zorder=0)
    if not numeric:
        ax.set_xticks(x)
        ax.set_xticklabels([_label(v) for v in result.z])
    ax.set_xlabel(", ".join(result.z_names))
    ax.set_ylabel(value_name(result, ylabel))
    ax.set_title(plain_title(result, ylabel, lvl))
    ax.legend(frameon=False, fontsize="small")
    return ax


def is_gap(result: ProfileResult) -> bool:
    """Whether ``result`` is the gap between two models (:func:`slicewise.gap`)."""
    return result.params.get("estimand") == "gap"


def value_name(result: ProfileResult, label: str | None = None) -> str:
    """What the value axis measures: the label column's name when known ('mean correct'); for a
    gap, 'gap in mean correct (a - b)'."""
    name = label or result.params.get("label")
    mean = f"mean {name}" if isinstance(name, str) and name else "mean gold label"
    if is_gap(result):
        return f"gap in {mean} ({result.params.get('model_a')} - {result.params.get('model_b')})"
    return mean


def plain_title(result: ProfileResult, label: str | None, level: float) -> str:
    """A title in plain words, e.g. 'mean correct by level (95% intervals)'."""
    axis = ", ".join(result.z_names)
    return f"{value_name(result, label)} by {axis} ({round(level * 100)}% intervals)"


#: One series of a forest plot: name, estimates, lower and upper ends (None: points only),
#: color, marker.
Series = tuple[str, Any, Any, Any, str, str]


def forest(
    ax: Axes,
    names: Sequence[str],
    series: Sequence[Series],
    *,
    order: Any,
    notes: Sequence[str] | None = None,
    zero: float | None = None,
) -> None:
    """A horizontal forest plot: one row per name in ``order`` (bottom to top), each series
    offset within its row, ``notes`` (e.g. 'n=12') written right of the axes, and a vertical
    reference line at ``zero``. Row labels are horizontal, so long names stay readable."""
    order = np.asarray(order, dtype=int)
    y = np.arange(order.size, dtype=float)
    k_all = len(series)
    step = min(0.3, 0.7 / max(k_all, 1)) if k_all > 1 else 0.0
    for k, (name, est, low, high, color, marker) in enumerate(series):
        e = np.asarray(est, dtype=float)[order]
        ys = y + ((k_all - 1) / 2 - k) * step
        if low is None or high is None:
            ax.plot(e, ys, marker, color=color, markersize=4, linestyle="none", label=name)
            continue
        lo, hi = np.asarray(low, dtype=float)[order], np.asarray(high, dtype=float)[order]
        ax.errorbar(
            e,
            ys,
            xerr=np.vstack([e - lo, hi - e]),
            fmt=marker,
            color=color,
            capsize=2,
            markersize=4,
            label=name,
        )
    if zero is not None:
        ax.axvline(zero, color="0.4", linewidth=0.8, zorder=0)
    ax.set_yticks(y)
    ax.set_yticklabels([names[i] for i in order], fontsize="small")
    for yi, text in zip(y, [notes[i] for i in order] if notes is not None else [], strict=False):
        ax.annotate(
            text,
            xy=(1.0, yi),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="x-small",
            color="0.35",
        )
    ax.set_ylim(-0.6, order.size - 0.4)


def sort_order(values: Any) -> Any:
    """Row order of a forest plot: ascending, missing values at the bottom."""
    values = np.asarray(values, dtype=float)
    return np.argsort(np.where(np.isfinite(values), values, -np.inf), kind="stable")


def forest_height(rows: int) -> float:
    """Figure height (inches) that gives each forest row room for its label."""
    return float(min(max(2.5, 0.3 * rows + 1.2), 40.0))


def _plot_categorical(
    result: ProfileResult,
    *,
    ax: Axes | None,
    naive: bool,
    truth: FloatArray | None,
    level: float | None,
    xlabel: str | None,
    zero_line: bool,
) -> Axes:
    """Horizontal forest plot of a categorical profile, sorted, with labeled counts."""
    if ax is None:
        _, axes = new_axes(width=6.4, height=forest_height(result.size))
        ax = axes[0]
    assert ax is not None
    interval = result.ci(level)
    lvl = result.level if level is None else level
    series: list[Series] = [
        (result.method, result.estimate, interval.low, interval.high, "C0", "o")
    ]
    if naive and result.method != "naive":
        low, high = _naive_interval(result, lvl)
        series.append(("gold labels only", result.naive_estimate, low, high, "C1", "s"))
    if truth is not None:
        series.append(("truth", truth, None, None, "k", "x"))
    counts = np.asarray(result.n_labeled_eff, dtype=float)
    forest(
        ax,
        [_label(v) for v in result.z],
        series,
        order=sort_order(result.estimate),
        notes=[f"n={c:.0f}" for c in counts],
        zero=0.0 if zero_line else None,
    )
    ax.set_ylabel(", ".join(result.z_names))
    ax.set_xlabel(value_name(result, xlabel))
    ax.set_title(plain_title(result, xlabel, lvl) + "; n = gold labels")
    ax.legend(frameon=False, fontsize="small", loc="best")
    return ax


def _naive_interval(result: ProfileResult, level: float) -> tuple[FloatArray, FloatArray]:
    """The gold-only band, bounded as the table's intervals are: for a mean of labels the
    Wilson-type interval of the gold-only estimate and se (inside [0, 1]), for a gap the t
    interval within [-1, 1]; the estimate's critical values (t with ``df`` where finite). The
    symmetric t band ran from -1.75 to 3.75 on PSN-IRT and squashed every other interval."""
    from ..inference.bounded import interval_bounds
    from ..results import critical_value, within_gap_range

    crit = critical_value(level, result.df)
    if result.bounded_intervals():
        return interval_bounds(
            result.naive_estimate,
            result.naive_se,
            crit,
            naive_estimate=result.naive_estimate,
            n_labeled_eff=result.n_labeled_eff,
        )
    low, high = interval_bounds(result.naive_estimate, result.naive_se, crit)
    interval = within_gap_range(result.naive_estimate, low, high)
    return interval.low, interval.high


def _label(value: object) -> str:
    if isinstance(value, np.ndarray):
        return ", ".join(_label(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)
