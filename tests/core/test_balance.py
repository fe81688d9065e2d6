"""The label-balance check (issue 11, item 5): false alarms on random labels, power on selected ones."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from slicewise.exceptions import LabelSelectionWarning, SlicewiseWarning
from slicewise.inference.balance import ALPHA, PERMUTATIONS, balance_strata, label_balance


def _pool(rng: np.random.Generator, m: int = 3000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ordinal Z, labels whose rate falls with Z, and four signals: a judge, a rare binary flag
    (skewed, where a chi-square law is least trustworthy), noise, and one that tracks Z."""
    z = rng.integers(1, 6, m).astype(float)
    y = (rng.random(m) < 0.9 - 0.12 * z).astype(float)
    signals = np.column_stack(
        [
            y + rng.normal(0, 0.8, m),
            rng.random(m) < 0.02,
            rng.normal(size=m),
            z + rng.normal(size=m),
        ]
    ).astype(float)
    return z, y, signals


def test_false_alarms_on_random_labels_at_most_one_in_a_hundred() -> None:
    rng = np.random.default_rng(11)
    z, _, signals = _pool(rng)
    strata = balance_strata(z.reshape(-1, 1), "ordinal")
    names = ("judge", "flag", "noise", "tracks_z")
    draws = 300
    alarms = 0
    for _ in range(draws):
        labeled = np.zeros(z.size, dtype=bool)
        labeled[rng.choice(z.size, 120, replace=False)] = True
        check = label_balance(signals, strata, labeled, signal_names=names)
        assert check is not None
        alarms += check.alarm
    # the alarm rate is not above 1 in 100 (one-sided binomial test at the 1% level)
    assert stats.binomtest(alarms, draws, ALPHA, alternative="greater").pvalue > 0.01


def test_labeling_rates_that_vary_with_z_are_not_flagged() -> None:
    # Stratified designs label some slices more heavily; the signal tracking Z then differs
    # between L and T overall, but not within slices of Z, which is what the estimates need.
    rng = np.random.default_rng(12)
    z, _, signals = _pool(rng)
    strata = balance_strata(z.reshape(-1, 1), "ordinal")
    rate = np.array([0.02, 0.04, 0.08, 0.16, 0.3])[z.astype(int) - 1]
    alarms = 0
    for _ in range(100):
        labeled = rng.random(z.size) < rate
        check = label_balance(signals, strata, labeled, signal_names=tuple("abcd"))
        assert check is not None
        alarms += check.alarm
    assert alarms <= 3


def test_labels_chosen_by_the_judge_are_flagged() -> None:
    rng = np.random.default_rng(13)
    z, _, signals = _pool(rng)
    strata = balance_strata(z.reshape(-1, 1), "ordinal")
    alarms = 0
    for _ in range(50):
        # "mostly the items the judge liked": four times the labeling rate above 0.5
        labeled = rng.random(z.size) < np.where(signals[:, 0] > 0.5, 0.06, 0.015)
        check = label_balance(signals, strata, labeled, signal_names=("judge", "b", "c", "d"))
        assert check is not None
        alarms += check.alarm
        assert check.most_unbalanced()[0]["signal"] == "judge"
    # power about 0.9 with about 100 labels, of which two thirds are judge-liked (vs half)
    assert alarms >= 40


def test_alarm_uses_the_permutation_p_value() -> None:
    rng = np.random.default_rng(14)
    z, _, signals = _pool(rng)
    labeled = signals[:, 0] > 1.0
    check = label_balance(
        signals,
        balance_strata(z.reshape(-1, 1), "ordinal"),
        labeled,
        signal_names=tuple("abcd"),
    )
    assert check is not None
    assert check.p_value_method == "permutation"
    assert check.p_value == pytest.approx(1.0 / (PERMUTATIONS + 1))
    assert check.alarm
    assert check.difference[0] > 0.5  # in pool standard deviations


def test_statistic_is_invariant_to_affine_rescaling_of_signals() -> None:
    rng = np.random.default_rng(15)
    z, _, signals = _pool(rng)
    strata = balance_strata(z.reshape(-1, 1), "ordinal")
    labeled = rng.random(z.size) < 0.05
    a = label_balance(signals, strata, labeled, signal_names=tuple("abcd"))
    mix = signals @ np.array([[2.0, 0, 0, 1], [0, -3, 0, 0], [0, 1, 5, 0], [0, 0, 0, 0.5]]) + 7
    b = label_balance(mix, strata, labeled, signal_names=tuple("abcd"))
    assert a is not None
    assert b is not None
    assert b.statistic == pytest.approx(a.statistic, rel=1e-8)


def test_large_pools_are_compared_on_a_subsample() -> None:
    # Above POOL_CAP items the unlabeled side is subsampled (exact given the kept set).
    rng = np.random.default_rng(20)
    m = 300_000
    strata = rng.integers(0, 4, m).astype(np.intp)
    signals = rng.normal(size=(m, 2)) + strata[:, None]
    random_labels = rng.random(m) < 0.002
    check = label_balance(signals, strata, random_labels, signal_names=("a", "b"))
    assert check is not None
    assert not check.alarm
    chosen = random_labels & (signals[:, 0] > strata - 0.5)
    check = label_balance(signals, strata, chosen, signal_names=("a", "b"))
    assert check is not None
    assert check.alarm
    assert check.most_unbalanced(1)[0]["signal"] == "a"


def test_continuous_profiles_use_quantile_bins() -> None:
    rng = np.random.default_rng(16)
    z = rng.normal(size=(2000, 1))
    codes = balance_strata(z, "continuous")
    assert codes.max() + 1 == 10
    counts = np.bincount(codes)
    assert counts.min() >= 190
    assert balance_strata(rng.normal(size=(2000, 2)), "continuous").max() + 1 == 9


def _frame(rng: np.random.Generator, selected: bool) -> pd.DataFrame:
    m = 2000
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.9 - 0.12 * level).astype(float)
    judge = y + rng.normal(0, 0.6, m)
    other = rng.normal(size=m)
    if selected:
        labeled = rng.random(m) < np.where(judge > 0.5, 0.2, 0.02)
    else:
        labeled = np.zeros(m, dtype=bool)
        labeled[rng.choice(m, 200, replace=False)] = True
    return pd.DataFrame(
        {"level": level, "judge": judge, "other": other, "y": np.where(labeled, y, np.nan)}
    )


def test_profile_warns_and_reports_selected_labels() -> None:
    frame = _frame(np.random.default_rng(17), selected=True)
    with pytest.warns(LabelSelectionWarning, match="do not look like a random sample"):
        res = sw.profile(
            frame, z="level", signals=["judge", "other"], label="y", method="lace", kind="ordinal"
        )
    balance = res.params["balance"]
    assert balance["alarm"] is True
    assert balance["p_value"] < ALPHA
    assert balance["most_unbalanced"][0]["signal"] == "judge"
    assert any("inclusion=" in note for note in res.notes)
    assert res.summary()["params"]["balance"]["df"] == 2


def test_profile_on_random_labels_says_so_without_warning() -> None:
    frame = _frame(np.random.default_rng(18), selected=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlicewiseWarning)
        res = sw.profile(
            frame, z="level", signals=["judge", "other"], label="y", method="naive", kind="ordinal"
        )
    assert res.params["balance"]["alarm"] is False
    assert res.notes[-1].startswith("The balance check found no sign")
    assert "does not show they are a random sample" in res.notes[-1]


def test_no_signals_means_no_check() -> None:
    frame = _frame(np.random.default_rng(19), selected=True)
    res = sw.profile(frame, z="level", label="y", method="naive", kind="ordinal")
    assert "balance" not in res.params


def test_warning_type_is_exported() -> None:
    assert sw.LabelSelectionWarning is LabelSelectionWarning
    assert issubclass(sw.LabelSelectionWarning, UserWarning)
    assert "LabelSelectionWarning" in sw.__all__


@pytest.mark.parametrize("sign_small", [True, False])
def test_looped_re_randomizations_are_the_one_by_one_draws(
    sign_small: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # above BLOCK the draws are made one by one and summed a chunk at a time: the same draws
    # and the same sums as summing each draw on its own (the obvious loop below)
    from slicewise.inference import balance

    rng = np.random.default_rng(3)
    m, k, permutations = 700, 3, 37
    y = rng.normal(size=(m, k))
    strata = rng.integers(0, 3, m)
    big = np.bincount(strata, minlength=3).astype(float)
    small = np.round(big * (0.2 if sign_small else 0.8))
    monkeypatch.setattr(balance, "BLOCK", 0)
    monkeypatch.setattr(balance, "CHUNK_ENTRIES", 5 * 40 * k)  # several chunks, one short
    got = balance._permuted_sums(y, strata, small, big, permutations, np.random.default_rng(8))
    draws = np.random.default_rng(8)
    want = np.zeros((permutations, k))
    order = np.argsort(strata, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(big)]).astype(np.intp)
    for h in range(3):
        rows = y[order[bounds[h] : bounds[h + 1]]]
        size = int(min(small[h], big[h] - small[h]))
        sign = 1.0 if size == small[h] else -1.0
        for b in range(permutations):
            want[b] += sign * rows[draws.choice(rows.shape[0], size, replace=False)].sum(axis=0)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "values",
    [
        np.array([3.0, 0.0, 7.0, 3.0, -0.0, 9.0, 7.0]),  # codes with gaps, -0.0 is 0
        np.array([0.5, 2.0, 0.5, -1.0, 2.0]),  # levels that are not codes: sorted
        np.array([70_000.0, 2.0, 70_000.0]),  # beyond uint16: sorted
    ],
)
def test_strata_of_levels_are_the_ranks_of_the_distinct_values(values: np.ndarray) -> None:
    expected = np.unique(values, return_inverse=True)[1].reshape(-1)
    np.testing.assert_array_equal(balance_strata(values[:, None], "categorical"), expected)
    np.testing.assert_array_equal(balance_strata(values[:, None], "ordinal"), expected)


@pytest.mark.parametrize("decimals", [None, 1, 0])
def test_sorted_profiles_get_the_same_bins_as_shuffled_ones(decimals: int | None) -> None:
    # a table in canonical order has its continuous Z sorted, which takes a faster path
    rng = np.random.default_rng(17)
    z = np.concatenate([np.zeros(3000), rng.normal(size=5000)])
    z = np.sort(z if decimals is None else np.round(z, decimals))  # ties at the edges too
    shuffle = rng.permutation(z.size)
    general = balance_strata(z[shuffle, None], "continuous")
    fast = balance_strata(z[:, None], "continuous")
    np.testing.assert_array_equal(fast[shuffle], general)


def test_strata_in_runs_give_the_statistic_of_shuffled_strata() -> None:
    # a sorted table's strata are runs of increasing codes: summed, centred and multiplied by
    # slices instead of gathers; the same statistic as the rows in any order
    rng = np.random.default_rng(41)
    m, k = 3000, 3
    strata = np.sort(rng.choice([0, 1, 2, 4, 5], size=m))  # code 3 empty
    strata[-1] = 6  # a stratum of one item (factor 0)
    signals = rng.normal(size=(m, k)) + strata[:, None] * [0.5, 0.0, -0.3]
    labeled = rng.random(m) < 0.2
    labeled[strata == 5] = True  # a fully labeled stratum (factor 0)
    names = ("a", "b", "c")
    runs = label_balance(signals.copy(), strata, labeled, signal_names=names)
    shuffle = rng.permutation(m)
    mixed = label_balance(signals[shuffle], strata[shuffle], labeled[shuffle], signal_names=names)
    assert runs is not None
    assert mixed is not None
    assert runs.df == mixed.df
    assert runs.n_strata == mixed.n_strata == 7
    assert runs.statistic == pytest.approx(mixed.statistic, rel=1e-12)
    np.testing.assert_allclose(runs.difference, mixed.difference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(runs.adjusted_p, mixed.adjusted_p, rtol=1e-12)


def test_label_dependent_sample_is_not_called_random() -> None:
    """Issue 31: 90 positives and 30 negatives chosen by the label, a signal that predicts the
    label weakly (judge = y + N(0, 3^2)): the selection shifts the signal by about 0.08 pool sd,
    below what 120 labels can show, so the check passes; its note must not say that the labels
    look like a random sample, and must say how large a shift it could have seen."""
    rng = np.random.default_rng(1)
    m = 1200
    y = (rng.random(m) < 0.5).astype(float)
    frame = pd.DataFrame({"g": rng.integers(0, 4, m), "s": y + rng.normal(0, 3, m)})
    pick = np.concatenate(
        [rng.choice(np.flatnonzero(y == 1), 90, replace=False),
         rng.choice(np.flatnonzero(y == 0), 30, replace=False)]
    )  # fmt: skip
    frame["y"] = np.nan
    frame.loc[pick, "y"] = y[pick]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SlicewiseWarning)
        res = sw.profile(frame, z="g", label="y", signals=["s"], method="naive")
    balance = res.params["balance"]
    assert balance["alarm"] is False
    note = next(n for n in res.notes if "balance check" in n)
    assert "look like a random sample" not in note
    assert f"{balance['detectable_sd']:.2f} pool sd" in note
    # the stated detectable shift: (z_0.995 + z_0.8) sd(d_j) / n, about 3.42 / sqrt(120) here
    assert 0.25 < balance["detectable_sd"] < 0.36


def test_few_labels_say_the_check_has_little_power() -> None:
    """With 20 labels the detectable shift is about 0.75 pool sd: the note says little power."""
    rng = np.random.default_rng(2)
    m = 400
    frame = pd.DataFrame({"g": rng.integers(0, 2, m), "s": rng.normal(size=m)})
    frame["y"] = np.nan
    rows = rng.choice(m, 20, replace=False)
    frame.loc[rows, "y"] = (rng.random(20) < 0.5).astype(float)
    res = sw.profile(frame, z="g", label="y", signals=["s"], method="naive")
    note = next(n for n in res.notes if "balance check" in n)
    assert res.params["balance"]["detectable_sd"] > 0.5
    assert "with 20 labels it has little power" in note
