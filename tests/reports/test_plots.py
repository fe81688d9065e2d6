"""Plots: plain titles, the label on the value axis, horizontal sorted categorical profiles with
labeled counts, the gold-only band on the estimate's critical values, zero on gaps, plain ticks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from slicewise.inference.bounded import interval_bounds
from slicewise.reports.output import write_outputs
from slicewise.reports.plot import plot_profile
from slicewise.reports.plot_models import plot_deploy, plot_model_profiles, plot_ranking
from slicewise.reports.plot_plan import plot_plan
from slicewise.reports.study_plots import plain_ticks, plot_panels
from slicewise.results import critical_value


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
    low = np.array([s[0, 1] for s in segments])
    high = np.array([s[1, 1] for s in segments])
    # bounded like the table's intervals (issue 31): the Wilson-type interval of the gold-only
    # estimate with the estimate's critical values
    crit = critical_value(res.level, res.df)
    want_low, want_high = interval_bounds(
        res.naive_estimate, res.naive_se, crit,
        naive_estimate=res.naive_estimate, n_labeled_eff=res.n_labeled_eff,
    )  # fmt: skip
    np.testing.assert_allclose(low, want_low, rtol=1e-9)
    np.testing.assert_allclose(high, want_high, rtol=1e-9)


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


def no_rotated_ticks(ax: Any) -> bool:
    ticks = [*ax.get_xticklabels(), *ax.get_yticklabels()]
    return all(t.get_rotation() == 0 for t in ticks)


def row_names(ax: Any) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()]


def vertical_lines_at(ax: Any, value: float) -> list[Any]:
    return [
        ln
        for ln in ax.get_lines()
        if len(ln.get_xdata()) == 2 and np.allclose(np.asarray(ln.get_xdata(), float), value)
    ]


def test_categorical_model_profiles_are_rows_sorted_with_counts(many: dict[str, Any]) -> None:
    result = many["models"]
    ax = plot_model_profiles(result, ylabel="correct")
    mean = np.mean([result[m].estimate for m in result.models], axis=0)
    first = result.profiles[0]
    assert row_names(ax) == [str(v) for v in first.z[np.argsort(mean)]]
    assert ax.get_xlabel() == "mean correct"
    assert ax.get_ylabel() == "subject"
    counts = np.vstack([result[m].n_labeled_eff for m in result.models])
    expected = [
        "n=" + ("/".join(f"{c:.0f}" for c in col) if np.ptp(col) else f"{col[0]:.0f}")
        for col in counts.T[np.argsort(mean)]
    ]
    assert [t.get_text() for t in ax.texts] == expected
    assert no_rotated_ticks(ax)
    ordinal = plot_model_profiles(many["models_ordinal"])
    assert [t.get_text() for t in ordinal.get_xticklabels()] == ["1", "2", "3", "4", "5"]
    assert no_rotated_ticks(ordinal)


def test_categorical_ranking_is_rows_with_a_zero_line(many: dict[str, Any]) -> None:
    result = many["ranking"]
    ax = plot_ranking(result, label="correct")
    assert row_names(ax) == [str(v) for v in result.z[np.argsort(result.estimate[0])]]
    assert ax.get_xlabel() == "gap in mean correct"
    assert vertical_lines_at(ax, 0.0)
    assert no_rotated_ticks(ax)
    assert "simultaneous" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [f"{a} - {b}" for a, b in result.pairs]


def test_gap_profile_names_the_pair_and_marks_zero(many: dict[str, Any]) -> None:
    ax = plot_profile(many["gap"], ylabel="correct")  # no zero_line argument: a gap has one
    assert ax.get_xlabel() == "gap in mean correct (a - b)"
    assert vertical_lines_at(ax, 0.0)


def test_deploy_plot_names_the_metric(many: dict[str, Any]) -> None:
    ax = plot_deploy(many["deploy"], label="correct")
    assert ax.get_xlabel() == "mean correct under the deployment mix"
    assert row_names(ax) == ["a", "b", "c"]
    assert "gold labels only" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_plan_by_slice_is_rows_sorted_by_current_halfwidth(many: dict[str, Any]) -> None:
    plan = many["plan"]
    ax = plot_plan(plan)
    order = np.argsort(plan.halfwidth)
    assert row_names(ax) == [str(v) for v in np.asarray(plan.z)[order]]
    assert vertical_lines_at(ax, plan.target)
    assert ax.get_xlabel() == "95% interval half-width"
    notes = [t.get_text() for t in ax.texts]
    assert notes == [
        f"n={n:.0f}" + (f", +{int(m)}" if m > 0 else "")
        for n, m in zip(plan.n_labeled[order], plan.n_more[order], strict=True)
    ]
    assert no_rotated_ticks(ax)


def test_study_panels_put_text_levels_in_rows() -> None:
    z = np.array(["long benchmark name one", "b", "c"], dtype=object)
    truth = np.array([0.5, 0.2, 0.9])
    ax = plot_panels(z, truth, {"naive": truth + 0.05}, title="split 1")
    assert row_names(ax) == ["b", "long benchmark name one", "c"]
    assert no_rotated_ticks(ax)


def test_every_saved_figure_is_cropped_to_its_labels() -> None:
    # bbox_inches="tight" grows the saved canvas to hold tick labels, row names and counts
    root = Path(__file__).parents[2] / "src" / "slicewise"
    calls = []
    for path in [*root.glob("reports/*.py"), *root.glob("cli/*.py")]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\.savefig\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
            calls.append((path.name, match.group(1)))
    assert calls
    loose = [(name, args) for name, args in calls if 'bbox_inches="tight"' not in args]
    assert loose == []
