"""Design-based cross-validation (DB-CV): choose a domain estimator and report its error from the
one labeled sample, with closed-form design covariances.

The folds split every stratum-by-domain cell of the labeled sample at random into K nearly equal
parts, so each fold is itself a probability sample (stratified SRS of the fold size, or Poisson
with pi_i / K) and its Horvitz-Thompson estimate is design-unbiased for the domain mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._typing import BoolArray, FloatArray, IntArray
from ..data.designs import DomainSample
from ..estimators.survey.direct import DIRECT, DomainProblem
from ..estimators.survey.ht import horvitz_thompson
from .fit import DomainFit, fit_domains


@dataclass(frozen=True, eq=False)
class DbcvOutcome:
    """Scores of every candidate (see :func:`design_cv`).

    Attributes
    ----------
    candidates : tuple of str
    domain_mse : ndarray of shape (C, D)
        DB-CV estimate of each candidate's full-sample MSE per domain.
    dbcv, naive, split50, split80, design : ndarray of shape (C,)
        Domain averages of the DB-CV estimate, of the uncorrected K-fold score, of the 50/50 and
        80/20 sample-splitting scores, and of the candidate's own se^2.
    fits : tuple of DomainFit
        The candidates fitted on the full sample.
    """

    candidates: tuple[str, ...]
    domain_mse: FloatArray
    dbcv: FloatArray
    naive: FloatArray
    split50: FloatArray
    split80: FloatArray
    design: FloatArray
    fits: tuple[DomainFit, ...]


def _shuffled_cells(
    sample: DomainSample, rng: np.random.Generator
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Units in random order within each stratum-by-domain cell.

    Returns the order (sorted by cell, random within it), the sorted cell ids, and each sorted
    unit's first and one-past-last position of its cell.
    """
    cell = sample.strata * sample.n_domains + sample.labeled_domain
    keys = rng.random(sample.n)
    order = np.lexsort((keys, cell))
    sorted_cell = cell[order]
    first = np.searchsorted(sorted_cell, sorted_cell, side="left")
    last = np.searchsorted(sorted_cell, sorted_cell, side="right")
    return order, sorted_cell, first, last


def assign_folds(sample: DomainSample, folds: int, rng: np.random.Generator) -> IntArray:
    """Fold id of every labeled unit, balanced within every stratum-by-domain cell."""
    order, sorted_cell, first, _ = _shuffled_cells(sample, rng)
    rank = np.arange(sample.n) - first
    offset = rng.integers(0, folds, size=int(sorted_cell.max()) + 1 if sample.n else 1)
    fold = np.empty(sample.n, dtype=np.intp)
    fold[order] = (rank + offset[sorted_cell]) % folds
    return fold


def split_mask(sample: DomainSample, share: float, rng: np.random.Generator) -> BoolArray:
    """Training mask holding round(share x n_cell) units of every stratum-by-domain cell."""
    order, _, first, last = _shuffled_cells(sample, rng)
    rank = np.arange(sample.n) - first
    size = last - first
    take = np.maximum(np.minimum(np.round(share * size), size - 1), 1)
    train = np.empty(sample.n, dtype=bool)
    train[order] = rank < take
    return train


def _stratum_moments(
    sample: DomainSample, a: FloatArray, b: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Within-stratum sample covariance S_ab of a 1_d and b 1_d per (stratum, domain), and n_hd."""
    n_dom = sample.n_domains
    n_strata = sample.stratum_pool.size
    key = sample.strata * n_dom + sample.labeled_domain
    size = n_strata * n_dom
    sab = np.bincount(key, weights=a * b, minlength=size).reshape(n_strata, n_dom)
    sa = np.bincount(key, weights=a, minlength=size).reshape(n_strata, n_dom)
    sb = np.bincount(key, weights=b, minlength=size).reshape(n_strata, n_dom)
    count = np.bincount(key, minlength=size).reshape(n_strata, n_dom).astype(np.float64)
    n_h = np.maximum(sample.stratum_sample, 2.0)[:, None]
    cov = (sab - sa * sb / n_h) / (n_h - 1.0)
    return cov, count


def fold_noise(sample: DomainSample, test: BoolArray, folds: int) -> FloatArray:
    """Design variance of the held-out fold's HT estimate, from full-sample moments.

    Notes
    -----
    Stratified SRS, fold size m_hk in stratum h, with S^2 estimated on the full sample:

    .. math::

        V_k(d) = \\sum_h N_h^2 (1/m_{hk} - 1/N_h) S^2_{h}(y 1_d / N_d).

    Poisson: the fold is a Poisson sample with pi_i / K, and
    V_k(d) = sum_{s_d} (1 - pi_i/K) (K y_i / (pi_i N_d))^2 / pi_i.
    """
    d = sample.labeled_domain
    b = sample.y / sample.pool_size[d]
    if sample.family == "poisson":
        pk = sample.pi / folds
        contrib = (1.0 - pk) * (b / pk) ** 2 / sample.pi
        return np.bincount(d, weights=contrib, minlength=sample.n_domains).astype(np.float64)
    cov, count = _stratum_moments(sample, b, b)
    m_hk = np.bincount(sample.strata[test], minlength=sample.stratum_pool.size).astype(float)
    big_n = sample.stratum_pool
    factor = np.where(m_hk > 0, big_n**2 * (1.0 / np.maximum(m_hk, 1.0) - 1.0 / big_n), 0.0)
    out = (factor[:, None] * cov).sum(axis=0)
    missing = ((count > 0) & (m_hk[:, None] == 0)).any(axis=0)
    return np.where(missing, np.nan, out)


def cross_covariance(sample: DomainSample, a: FloatArray) -> FloatArray:
    """C_d with Cov(training total of a, held-out total of y / N_d) = -C_d.

    Notes
    -----
    Two disjoint parts of a simple random sample from a stratum of N_h units have
    Cov(N_h abar_A, N_h bbar_B) = -N_h S_ab, whatever their sizes, so
    C_d = sum_h N_h S_{ab,h}; under Poisson sampling with random folds, C_d = sum_{s_d} a_i b_i /
    pi_i (estimating sum_{U_d} a_i b_i).
    """
    d = sample.labeled_domain
    b = sample.y / sample.pool_size[d]
    if sample.family == "poisson":
        return np.bincount(d, weights=a * b / sample.pi, minlength=sample.n_domains).astype(float)
    cov, _ = _stratum_moments(sample, a, b)
    out: FloatArray = (sample.stratum_pool[:, None] * cov).sum(axis=0)
    return out


def _direct_variance(fit: DomainFit) -> FloatArray:
    var = fit.direct.variance
    out: FloatArray = np.where(np.isfinite(var), var, fit.psi)
    return out


def design_cv(
    problem: DomainProblem,
    sample: DomainSample,
    candidates: Sequence[str],
    *,
    folds: int = 5,
    rng: np.random.Generator,
) -> DbcvOutcome:
    """DB-CV estimates of the full-sample MSE of every candidate estimator.

    Parameters
    ----------
    problem : DomainProblem
    sample : DomainSample
    candidates : sequence of str
        Method names (see :data:`slicewise.domains.fit.METHODS`).
    folds : int
        K >= 2.
    rng : numpy Generator

    Returns
    -------
    DbcvOutcome

    Notes
    -----
    For candidate theta_hat fitted without fold k and the fold's HT estimate,

    .. math::

        E(\\hat\\theta^{(-k)}_d - \\widehat{HT}^{(k)}_d)^2 = \\mathrm{MSE}(\\hat\\theta^{(-k)}_d)
        + V(\\widehat{HT}^{(k)}_d) - 2\\,\\mathrm{Cov}(\\hat\\theta^{(-k)}_d, \\widehat{HT}^{(k)}_d).

    DB-CV removes (i) the held-out HT noise V_k(d) (:func:`fold_noise`) and (ii) the covariance,
    which for a without-replacement design is negative:
    Cov = -gamma_d^{(-k)} C_d (:func:`cross_covariance`, gamma the shrinkage weight, a the
    linearised values of the direct estimator). The training-size MSE so obtained,
    M^tr_d = mean_k{(theta^(-k) - HT^(k))^2 - V_k - 2 gamma^(-k) C_d}, is moved to the full
    sample size with each estimator's closed-form design variance (linear-shrinkage form
    theta = gamma x direct + (1 - gamma) x synthetic, gamma and the synthetic part fixed):

    .. math::

        \\widehat{\\mathrm{MSE}}_d = \\gamma_d^2 V_d + r_d^2\\,(M^{tr}_d - \\bar\\gamma^{tr\\,2}_d
        \\bar V^{tr}_d),\\qquad r_d = \\frac{1 - \\gamma_d}{1 - \\bar\\gamma^{tr}_d}

    (r_d = 1 for direct estimators, where the formula becomes V_d + M^tr_d - V^tr_d: the
    CV-measured excess over the design variance is kept). V_d and V^tr_d are the design variances
    of the direct estimator on the full and the training samples. Naive CV is the uncorrected
    mean of (theta^(-k) - HT^(k))^2; the 50/50 and 80/20 splits score one training half against
    the HT of the rest, also uncorrected.

    References
    ----------
    Kawano, Li and Parker (2026), Prediction-powered smoothing and validation, Section 4 (DB-CV).
    The training-to-full correction and the covariance term are slicewise's construction from
    the stratified SRS and Poisson design covariances (Sarndal, Swensson and Wretman 1992,
    Sections 3.6-3.7).
    """
    cands = tuple(candidates)
    n_c = len(cands)
    n_dom = sample.n_domains
    fits = tuple(fit_domains(problem, sample, c) for c in cands)
    fold = assign_folds(sample, folds, rng)
    share = (folds - 1.0) / folds
    cross = [cross_covariance(sample, f.direct.z) for f in fits]
    corrected = np.full((folds, n_c, n_dom), np.nan)
    naive = np.full((folds, n_c, n_dom), np.nan)
    gamma_tr = np.full((folds, n_c, n_dom), np.nan)
    var_tr = np.full((folds, n_c, n_dom), np.nan)
    for k in range(folds):
        test = fold == k
        train_sample = sample.subsample(~test, fraction=share)
        test_sample = sample.subsample(test, fraction=1.0 / folds)
        ht_k = horvitz_thompson(test_sample).estimate
        noise = fold_noise(sample, test, folds)
        for c, name in enumerate(cands):
            tr = fit_domains(problem, train_sample, name)
            score = (tr.estimate - ht_k) ** 2
            naive[k, c] = score
            g = np.where(np.isfinite(tr.weight), tr.weight, 1.0)
            corrected[k, c] = score - noise - 2.0 * g * cross[c]
            gamma_tr[k, c] = tr.weight
            var_tr[k, c] = _direct_variance(tr)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(corrected)
        count = valid.sum(axis=0)
        m_tr = np.where(count > 0, np.nansum(corrected, axis=0) / np.maximum(count, 1), np.nan)
        g_tr = _nanmean(gamma_tr)
        v_tr = _nanmean(var_tr)
    domain_mse = np.full((n_c, n_dom), np.nan)
    for c, fit in enumerate(fits):
        g = fit.weight
        v = _direct_variance(fit)
        direct = cands[c] in DIRECT
        if direct:
            r = np.ones(n_dom)
        else:
            denom = 1.0 - g_tr[c]
            ratio = np.divide(1.0 - g, denom, out=np.ones(n_dom), where=denom > 1e-9)
            r = np.clip(ratio, 0.0, 1.0)
        domain_mse[c] = g**2 * v + r**2 * (m_tr[c] - g_tr[c] ** 2 * v_tr[c])
    naive_mean = np.array([_finite_mean(_nanmean(naive[:, c])) for c in range(n_c)])
    split_scores = []
    for share_train in (0.5, 0.8):
        train = split_mask(sample, share_train, rng)
        train_sample = sample.subsample(train, fraction=share_train)
        test_sample = sample.subsample(~train, fraction=1.0 - share_train)
        ht_test = horvitz_thompson(test_sample).estimate
        row = []
        for name in cands:
            tr = fit_domains(problem, train_sample, name)
            row.append(_finite_mean((tr.estimate - ht_test) ** 2))
        split_scores.append(np.array(row))
    return DbcvOutcome(
        candidates=cands,
        domain_mse=domain_mse,
        dbcv=np.array([_finite_mean(domain_mse[c]) for c in range(n_c)]),
        naive=naive_mean,
        split50=split_scores[0],
        split80=split_scores[1],
        design=np.array([_finite_mean(f.se**2) for f in fits]),
        fits=fits,
    )


def _nanmean(a: FloatArray) -> FloatArray:
    valid = np.isfinite(a)
    count = valid.sum(axis=0)
    total = np.where(valid, a, 0.0).sum(axis=0)
    out: FloatArray = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return out


def _finite_mean(a: FloatArray) -> float:
    finite = np.isfinite(a)
    return float(a[finite].mean()) if finite.any() else float("nan")
