"""Within-L cross-validation of a method's tuning parameter (sw.select)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

import slicewise as sw
from slicewise.data.folds import balanced_folds


@pytest.fixture(autouse=True)
def _single_blas_thread() -> Iterator[None]:
    """One BLAS thread: two test workers on two cores otherwise oversubscribe and spin."""
    with threadpool_limits(limits=1):
        yield


def grouped_frame(
    seed: int, *, strong: bool, groups: int = 40, per_group: int = 30, m: int = 8_000
) -> tuple[pd.DataFrame, list[str]]:
    """Categorical Z with many groups; signals pure noise (K = 12) or one near-perfect judge."""
    rng = np.random.default_rng(seed)
    z = rng.integers(0, groups, m)
    y = (rng.random(m) < np.linspace(0.3, 0.7, groups)[z]).astype(float)
    data: dict[str, np.ndarray] = {"g": z.astype(str)}
    names = ["judge"] if strong else [f"noise{j}" for j in range(12)]
    for name in names:
        data[name] = y + 0.1 * rng.normal(size=m) if strong else rng.normal(size=m)
    data["y"] = y
    frame = pd.DataFrame(data)
    frame.loc[rng.permutation(m)[groups * per_group :], "y"] = np.nan
    return frame, names


@pytest.mark.parametrize("seed", range(6))
def test_pure_noise_signals_select_the_largest_ridge(seed: int) -> None:
    """Noise signals only add variance, so the most regularised candidate must win."""
    frame, names = grouped_frame(seed, strong=False)
    sel = sw.select(frame, z="g", signals=names, label="y", method="lace", rng=seed)
    assert sel.parameter == "ridge"
    assert sel.chosen == 3.0
    assert sel.mean_score[-1] == np.nanmin(sel.mean_score)


@pytest.mark.parametrize("seed", range(6))
def test_strong_signal_selects_a_small_ridge(seed: int) -> None:
    """A near-perfect judge (R^2 ~ 0.96): shrinking its coefficient costs, a small ridge wins
    (at most the default 0.3: between 0.03, 0.1 and 0.3 the scores differ by fold noise)."""
    frame, names = grouped_frame(seed, strong=True)
    sel = sw.select(frame, z="g", signals=names, label="y", method="lace", rng=seed)
    assert sel.chosen <= 0.3
    assert sel.mean_score[-1] > sel.mean_score[0]


def test_binary_folds_are_outcome_balanced() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(301) < 0.27).astype(float)
    fold = balanced_folds(y, 3, np.random.default_rng(1))
    counts = np.array([[np.sum((fold == k) & (y == c)) for c in (0, 1)] for k in range(3)])
    assert np.ptp(counts, axis=0).max() <= 1
    assert np.ptp(counts.sum(axis=1)) <= 1


def test_score_labels_are_balanced_on_quantile_bins() -> None:
    y = np.random.default_rng(2).beta(2, 5, 400)
    fold = balanced_folds(y, 4, np.random.default_rng(3))
    assert np.ptp(np.bincount(fold)) <= 1
    low = y <= np.median(y)
    assert np.ptp(np.bincount(fold[low], minlength=4)) <= 2  # halves hold whole bins (+-1 each)
    assert np.ptp([y[fold == k].mean() for k in range(4)]) < 0.03


def test_cv_scores_match_a_slow_recomputation() -> None:
    """Each score is the mass-weighted squared distance to the held-out fold's group means."""
    frame, names = grouped_frame(4, strong=True, groups=8, per_group=40, m=2_000)
    seed = 17
    sel = sw.select(frame, z="g", signals=names, label="y", method="lace", rng=seed, folds=3)
    items = sw.make_table(frame, z="g", signals=names, label="y", canonical=True)
    labeled = items.input_rows(items.labeled_index)  # select folds over the canonical order
    y = frame["y"].to_numpy()[labeled]
    fold_rng = np.random.default_rng(seed).spawn(4)[0]  # select's first child stream: the folds
    fold = balanced_folds(y, 3, fold_rng)
    groups = np.array(sorted(frame["g"].unique()))
    for k in range(3):
        held = labeled[fold == k]
        train = frame.copy()
        train.loc[held, "y"] = np.nan
        g_held = frame["g"].to_numpy()[held]
        mass = np.array([np.sum(g_held == g) for g in groups], dtype=float)
        gold = np.array(
            [
                frame["y"].to_numpy()[held][g_held == g].mean() if np.any(g_held == g) else 0.0
                for g in groups
            ]
        )
        for p, ridge in enumerate(sel.grid):
            fit = sw.profile(train, z="g", signals=names, label="y", method="lace", ridge=ridge)
            use = mass > 0
            expected = np.sum(mass[use] * (fit.estimate[use] - gold[use]) ** 2) / mass[use].sum()
            assert sel.scores[p, k] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("method", "keyword"), [("lace", "ridge"), ("aug_plugin", "C"), ("strat_ppi", "strata_count")]
)
def test_refit_equals_profile_with_the_chosen_value(method: str, keyword: str) -> None:
    rng = np.random.default_rng(9)
    m = 1_500
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.3 + 0.4 * z).astype(float)
    frame = pd.DataFrame(
        {"z": z, "judge": y + rng.normal(0, 0.8, m), "other": rng.normal(size=m), "y": y}
    )
    frame.loc[rng.permutation(m)[300:], "y"] = np.nan
    common = {"z": "z", "signals": ["judge", "other"], "label": "y", "method": method}
    sel = sw.select(frame, **common, rng=5, target="population", level=0.9)
    res = sw.profile(
        frame, **common, rng=5, target="population", level=0.9, **{keyword: sel.chosen}
    )
    np.testing.assert_array_equal(sel.result.estimate, res.estimate)
    np.testing.assert_array_equal(sel.result.se, res.se)
    assert sel.result.level == 0.9
    assert sel.curve.shape == (5, 5)
    assert list(sel.curve.columns) == ["param", "fold_1", "fold_2", "fold_3", "mean"]
    assert sel.fold_sizes.sum() == 300


def test_default_grids_are_the_papers() -> None:
    table = sw.methods().set_index("method")
    assert table.loc["lace", "default_grid"] == "0.03, 0.1, 0.3, 1, 3"
    assert table.loc["plugin_multi", "default_grid"] == "0.03, 0.1, 0.3, 1, 3"
    assert table.loc["ppci", "default_grid"] == "0.1, 0.3, 1, 3, 10"
    assert table.loc["strat_ppi", "default_grid"] == "3, 4, 5, 7, 10"
    assert table.loc["local_ppi", "default_grid"] == "0.5, 0.75, 1, 1.5, 2"
    assert table.loc["ppci", "tunable"] == "ppci_multiplier"


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------
@pytest.fixture
def small_frame() -> pd.DataFrame:
    frame, _ = grouped_frame(0, strong=True, groups=4, per_group=10, m=400)
    return frame


def test_method_without_tuning_parameter(small_frame: pd.DataFrame) -> None:
    with pytest.raises(
        ValueError,
        match=r"'method' parameter of select must name a method with a "
        r"tuning parameter .* Got 'naive', which has none",
    ):
        sw.select(small_frame, z="g", signals=["judge"], label="y", method="naive")


@pytest.mark.parametrize(
    ("method", "grid", "rule"),
    [
        ("lace", [0.1, -1.0], r"finite floats >= 0"),
        ("lace", [], r"finite floats >= 0"),
        ("aug_plugin", [0.0, 1.0], r"finite floats > 0"),
        ("strat_ppi", [3, 4.5], r"integers >= 2"),
        ("strat_ppi", [1, 3], r"integers >= 2"),
        ("lace", "0.3", r"finite floats >= 0"),
    ],
)
def test_bad_param_grid(small_frame: pd.DataFrame, method: str, grid, rule: str) -> None:
    with pytest.raises(
        ValueError,
        match=rf"'param_grid' parameter of select must be a non-empty "
        rf"list of {rule}",
    ):
        sw.select(small_frame, z="g", signals=["judge"], label="y", method=method, param_grid=grid)


def test_bad_folds(small_frame: pd.DataFrame) -> None:
    with pytest.raises(
        ValueError,
        match=r"'folds' parameter of select must be an integer >= 2. "
        r"Got 1 instead",
    ):
        sw.select(small_frame, z="g", signals=["judge"], label="y", method="lace", folds=1)


def test_too_few_labels_for_the_folds(small_frame: pd.DataFrame) -> None:
    with pytest.raises(
        ValueError,
        match=r"at least 2 labeled items per fold: 40 labeled items "
        r"cannot fill 25 folds",
    ):
        sw.select(small_frame, z="g", signals=["judge"], label="y", method="lace", folds=25)


def test_unknown_primary(small_frame: pd.DataFrame) -> None:
    with pytest.raises(
        ValueError,
        match=r"'primary' parameter of select must name one of the "
        r"signals \['judge'\]. Got 'judg' instead",
    ):
        sw.select(
            small_frame, z="g", signals=["judge"], label="y", method="per_signal_cv", primary="judg"
        )
