"""DB-CV's MSE estimate is unbiased within Monte-Carlo error for HT and GREG; naive CV is not.

(For PP-S the same check is in docs/results/domains_psn_irt.md, at the cost of a minute of
Bayesian refits, which is too slow for the test suite.)
"""

from __future__ import annotations

import numpy as np
import pytest
from _domain_helpers import stratified_sample

from slicewise.data.designs import draw_stratified
from slicewise.domains.dbcv import assign_folds, design_cv
from slicewise.domains.fit import DomainProblem


def test_folds_are_balanced_within_cells() -> None:
    rng = np.random.default_rng(0)
    domain = np.repeat(np.arange(3), 100).astype(np.intp)
    y = rng.random(300)
    selected = np.zeros(300, dtype=bool)
    selected[rng.choice(300, 60, replace=False)] = True
    sample = stratified_sample(domain, y, selected)
    fold = assign_folds(sample, 5, rng)
    for d in range(3):
        counts = np.bincount(fold[sample.labeled_domain == d], minlength=5)
        assert counts.max() - counts.min() <= 1


@pytest.mark.slow
def test_dbcv_is_unbiased_for_ht_and_greg() -> None:
    rng = np.random.default_rng(5)
    d = 30
    sizes = rng.integers(100, 400, d)
    domain = np.repeat(np.arange(d), sizes).astype(np.intp)
    x = rng.normal(size=domain.size)
    p = np.clip(rng.uniform(0.3, 0.8, d)[domain] + 0.15 * x, 0, 1)
    y = (rng.random(domain.size) < p).astype(float)
    aux = np.column_stack([x, rng.normal(size=domain.size)])
    truth = np.bincount(domain, weights=y) / sizes
    problem = DomainProblem(auxiliaries=aux, prediction=None, covariates=None)
    n_d = np.round(0.08 * sizes).astype(np.intp)
    reps = 300
    names = ("ht", "greg")
    reported = np.empty((reps, 2))
    oracle = np.empty((reps, 2))
    naive = np.empty((reps, 2))
    for r in range(reps):
        sample = stratified_sample(domain, y, draw_stratified(domain, n_d, rng))
        out = design_cv(problem, sample, names, folds=5, rng=rng)
        reported[r] = out.dbcv
        naive[r] = out.naive
        oracle[r] = [np.mean((f.estimate - truth) ** 2) for f in out.fits]
    diff = reported - oracle
    z = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / np.sqrt(reps))
    assert np.all(np.abs(z) < 3.0), z
    assert np.all(naive.mean(axis=0) > 3.0 * oracle.mean(axis=0))
