"""auto on the LACE paper's Settings B and C: efficiency targets and coverage after selection."""

from __future__ import annotations

import pytest

from slicewise.studies.simulate import simulate

REPS = 200


@pytest.mark.slow
@pytest.mark.parametrize("design", ["setting-b", "setting-c"])
def test_auto_beats_paper_lace_and_covers(design: str) -> None:
    res = simulate(design, methods=("lace", "auto"), budgets=(500, 1500), reps=REPS, rng=2024)
    summary = res.summary().set_index(["method", "budget"])
    for n in (500, 1500):
        auto, lace = summary.loc[("auto", n)], summary.loc[("lace", n)]
        assert auto["re"] >= lace["re"], (n, auto["re"], lace["re"])
        # coverage after selection, pooled over the groups and replications (the intervals of
        # one replication share its selection and smoothing, so no binomial band applies). Under
        # the slice objective a moved slice's interval contains its direct one (the hull,
        # smoothing.objective), so the upper end allows that conservatism: 0.9765 on setting C
        # at 1500 labels when the objective came in
        assert 0.93 <= auto["coverage"] <= 0.985, auto["coverage"]
    if design == "setting-b":
        ratio = summary.loc[("auto", 500), "re"] / summary.loc[("lace", 500), "re"]
        assert ratio >= 1.5, ratio
