"""GREG-or-Hajek, the default direct estimator of ``sw.domains``: the pooled-slope GREG correction
scaled per labeled unit by its domain's leave-one-out slope, in [0, 1] (1: GREG, 0: Hajek); issue
11, per-slice no-harm and no selection bias."""

from __future__ import annotations

import numpy as np
import pandas as pd
from _domain_helpers import poisson_sample, stratified_sample

import slicewise as sw
from slicewise.data.designs import DomainSample
from slicewise.estimators.survey.base import ht_variance
from slicewise.estimators.survey.greg import CHOICE_LABELS, greg, greg_or_hajek
from slicewise.estimators.survey.ht import hajek
from slicewise.smoothing.objective import TRANSLATION

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


def _slow_coefficients(sample: DomainSample, f: np.ndarray) -> np.ndarray:
    """The leave-one-out coefficients the obvious way: refit on the domain without each unit."""
    d, w, yl = sample.labeled_domain, sample.weight, sample.y
    out = np.ones(sample.n)
    for k in range(sample.n_domains):
        units = np.flatnonzero(d == k)
        if units.size < CHOICE_LABELS:
            continue
        for i in units:
            rest = units[units != i]
            fw = np.average(f[rest], weights=w[rest])
            yw = np.average(yl[rest], weights=w[rest])
            s_ff = np.sum(w[rest] * (f[rest] - fw) ** 2)
            s_fy = np.sum(w[rest] * (f[rest] - fw) * (yl[rest] - yw))
            s_yy = np.sum(w[rest] * (yl[rest] - yw) ** 2)
            b = s_fy / s_ff
            se = np.sqrt((s_yy - b * s_fy) / ((units.size - 3) * s_ff))
            out[i] = min(1.0, max(0.0, b - se))
    return out


def test_estimate_and_variance_follow_the_leave_one_out_coefficients() -> None:
    """The fast leave-one-out update against a refit per unit, and the estimate and variance
    against the formulas of the docstring, under stratified SRS and Poisson sampling."""
    domain, y, x = _pool(0)
    rng = np.random.default_rng(1)
    samples = [_draw(domain, y, rng) for _ in range(3)]
    samples.append(poisson_sample(domain, y, np.where(x[:, 0] > 0.5, 0.15, 0.08), rng))
    for sample in samples:
        fit, g, h = greg_or_hajek(sample, x), greg(sample, x), hajek(sample)
        lam = np.asarray(fit.params["slope"])
        np.testing.assert_array_equal(lam, g.params["slope"])
        f = x[sample.index] @ lam
        c = _slow_coefficients(sample, f)
        d, w = sample.labeled_domain, sample.weight
        big_f = np.bincount(domain, weights=x @ lam) / np.bincount(domain)
        n_hat = np.bincount(d, weights=w)
        direct = np.bincount(d, weights=w * (sample.y - c * (f - big_f[d]))) / n_hat
        np.testing.assert_allclose(fit.estimate, direct, rtol=0, atol=1e-12)
        e = sample.y - c * f
        e_bar = np.bincount(d, weights=w * e) / n_hat
        np.testing.assert_allclose(
            fit.variance, ht_variance(sample, (e - e_bar[d]) / n_hat[d]), rtol=1e-10
        )
        share = np.bincount(d, weights=w * c) / n_hat
        np.testing.assert_allclose(fit.params["coefficient"], share, rtol=0, atol=1e-12)
        # the ends: a domain where every coefficient is 1 is GREG, 0 Hajek, variance included
        for k in range(N_DOM):
            if np.all(c[d == k] == 1.0):
                assert np.isclose(fit.estimate[k], g.estimate[k], rtol=0, atol=1e-12)
                assert np.isclose(fit.variance[k], g.variance[k], rtol=1e-10)
            if np.all(c[d == k] == 0.0):
                assert np.isclose(fit.estimate[k], h.estimate[k], rtol=0, atol=1e-12)
                assert np.isclose(fit.variance[k], h.variance[k], rtol=1e-10)


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
    np.testing.assert_allclose(fit.estimate, g.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.variance, g.variance, rtol=1e-10)
    assert fit.params["coefficient"] == [1.0] * N_DOM


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


def test_no_selection_bias_near_one() -> None:
    """Seeded Monte-Carlo with known truth (issue 11): eight domains whose truth is near 1 with
    30 labels each, the signal as useful there as in three domains near the middle that fix the
    pooled slope. Choosing GREG or Hajek per domain by their estimated variances on the same
    labels picks Hajek, the extreme estimate, whenever the labels all agree: the average error
    over the eight domains is biased by 8.3 Monte-Carlo standard errors here. The
    cross-fitted coefficient is not (-0.8), and its MSE is 0.82 x Hajek's (0.98 before)."""
    rng = np.random.default_rng(20261202)
    truth_p = np.array([0.3, 0.5, 0.7] + [0.95] * 8)
    labels = np.array([60, 60, 60] + [30] * 8)
    n_dom, size = truth_p.size, 1000
    domain = np.repeat(np.arange(n_dom), size).astype(np.intp)
    y = (rng.random(domain.size) < truth_p[domain]).astype(float)
    x = (y + rng.normal(0, 0.3, domain.size))[:, None]
    truth = np.bincount(domain, weights=y) / size
    near_one = slice(3, None)
    reps = 300
    err = {"new": np.empty(reps), "selected": np.empty(reps), "hajek": np.empty(reps)}
    for r in range(reps):
        selected = np.zeros(domain.size, dtype=bool)
        for k in range(n_dom):
            selected[rng.choice(np.flatnonzero(domain == k), labels[k], replace=False)] = True
        sample = stratified_sample(domain, y, selected)
        g, h = greg(sample, x), hajek(sample)
        by_variance = np.where(g.variance <= h.variance, g.estimate, h.estimate)
        err["new"][r] = np.mean((greg_or_hajek(sample, x).estimate - truth)[near_one])
        err["selected"][r] = np.mean((by_variance - truth)[near_one])
        err["hajek"][r] = np.mean((h.estimate - truth)[near_one])

    def z(e: np.ndarray) -> float:
        return float(e.mean() / (e.std(ddof=1) / np.sqrt(reps)))

    assert z(err["selected"]) > 3  # the failure being fixed
    assert abs(z(err["new"])) < 3, z(err["new"])
    assert abs(z(err["hajek"])) < 3  # the Monte-Carlo check itself
    diff = err["new"] ** 2 - err["hajek"] ** 2
    assert diff.mean() < -2 * diff.std(ddof=1) / np.sqrt(reps)


def test_default_of_domains_is_greg_or_hajek_under_the_smoothing() -> None:
    domain, y, x = _pool(0)
    frame = pd.DataFrame({"dom": domain, "s": x[:, 0], "y": y})
    labeled = sw.sample(frame, strata="dom", fraction=0.1, rng=1).apply(frame, label="y")
    common = {"domain": "dom", "label": "y", "signals": ["s"], "strata": "stratum"}
    res = sw.domains(labeled, **common)  # 60 labels each: each moves by at most c se
    direct = sw.domains(labeled, method="greg-or-hajek", **common)
    assert np.all(np.abs(res.estimate - direct.estimate) <= TRANSLATION * direct.se + 1e-12)
    np.testing.assert_allclose(res.direct_estimate, direct.estimate, rtol=0, atol=1e-12)
    assert res.params["direct"] == "greg-or-hajek"
    pooled = sw.domains(labeled, direct="greg", **common)
    assert pooled.params["direct"] == "greg"
