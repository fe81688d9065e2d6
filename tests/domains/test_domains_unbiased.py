"""Design-unbiasedness of HT and PPI under unequal-probability Poisson sampling."""

from __future__ import annotations

import numpy as np
from _domain_helpers import poisson_sample

from slicewise.data.designs import poisson_probabilities
from slicewise.estimators.survey.ht import horvitz_thompson
from slicewise.estimators.survey.ppi import ppi

REPS = 3000


def _population() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    sizes = rng.integers(150, 400, 8)
    domain = np.repeat(np.arange(8), sizes).astype(np.intp)
    latent = rng.normal(size=domain.size) + 0.3 * rng.normal(size=8)[domain]
    y = (latent > 0).astype(float)
    f = np.clip(0.5 + 0.3 * latent + rng.normal(0, 0.3, domain.size), 0, 1)
    # Selection probability depends on y: an unweighted mean is biased.
    pi = poisson_probabilities(np.where(y > 0, 3.0, 1.0) * rng.uniform(0.5, 1.5, domain.size), 500)
    return domain, y, f, pi


def test_ht_and_ppi_are_design_unbiased() -> None:
    domain, y, f, pi = _population()
    truth = np.bincount(domain, weights=y) / np.bincount(domain)
    rng = np.random.default_rng(12)
    ht = np.empty((REPS, 8))
    pp = np.empty((REPS, 8))
    naive = np.empty((REPS, 8))
    var_ht = np.empty((REPS, 8))
    for r in range(REPS):
        sample = poisson_sample(domain, y, pi, rng)
        fit = horvitz_thompson(sample)
        ht[r] = fit.estimate
        var_ht[r] = fit.variance
        pp[r] = ppi(sample, f).estimate
        d = sample.labeled_domain
        naive[r] = np.bincount(d, weights=sample.y, minlength=8) / np.bincount(d, minlength=8)
    for est in (ht, pp):
        z = (est.mean(axis=0) - truth) / (est.std(axis=0, ddof=1) / np.sqrt(REPS))
        assert np.all(np.abs(z) < 3.5), z
    # The design variance estimator is unbiased too (z-test on its Monte-Carlo mean).
    z_var = (var_ht.mean(axis=0) - ht.var(axis=0, ddof=1)) / (
        ht.var(axis=0, ddof=1) * np.sqrt(2.0 / (REPS - 1))
    )
    assert np.all(np.abs(z_var) < 4.0), z_var
    # The test can fail: the unweighted sample mean is far off.
    z_naive = (naive.mean(axis=0) - truth) / (naive.std(axis=0, ddof=1) / np.sqrt(REPS))
    assert np.all(z_naive > 10)
