"""What every direct domain estimator shares: its fit object and the design covariance of
Horvitz-Thompson totals.

Every direct estimator here is, to first order, a constant plus a Horvitz-Thompson total of
linearised values z_i over the domain's labeled units,

.. math::

    \\hat\\theta_d \\approx c_d + \\sum_{i \\in s_d} z_i / \\pi_i ,

so one function, :func:`ht_covariance`, gives every design variance (z with itself) and every
design covariance between two estimators of the same domain (two z vectors), e.g. Cov(GREG, HT)
needed by design-based cross-validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._typing import BoolArray, FloatArray
from ...data.designs import DomainSample


@dataclass(frozen=True, eq=False)
class DirectFit:
    """A direct domain estimator fitted on one labeled sample.

    Attributes
    ----------
    method : str
    estimate : ndarray of shape (D,)
        Point estimates (NaN for domains without labeled units).
    variance : ndarray of shape (D,)
        Design-variance estimates (NaN where the formula is undefined: no labels, or a stratum
        with a single labeled unit).
    z : ndarray of shape (n,)
        Linearised values of the labeled units: estimate_d ~ c_d + sum_{i in s_d} z_i / pi_i.
    n_labeled : ndarray of shape (D,)
    params : mapping
        Fitted coefficients (pooled slope, per-domain power-tuning factors, ...).
    floored : ndarray of bool, shape (D,), optional
        Where the variance is the residual floor of
        :func:`slicewise.domains.fit.residual_floored` (None: nowhere).
    """

    method: str
    estimate: FloatArray
    variance: FloatArray
    z: FloatArray
    n_labeled: FloatArray
    params: Mapping[str, Any] = field(default_factory=dict)
    floored: BoolArray | None = None


def ht_covariance(sample: DomainSample, z1: FloatArray, z2: FloatArray) -> FloatArray:
    """Design covariance estimate of two HT totals per domain.

    Parameters
    ----------
    sample : DomainSample
    z1, z2 : ndarray of shape (n,)
        Values on the labeled units (zero contribution outside the unit's own domain).

    Returns
    -------
    ndarray of shape (D,)
        Estimated Cov(sum_{s_d} z1/pi, sum_{s_d} z2/pi); NaN where undefined.

    Notes
    -----
    Stratified SRS without replacement (strata h may cut across domains; a unit outside domain d
    contributes zero to the domain-d total):

    .. math::

        \\widehat{C}_d = \\sum_h \\frac{N_h^2 (1 - n_h/N_h)}{n_h}\\,
        \\frac{1}{n_h - 1}\\sum_{i \\in s_h}(a_{id} - \\bar a_{hd})(b_{id} - \\bar b_{hd}),
        \\quad a_{id} = z_{1i} 1\\{i \\in d\\},

    which is undefined (NaN) when a stratum holding domain units has n_h = 1. Poisson sampling:

    .. math::

        \\widehat{C}_d = \\sum_{i \\in s_d} (1 - \\pi_i)\\, z_{1i} z_{2i} / \\pi_i^2 .

    Both are unbiased for the design covariance.

    References
    ----------
    Sarndal, C.-E., Swensson, B. and Wretman, J. (1992). *Model Assisted Survey Sampling*,
    Sections 3.7 (stratified SRS), 3.6 (Poisson) and 10.3 (domains).
    """
    d = sample.labeled_domain
    n_dom = sample.n_domains
    if sample.family == "poisson":
        pi = sample.pi
        contrib = (1.0 - pi) * z1 * z2 / pi**2
        return np.bincount(d, weights=contrib, minlength=n_dom).astype(np.float64)
    n_strata = sample.stratum_pool.size
    key = sample.strata * n_dom + d
    size = n_strata * n_dom
    s12 = np.bincount(key, weights=z1 * z2, minlength=size).reshape(n_strata, n_dom)
    s1 = np.bincount(key, weights=z1, minlength=size).reshape(n_strata, n_dom)
    s2 = np.bincount(key, weights=z2, minlength=size).reshape(n_strata, n_dom)
    count = np.bincount(key, minlength=size).reshape(n_strata, n_dom)
    n_h = sample.stratum_sample
    big_n = sample.stratum_pool
    ok = n_h >= 2
    safe_n = np.where(ok, n_h, 2.0)
    cov = (s12 - s1 * s2 / safe_n[:, None]) / (safe_n[:, None] - 1.0)
    factor = np.where(ok, big_n**2 * (1.0 - n_h / np.maximum(big_n, 1.0)) / safe_n, 0.0)
    total = (factor[:, None] * cov).sum(axis=0)
    undefined = ((count > 0) & ~ok[:, None]).any(axis=0)
    return np.where(undefined, np.nan, total)


def ht_variance(sample: DomainSample, z: FloatArray) -> FloatArray:
    """Design-variance estimate of the domain HT totals of ``z`` (see :func:`ht_covariance`).

    Rounding can leave a stratified estimate a hair below zero; it is set to zero.
    """
    var = ht_covariance(sample, z, z)
    out: FloatArray = np.where(var < 0.0, 0.0, var)
    return out


def domain_sums(sample: DomainSample, values: FloatArray) -> FloatArray:
    """sum_{i in s_d} values_i / pi_i for every domain."""
    return np.bincount(
        sample.labeled_domain, weights=values / sample.pi, minlength=sample.n_domains
    ).astype(np.float64)


def pool_means(domain: Any, values: FloatArray, n_domains: int) -> FloatArray:
    """Pool means of each column of ``values`` (M x K) per domain, shape (D, K)."""
    counts = np.bincount(domain, minlength=n_domains).astype(np.float64)
    out = np.empty((n_domains, values.shape[1]))
    for k in range(values.shape[1]):
        sums = np.bincount(domain, weights=values[:, k], minlength=n_domains)
        out[:, k] = np.divide(sums, counts, out=np.full(n_domains, np.nan), where=counts > 0)
    return out


def labeled_effective_size(sample: DomainSample) -> FloatArray:
    """Kish's effective size of each domain's labeled design weights, (sum w)^2 / sum w^2 with
    w = 1 / pi (the labeled count where the weights are equal; 0 without labels)."""
    w = sample.weight
    mass = np.bincount(sample.labeled_domain, weights=w, minlength=sample.n_domains)
    square = np.bincount(sample.labeled_domain, weights=w * w, minlength=sample.n_domains)
    return np.divide(mass**2, square, out=np.zeros(sample.n_domains), where=square > 0)


def design_factor(sample: DomainSample) -> FloatArray:
    """kappa_d = sum_{s_d} w_i (w_i - 1) / N_d^2 with w = 1 / pi.

    Under SRS of n_d from N_d this is (1 - f_d) / n_d, the factor that turns a per-unit variance
    into the variance of the domain mean.
    """
    w = sample.weight
    sums = np.bincount(sample.labeled_domain, weights=w * (w - 1.0), minlength=sample.n_domains)
    size = sample.pool_size
    return np.divide(sums, size**2, out=np.zeros(sample.n_domains), where=size > 0)


def pooled_variance(sample: DomainSample, variance: FloatArray, df: float) -> FloatArray:
    """Sampling variances with the per-unit variance shrunk toward its pooled value.

    Parameters
    ----------
    sample : DomainSample
    variance : ndarray of shape (D,)
        Direct design-variance estimates psi_d.
    df : float
        Prior degrees of freedom nu of the pooled per-unit variance (0 keeps psi_d).

    Returns
    -------
    ndarray of shape (D,)

    Notes
    -----
    With kappa_d from :func:`design_factor`, the implied per-unit variance s_d^2 = psi_d / kappa_d
    is pooled over domains with n_d >= 2 and each domain's value is shrunk toward it
    (a generalised variance function in the spirit of limma's moderated variances):

    .. math::

        s^2_{pool} = \\frac{\\sum_d (n_d - 1) s_d^2}{\\sum_d (n_d - 1)},\\qquad
        \\tilde\\psi_d = \\kappa_d \\frac{(n_d - 1) s_d^2 + \\nu s^2_{pool}}{n_d - 1 + \\nu}.

    A domain whose labels all agree (s_d^2 = 0), or that has a single label, so gets a positive
    sampling variance instead of an infinitely precise direct estimate.

    References
    ----------
    Smyth, G. K. (2004). Linear models and empirical Bayes methods for assessing differential
    expression in microarray experiments. *Stat. Appl. Genet. Mol. Biol.* 3(1), Section 4.
    Rao, J. N. K. and Molina, I. (2015). *Small Area Estimation*, 2nd ed., Section 6.1.2
    (smoothing the sampling variances).
    """
    kappa = design_factor(sample)
    n_d = sample.n_labeled
    usable = (n_d >= 2) & (kappa > 0) & np.isfinite(variance)
    if df <= 0:
        return np.where(n_d >= 1, variance, np.nan)
    s2 = np.divide(variance, kappa, out=np.zeros_like(variance), where=usable)
    weight = np.where(usable, n_d - 1.0, 0.0)
    if weight.sum() <= 0:
        return np.where(n_d >= 1, variance, np.nan)
    pool = float((weight * s2).sum() / weight.sum())
    shrunk = kappa * (weight * s2 + df * pool) / (weight + df)
    return np.where(n_d >= 1, shrunk, np.nan)
