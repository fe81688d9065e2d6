"""Coverage of 95% intervals for HT, GREG and PP-S where domain samples are not tiny.

20 domains of 600 units with binary labels (p_d between 0.25 and 0.75), stratified SRS of 60
labels per domain, 100 draws: 2,000 intervals per method. The covered counts are checked
against [0.93, 0.97] and with a binomial test. The normal approximation
fails for small or extreme domains (e.g. 30 labels with p near 0.97 in PSN-IRT's ARC-C, where HT
covers 0.68; docs/results/domains_psn_irt.md), which this test deliberately avoids. With 60 labels every domain is precise, so the per-slice
PP-S is checked under both objectives: under ``'ensemble'`` (the paper's estimator and interval)
its coverage is nominal like HT's and GREG's; under ``'slice'`` (the default) every domain moves
toward the model by at most 0.3 of its standard errors and its interval contains the direct
(GREG) one (:mod:`slicewise.smoothing.objective`), so it covers at least what GREG covers
(1974 of 2,000 when the objective was introduced: conservative by design). The intervals are the
default of :meth:`slicewise.DomainResult.ci` (Wilson-type for labels in [0, 1]); with the normal
intervals the counts were 1898, 1887 and 1887.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from _domain_helpers import stratified_sample
from scipy import stats

from research.domain_harness import fit_interval
from slicewise.data.designs import draw_stratified
from slicewise.domains.fit import DomainProblem, fit_domains

REPS = 100
METHODS = ("ht", "greg", "pp-s")  # covered 1907, 1904, 1904 of 2,000 when written


@pytest.mark.slow
def test_interval_coverage() -> None:
    rng = np.random.default_rng(2026)
    d = 20
    domain = np.repeat(np.arange(d), 600).astype(np.intp)
    p = rng.uniform(0.25, 0.75, d)[domain]
    y = (rng.random(domain.size) < p).astype(float)
    aux = (y + rng.normal(0, 0.8, domain.size))[:, None]
    truth = np.bincount(domain, weights=y) / 600
    problem = DomainProblem(auxiliaries=aux, prediction=aux[:, 0], covariates=None)
    ensemble = replace(problem, objective="ensemble")
    covered = dict.fromkeys(METHODS, 0)
    slice_covered = 0
    sizes = np.full(d, 60, dtype=np.intp)
    for _ in range(REPS):
        sample = stratified_sample(domain, y, draw_stratified(domain, sizes, rng))
        for method in METHODS:
            low, high = fit_interval(fit_domains(ensemble, sample, method), sample, 0.95)
            covered[method] += int(np.sum((low <= truth) & (truth <= high)))
        low, high = fit_interval(fit_domains(problem, sample, "pp-s"), sample, 0.95)
        slice_covered += int(np.sum((low <= truth) & (truth <= high)))
    total = REPS * d
    for method, count in covered.items():
        assert 0.93 <= count / total <= 0.97, (method, count)
        assert stats.binomtest(count, total, 0.95).pvalue > 0.001, (method, count)
    # the slice objective's interval contains the direct (GREG) one on every draw
    assert slice_covered >= covered["greg"], (slice_covered, covered["greg"])
