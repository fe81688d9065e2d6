"""ProfileResult.worst: Šidák family-wise intervals and the slices that could be the worst."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from slicewise.inference.simultaneous import min_p_draws, per_interval_level
from slicewise.inference.worst import could_be_worst, sidak_level


def test_sidak_level_is_the_min_p_level_of_independent_intervals() -> None:
    # rank_models' single-step min-P law with the identity correlation is Šidák's
    rng = np.random.default_rng(0)
    df = np.array([8.0, 20.0, np.inf, 40.0, 12.0])
    draws = min_p_draws(np.eye(5), df, n_draws=40_000, rng=rng)
    assert per_interval_level(draws, 0.95, 5) == pytest.approx(sidak_level(0.95, 5), abs=0.001)
    assert sidak_level(0.95, 1) == pytest.approx(0.05)
    assert 0.05 / 5 < sidak_level(0.95, 5) < 0.05


def test_candidates_are_the_slices_not_ruled_out() -> None:
    lower = np.array([0.1, 0.15, 0.5, np.nan])
    upper = np.array([0.3, 0.4, 0.7, np.nan])
    assert could_be_worst(lower, upper, 1).tolist() == [True, True, False, True]
    # two slices lie wholly below slice 2: it is not among the 2 worst, but may be the 3rd
    assert could_be_worst(lower, upper, 2).tolist() == [True, True, False, True]
    assert could_be_worst(lower, upper, 3).tolist() == [True, True, True, True]


def _frame(seed: int, n: int = 2400, labeled: int = 400) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    level = np.repeat(np.array(list("abcdefgh")), n // 8)
    mean = dict(zip("abcdefgh", [0.3, 0.35, 0.5, 0.5, 0.6, 0.6, 0.7, 0.8], strict=True))
    p = np.array([mean[v] for v in level])
    y = (rng.random(n) < p).astype(float)
    gold = np.full(n, np.nan)
    pick = rng.choice(n, labeled, replace=False)
    gold[pick] = y[pick]
    frame = pd.DataFrame({"slice": level, "gold": gold, "judge": p + rng.normal(0, 0.1, n)})
    truth = pd.Series(y).groupby(level).mean().to_numpy()
    return frame, truth


def test_worst_contains_pointwise_and_names_candidates() -> None:
    frame, _ = _frame(0)
    res = sw.profile(frame, z="slice", label="gold", signals=["judge"], rng=0)
    worst = res.worst()
    assert (worst.lower <= worst.pointwise_lower + 1e-12).all()
    assert (worst.upper >= worst.pointwise_upper - 1e-12).all()
    assert worst.candidate[0]
    assert not worst.candidate[-1]
    assert worst.to_frame()["z"].iloc[0] == worst.z[int(np.argmin(worst.estimate))]
    assert "could be the worst slice" in str(worst)
    with pytest.raises(ValueError, match=r"'k' parameter of ProfileResult\.worst must be at most"):
        res.worst(k=9)
    with pytest.raises(ValueError, match="'level' parameter"):
        res.worst(level=1.5)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::slicewise.LabelSelectionWarning")
def test_familywise_coverage_against_known_truth() -> None:
    reps = 200
    covered = worst_in = 0
    for seed in range(reps):
        frame, truth = _frame(100 + seed)
        res = sw.profile(frame, z="slice", label="gold", signals=["judge"], rng=seed)
        worst = res.worst()
        covered += bool(((worst.lower <= truth) & (truth <= worst.upper)).all())
        worst_in += bool(worst.candidate[int(np.argmin(truth))])
    # seeds 100-299: 193 covered with the per-slice guard, 199 under the slice objective's
    # hull intervals; the claim is family-wise coverage of at least 0.95 (one-sided binomial test)
    assert stats.binomtest(covered, reps, 0.95, alternative="less").pvalue > 0.01
    assert worst_in >= covered
