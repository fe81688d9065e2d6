"""sw.plan with the default method (auto): the planned labels give the predicted half-width.

Labels are drawn with the plan's shares (``PlanResult.item_rate``) and estimated with the
two-phase inclusion probabilities, as ``research.plan_accuracy`` does on more scenarios.
"""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from research.plan_accuracy import one_draw, scenarios


@pytest.mark.slow
@pytest.mark.parametrize("name", ["four-domains", "setting-b"])
def test_auto_plan_predicts_the_realized_halfwidth(name: str) -> None:
    scenario = next(s for s in scenarios() if s.name == name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # notes of single fits, not under test here
        frame = pd.concat([one_draw(scenario, seed) for seed in range(16)])
    ratio = frame["realized"] / frame["predicted"]
    per_slice = ratio.groupby(frame["grid"]).median()
    # per slice, the typical realized half-width is the predicted one within +-20%
    assert per_slice.between(0.8, 1.2).all(), per_slice
    assert frame["n_more"].sum() > 0  # the plan did ask for labels
