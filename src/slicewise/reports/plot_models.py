"""Plots of several models: profiles, pairwise gaps, deployment scores (matplotlib, lazily)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..results import normal_interval
from .fonts import readable_plot
from .plot import (
    Series,
    _label,
    forest,
    forest_height,
    new_axes,
    plain_title,
    sort_order,
    value_name,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..models.deploy import DeploymentScore
    from ..models.profiles import ModelProfiles
    from ..models.ranking import ModelRanking


@readable_plot
def plot_model_profiles(
    result: ModelProfiles,
    *,
    ax: Axes | None = None,
    level: float | None = None,
    models: Sequence[str] | None = None,
    ylabel: str | None = None,
) -> Axes:
    """One line with a pointwise band per model (continuous Z), offset error bars in the
    profile's order (ordinal), or a horizontal forest plot sorted by the models' mean estimate
    with each slice's gold labels per model (categorical)."""
    names = list(result.models) if models is None else list(models)
    lvl = result.level if level is None else level
    first = result[names[0]]
    categorical = first.kind == "categorical" and first.z.ndim == 1
    if ax is None:
        _, axes = new_axes(height=forest_height(first.size) if categorical else 3.6)
        ax = axes[0]
    assert ax is not None
    if categorical:
        series: list[Series] = []
        for k, name in enumerate(names):
            interval = result[name].ci(lvl)
            est = result[name].estimate
            series.append((name, est, interval.low, interval.high, f"C{k % 10}", "o"))
        counts = np.vstack([result[n].n_labeled_eff for n in names])
        with np.errstate(all="ignore"):
            mean = np.nanmean(np.vstack([result[n].estimate for n in names]), axis=0)
        forest(
            ax,
            [_label(v) for v in first.z],
            series,
            order=sort_order(mean),
            notes=[_counts(column) for column in counts.T],
        )
        ax.set_ylabel(", ".join(first.z_names))
        ax.set_xlabel(value_name(first, ylabel))
        ax.set_title(plain_title(first, ylabel, lvl) + ", per model; n = gold labels")
        ax.legend(frameon=False, fontsize="small")
        return ax
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
        ax.set_xticklabels([_label(v) for v in first.z])
    ax.set_xlabel(", ".join(first.z_names))
    ax.set_ylabel(value_name(first, ylabel))
    ax.set_title(plain_title(first, ylabel, lvl) + ", per model")
    ax.legend(frameon=False, fontsize="small")
    return ax


def _counts(column: np.ndarray) -> str:
    """'n=35' when every model has the slice's count, else 'n=35/30/41' in the models' order."""
    texts = [f"{c:.0f}" for c in column]
    return "n=" + (texts[0] if len(set(texts)) == 1 else "/".join(texts))


@readable_plot
def plot_ranking(result: ModelRanking, *, ax: Axes | None = None, label: str | None = None) -> Axes:
    """Every pairwise gap a - b across the profile with its simultaneous interval, and zero.

    Categorical profiles are a horizontal forest plot (slices sorted by the first pair's gap);
    ``label`` names the metric ('gap in mean correct').
    """
    categorical = result.kind == "categorical" and result.z.ndim == 1
    pairs = len(result.pairs)
    if ax is None:  # room for every pair: taller rows, or wider groups of error bars
        rows = result.z.shape[0] * max(1, -(-pairs // 3))
        _, axes = new_axes(
            height=forest_height(rows) if categorical else 3.6 + 0.05 * pairs,
            width=6.0 if categorical else min(6.0 + 0.04 * pairs * result.z.shape[0], 18.0),
        )
        ax = axes[0]
    assert ax is not None
    colors = _pair_colors(pairs)
    interval = result.ci()
    value = f"gap in mean {label}" if label else "gap in mean gold label"
    title = (
        f"Pairwise gaps, {round(result.level * 100)}% simultaneous intervals (all hold together)"
    )
    if categorical:
        series: list[Series] = [
            (f"{a} - {b}", result.estimate[p], interval.low[p], interval.high[p], colors[p], "o")
            for p, (a, b) in enumerate(result.pairs)
        ]
        forest(
            ax,
            [_label(v) for v in result.z],
            series,
            order=sort_order(result.estimate[0]),
            zero=0.0,
        )
        ax.set_ylabel(", ".join(result.z_names))
        ax.set_xlabel(value)
        ax.set_title(title, fontsize="medium")
        _outside_legend(ax, pairs)
        return ax
    numeric = result.kind == "continuous" and result.z.ndim == 1
    x = result.z.astype(float) if numeric else np.arange(result.z.shape[0], dtype=float)
    width = 0.6 / max(len(result.pairs), 1)
    for p, (a, b) in enumerate(result.pairs):
        color = colors[p]
        est, low, high = result.estimate[p], interval.low[p], interval.high[p]
        if numeric:
            ax.plot(x, est, color=color, label=f"{a} - {b}")
            ax.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
        else:
            xs = x + (p - (len(result.pairs) - 1) / 2) * width
            yerr = np.vstack([est - low, high - est])
            ax.errorbar(xs, est, yerr=yerr, fmt="o", color=color, capsize=3, label=f"{a} - {b}")
    ax.axhline(0.0, color="0.5", linewidth=0.8)
    if not numeric:
        ax.set_xticks(x)
        ax.set_xticklabels([_label(v) for v in result.z])
    ax.set_xlabel(", ".join(result.z_names))
    ax.set_ylabel(value)
    ax.set_title(title, fontsize="medium")
    _outside_legend(ax, pairs)
    return ax


def _pair_colors(pairs: int) -> list[Any]:
    """One color per pair, distinct up to 20 pairs (tab10, then tab20)."""
    from matplotlib import colormaps

    if pairs <= 10:
        return [f"C{p}" for p in range(pairs)]
    palette = colormaps["tab20"]
    return [palette(p % 20) for p in range(pairs)]


def _outside_legend(ax: Axes, pairs: int) -> None:
    """The pairs' legend right of the axes (it covered the intervals inside them), in columns
    of at most 18 entries."""
    ax.legend(
        frameon=False,
        fontsize="small",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        ncol=max(1, -(-pairs // 18)),
    )


@readable_plot
def plot_deploy(
    scores: Mapping[str, DeploymentScore], *, ax: Axes | None = None, label: str | None = None
) -> Axes:
    """One horizontal interval per model: the deployment-weighted score and the gold-only one;
    ``label`` names the metric ('mean correct under the deployment mix')."""
    if ax is None:
        _, axes = new_axes(height=forest_height(len(scores)))
        ax = axes[0]
    assert ax is not None
    names = list(scores)
    y = np.arange(len(names), dtype=float)
    for k, score in enumerate(scores.values()):
        interval = score.ci()
        naive = normal_interval(
            np.asarray(score.naive_estimate), np.asarray(score.naive_se), score.level
        )
        for offset, est, low, high, color, tag in (
            (-0.12, score.estimate, interval.low, interval.high, "C0", score.method),
            (0.12, score.naive_estimate, naive.low, naive.high, "C1", "gold labels only"),
        ):
            ax.errorbar(
                [est],
                [y[k] + offset],
                xerr=[[est - float(low)], [float(high) - est]],
                fmt="o",
                color=color,
                capsize=3,
                label=tag if k == 0 else None,
            )
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_xlabel(f"mean {label or 'gold label'} under the deployment mix")
    first = scores[names[0]]
    ax.set_title(f"Score under the deployment mix ({round(first.level * 100)}% intervals)")
    ax.legend(frameon=False, fontsize="small")
    return ax
