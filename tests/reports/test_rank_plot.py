"""The rank plot stays readable with many models (issue 31): one color per pair, a legend that
does not cover the intervals, and rows that grow with the number of pairs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw

pytest.importorskip("matplotlib")


def _ranking(n_models: int) -> sw.ModelRanking:
    rng = np.random.default_rng(11)
    n = 600
    g = rng.choice(["algebra", "biology", "chemistry", "drama"], size=n)
    rows = []
    unlabeled = rng.random(n) > 0.5  # the same items labeled for every model
    for m in range(n_models):
        y = rng.binomial(1, 0.4 + 0.04 * m, size=n).astype(float)
        y[unlabeled] = np.nan
        rows.append(pd.DataFrame({"id": np.arange(n), "g": g, "model": f"model {m}", "y": y}))
    long = pd.concat(rows, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sw.rank_models(long, z="g", label="y", model="model", id="id", kind="categorical")


def test_the_rank_plot_is_readable_with_many_pairs() -> None:
    import matplotlib.pyplot as plt

    from slicewise.reports.plot_models import plot_ranking

    few, many = _ranking(2), _ranking(7)  # 1 and 21 pairs
    ax_few, ax_many = plot_ranking(few), plot_ranking(many)
    fig = ax_many.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legend = ax_many.get_legend().get_window_extent(renderer)
    axes_box = ax_many.get_window_extent(renderer)
    assert legend.x0 >= axes_box.x1  # the legend sits beside the intervals, not on them
    to_rgba = plt.matplotlib.colors.to_rgba
    colors = {to_rgba(c.lines[0].get_color()) for c in ax_many.containers}
    assert len(ax_many.containers) == 21
    assert len(colors) >= 20  # 21 pairs: tab20 repeats only once
    assert fig.get_size_inches()[1] > ax_few.figure.get_size_inches()[1]
    plt.close("all")
