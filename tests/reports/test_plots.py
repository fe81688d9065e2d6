"""Plots: plain titles, the label on the value axis, horizontal sorted categorical profiles with
labeled counts, the gold-only band on the estimate's critical values, zero on gaps, plain ticks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from slicewise.reports.output import write_outputs
from slicewise.reports.plot import plot_profile
from slicewise.reports.study_plots import plain_ticks
from slicewise.results import normal_interval


@pytest.fixture(autouse=True)
def _close() -> Any:
    yield
    plt.close("all")


def test_categorical_profile_is_horizontal_sorted_and_counted(results: dict[str, Any]) -> None:
    res = results["categorical"]
    ax = plot_profile(res, naive=True, ylabel="correct")
    names = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(names) == sorted(str(v) for v in res.z)
    order = np.argsort(res.estimate)
    assert names == [str(v) for v in res.z[order]]  # bottom to top by estimate
    assert ax.get_xlabel() == "mean correct"
    assert ax.get_ylabel() == "subject"
    counts = [t.get_text() for t in ax.texts]
    assert counts == [f"n={k:.0f}" for k in res.n_labeled_eff[order]]
    assert all(t.get_rotation() == 0 for t in ax.get_yticklabels())


@pytest.mark.parametrize("which", ["ordinal", "continuous"])
def test_value_axis_names_the_label_and_title_is_plain(results: dict[str, Any], which: str) -> None:
    res = results[which]
    ax = plot_profile(res, naive=True, ylabel="correct")
    assert ax.get_ylabel() == "mean correct"
    assert ax.get_title() == f"mean correct by {res.z_names[0]} (95% intervals)"
    default = plot_profile(res)
    assert default.get_ylabel() == "mean gold label"
    assert "estimate" not in default.get_ylabel()
    assert "pointwise" not in default.get_title()


def test_gold_only_band_uses_the_estimates_critical_values(results: dict[str, Any]) -> None:
    res = results["ordinal"]
    ax = plot_profile(res, naive=True)
    naive_bars = ax.containers[1]  # (estimate, gold labels only)
    segments = naive_bars.lines[2][0].get_segments()
    half = np.array([(s[1, 1] - s[0, 1]) / 2 for s in segments])
    expected = normal_interval(res.naive_estimate, res.naive_se, res.level, res.df)
    np.testing.assert_allclose(half, (expected.high - expected.low) / 2, rtol=1e-9)


def test_gap_plots_mark_zero(results: dict[str, Any], tmp_path: Path) -> None:
    res = results["ordinal"]
    ax = plot_profile(res, zero_line=True)
    flat = [ln for ln in ax.get_lines() if np.allclose(ln.get_ydata(), 0.0)]
    assert flat
    written = write_outputs(res, tmp_path, stem="gap")
    assert tmp_path / "gap.png" in written


def test_log_ticks_read_plainly() -> None:
    major, minor = plain_ticks(), plain_ticks(minor=True)
    assert major(4.0, None) == "4"
    assert major(0.5, None) == "0.5"
    assert major(100.0, None) == "100"
    assert minor(2.0, None) == "2"
    assert minor(3.0, None) == ""
    assert "10^" not in major(4.0, None)


def test_saved_profile_keeps_its_labels(results: dict[str, Any], tmp_path: Path) -> None:
    res = results["categorical"]
    write_outputs(res, tmp_path, label="correct")
    image = plt.imread(tmp_path / "profile.png")
    # bbox_inches='tight' grows the canvas to hold every label: wider than the axes area alone
    assert image.shape[1] > 0.9 * 6.4 * 120
