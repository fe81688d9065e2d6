"""GREG-or-Hajek, the default direct estimator of ``sw.domains``: the pooled-slope GREG where it
lowers a domain's estimated variance, the Hajek mean elsewhere (issue 11, per-slice no-harm)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from _domain_helpers import poisson_sample, stratified_sample

import slicewise as sw
from slicewise.data.designs import DomainSample
from slicewise.estimators.survey.base import ht_variance
from slicewise.estimators.survey.greg import CHOICE_LABELS, greg, greg_or_hajek
from slicewise.estimators.survey.ht import hajek

#: Seven domains of 600 units; the signal tracks y with the same slope in five of them; in the
#: sixth it is pure noise, so the slope pooled over domains only adds variance there; in the
#: seventh it is weak, near the break-even point of the two estimators (the choice is a toss-up).
N_DOM, SIZE, LABELS = 7, 600, 60
BROKEN, WEAK = 5, 6


def _pool(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    domain = np.repeat(np.arange(N_DOM), SIZE).astype(np.intp)
    p = np.array([0.3, 0.4, 0.5, 0.6, 0.7, 0.5, 0.5])[domain]
    y = (rng.random(domain.size) < p).astype(float)
    signal = np.where(domain == WEAK, 0.3, 1.0) * y + rng.normal(0, 0.6, domain.size)
    broken = domain == BROKEN
    signal[broken] = rng.normal(0, 2.0, int(broken.sum()))  # unrelated to y, large spread
    return domain, y, signal[:, None]


def _draw(domain: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> DomainSample:
    selected = np.zeros(domain.size, dtype=bool)
    for d in range(N_DOM):
        selected[rng.choice(np.flatnonzero(domain == d), LABELS, replace=False)] = True
    return stratified_sample(domain, y, selected)


def test_the_choice_is_the_smaller_estimated_variance() -> None:
    domain, y, x = _pool(0)
    rng = np.random.default_rng(1)
    for _ in range(5):
        sample = _draw(domain, y, rng)
        fit, g, h = greg_or_hajek(sample, x), greg(sample, x), hajek(sample)
        use = np.asarray(fit.params["greg_domains"], dtype=bool)
        np.testing.assert_array_equal(use, g.variance <= h.variance)
        np.testing.assert_array_equal(fit.estimate, np.where(use, g.estimate, h.estimate))
        np.testing.assert_array_equal(fit.variance, np.where(use, g.variance, h.variance))
        # its linearised values give its variance (what DB-CV uses)
        np.testing.assert_allclose(ht_variance(sample, fit.z), fit.variance, rtol=1e-12)
        # SRS within domains: GREG is kept where the domain's slope on the prediction is >= 1/2
        d = sample.labeled_domain
        f = (x[:, 0] * g.params["slope"][0])[sample.index]
        yl = sample.y
        for k in range(N_DOM):
            fk, yk = f[d == k] - f[d == k].mean(), yl[d == k] - yl[d == k].mean()
            assert use[k] == (2 * fk @ yk >= fk @ fk - 1e-12)


def test_small_domains_keep_greg() -> None:
    domain, y, x = _pool(0)
    rng = np.random.default_rng(2)
    selected = np.zeros(domain.size, dtype=bool)
    for d in range(N_DOM):
        selected[rng.choice(np.flatnonzero(domain == d), int(CHOICE_LABELS) - 1, replace=False)] = (
            True
        )
    sample = stratified_sample(domain, y, selected)
    fit, g = greg_or_hajek(sample, x), greg(sample, x)
    np.testing.assert_array_equal(fit.estimate, g.estimate)
    assert all(fit.params["greg_domains"])


def test_no_domain_worse_than_hajek_where_pooled_greg_is() -> None:
    """Seeded Monte-Carlo with known truth: pooled GREG is worse than Hajek on the domain where
    the signal is noise; GREG-or-Hajek is not (beyond Monte-Carlo error), keeps GREG's gain on
    the others, and its 95% intervals cover."""
    domain, y, x = _pool(0)
    truth = np.bincount(domain, weights=y) / SIZE
    rng = np.random.default_rng(20261201)
    reps = 400
    err = {"greg": [], "choice": [], "hajek": []}
    covered = np.zeros(N_DOM)
    for _ in range(reps):
        sample = _draw(domain, y, rng)
        g, c, h = greg(sample, x), greg_or_hajek(sample, x), hajek(sample)
        err["greg"].append(g.estimate - truth)
        err["choice"].append(c.estimate - truth)
        err["hajek"].append(h.estimate - truth)
        covered += np.abs(c.estimate - truth) <= 1.959964 * np.sqrt(c.variance)
    sq = {k: np.square(np.array(v)) for k, v in err.items()}

    def excess(name: str) -> tuple[np.ndarray, np.ndarray]:
        diff = sq[name] - sq["hajek"]
        return diff.mean(axis=0), diff.std(axis=0, ddof=1) / np.sqrt(reps)

    mean_g, se_g = excess("greg")
    mean_c, se_c = excess("choice")
    assert mean_g[BROKEN] > 3 * se_g[BROKEN]  # the failure being fixed
    assert np.all(mean_c <= 2 * se_c)  # no domain worse than Hajek beyond MC error
    assert np.all(mean_c[:BROKEN] < -3 * se_c[:BROKEN])  # and the gain kept where it is real
    # coverage of the normal 95% intervals (60 binary labels a domain, so GREG's own intervals
    # run a little short, 0.925-0.95 here): every domain above 0.90, more than 4 binomial
    # standard errors below 0.95, and the mean over domains not below 0.93
    assert np.all(covered / reps >= 0.90), covered
    assert covered.mean() / reps >= 0.93


def test_poisson_design_chooses_by_design_variances() -> None:
    domain, y, x = _pool(3)
    rng = np.random.default_rng(4)
    pi = np.where(x[:, 0] > 0.5, 0.15, 0.08)
    sample = poisson_sample(domain, y, pi, rng)
    fit, g, h = greg_or_hajek(sample, x), greg(sample, x), hajek(sample)
    use = np.asarray(fit.params["greg_domains"], dtype=bool)
    np.testing.assert_array_equal(use, g.variance <= h.variance)
    np.testing.assert_array_equal(fit.estimate, np.where(use, g.estimate, h.estimate))


def test_default_of_domains_is_greg_or_hajek_under_the_smoothing() -> None:
    domain, y, x = _pool(0)
    frame = pd.DataFrame({"dom": domain, "s": x[:, 0], "y": y})
    labeled = sw.sample(frame, strata="dom", fraction=0.1, rng=1).apply(frame, label="y")
    common = {"domain": "dom", "label": "y", "signals": ["s"], "strata": "stratum"}
    res = sw.domains(labeled, **common)  # 60 labels each: every domain keeps its direct estimate
    direct = sw.domains(labeled, method="greg-or-hajek", **common)
    np.testing.assert_allclose(res.estimate, direct.estimate, rtol=0, atol=1e-12)
    assert res.params["direct"] == "greg-or-hajek"
    pooled = sw.domains(labeled, direct="greg", **common)
    assert pooled.params["direct"] == "greg"
