"""Prediction-powered domain means (PPI) and the power-tuned version (PPI++), with design
variances."""

from __future__ import annotations

import numpy as np

from ..._typing import FloatArray
from ...data.designs import DomainSample
from .base import DirectFit, domain_sums, ht_variance


def ppi(
    sample: DomainSample,
    prediction: FloatArray,
    *,
    coefficient: FloatArray | float = 1.0,
    method: str = "ppi",
) -> DirectFit:
    """PPI estimate of every domain mean for a fixed power-tuning coefficient.

    Parameters
    ----------
    sample : DomainSample
    prediction : ndarray of shape (M,)
        The prediction f_i on every pool unit.
    coefficient : float or ndarray of shape (D,)
        lambda (1 is plain PPI; 0 is HT).
    method : str
        Name recorded in the fit.

    Returns
    -------
    DirectFit

    Notes
    -----
    .. math::

        \\hat\\theta^{PPI}_d(\\lambda) = \\lambda \\bar f_{U_d}
        + \\frac{1}{N_d}\\sum_{i \\in s_d}\\frac{y_i - \\lambda f_i}{\\pi_i},
        \\qquad z_i = (y_i - \\lambda f_i) / N_d .

    The pool mean of the prediction is known exactly (the target is the finite-pool domain mean),
    so only the HT residual correction varies over samples; design-unbiased for any lambda fixed
    in advance.

    References
    ----------
    Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. and Zrnic, T. (2023).
    Prediction-powered inference. *Science* 382, 669-674.
    Kawano, Li and Parker (2026), Prediction-powered smoothing, Section 2.
    """
    d_pool = sample.domain
    n_dom = sample.n_domains
    counts = sample.pool_size
    lam = np.broadcast_to(np.asarray(coefficient, dtype=np.float64), (n_dom,))
    pool_sum = np.bincount(d_pool, weights=prediction, minlength=n_dom)
    pool_mean = np.divide(pool_sum, counts, out=np.zeros(n_dom), where=counts > 0)
    d = sample.labeled_domain
    f_lab = prediction[sample.index]
    z = (sample.y - lam[d] * f_lab) / sample.pool_size[d]
    estimate = lam * pool_mean + domain_sums(sample, z)
    variance = ht_variance(sample, z)
    n_d = sample.n_labeled
    has = n_d > 0
    return DirectFit(
        method=method,
        estimate=np.where(has, estimate, np.nan),
        variance=np.where(has, variance, np.nan),
        z=z,
        n_labeled=n_d,
        params={"coefficient": lam.copy()},
    )


def power_tuned_coefficient(
    sample: DomainSample, prediction: FloatArray, *, minimum_labels: int = 3
) -> FloatArray:
    """Per-domain power-tuning factor lambda_d in [0, 1].

    Notes
    -----
    The design variance of the PPI residual total is smallest at the finite-pool regression slope
    of y on f; it is estimated from the domain's labeled units with Hajek weights, over the pool
    variance of f (known exactly), and clipped to [0, 1]:

    .. math::

        \\hat\\lambda_d = \\mathrm{clip}_{[0,1]}\\Big(
        \\frac{\\sum_{s_d} w_i (f_i - \\bar f_w)(y_i - \\bar y_w) / \\sum_{s_d} w_i}
        {S^2_{f, U_d}}\\Big).

    Domains with fewer than ``minimum_labels`` labels or a constant prediction get lambda = 0 (HT).
    ppi_py's superpopulation version divides by (1 + n/N) var(f) instead, because there the
    unlabeled mean of f is itself random.

    References
    ----------
    Angelopoulos, A. N., Duchi, J. C. and Zrnic, T. (2023). PPI++: Efficient prediction-powered
    inference. arXiv:2311.01453, Section 2 (power tuning).
    """
    n_dom = sample.n_domains
    d = sample.labeled_domain
    w = sample.weight
    f = prediction[sample.index]
    y = sample.y
    sw = np.bincount(d, weights=w, minlength=n_dom)
    safe = np.where(sw > 0, sw, 1.0)
    f_bar = np.bincount(d, weights=w * f, minlength=n_dom) / safe
    y_bar = np.bincount(d, weights=w * y, minlength=n_dom) / safe
    cov = np.bincount(d, weights=w * (f - f_bar[d]) * (y - y_bar[d]), minlength=n_dom) / safe
    counts = sample.pool_size
    safe_counts = np.where(counts > 1, counts, 2.0)
    pool_sum = np.bincount(sample.domain, weights=prediction, minlength=n_dom)
    pool_sq = np.bincount(sample.domain, weights=prediction**2, minlength=n_dom)
    var_f = (pool_sq - pool_sum**2 / safe_counts) / (safe_counts - 1.0)
    ok = (sample.n_labeled >= minimum_labels) & (var_f > 1e-12) & (counts > 1)
    lam = np.divide(cov, var_f, out=np.zeros(n_dom), where=ok)
    return np.clip(lam, 0.0, 1.0)


def ppi_plus_plus(sample: DomainSample, prediction: FloatArray) -> DirectFit:
    """PPI++: PPI with the per-domain power-tuning factor of :func:`power_tuned_coefficient`.

    The reported variance treats lambda_d as fixed (first-order linearisation; the estimation of
    lambda_d adds O(1/n_d^2)).
    """
    lam = power_tuned_coefficient(sample, prediction)
    return ppi(sample, prediction, coefficient=lam, method="ppi++")
