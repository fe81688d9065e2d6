"""GREG domain means with a regression slope pooled over all domains, and their design variance."""

from __future__ import annotations

import numpy as np

from ..._typing import FloatArray
from ...data.designs import DomainSample
from .base import DirectFit, domain_sums, ht_variance, pool_means


def pooled_slope(sample: DomainSample, auxiliaries: FloatArray) -> FloatArray:
    """Weighted least-squares slope of y on the auxiliaries, pooled over domains.

    Parameters
    ----------
    sample : DomainSample
    auxiliaries : ndarray of shape (M, K)

    Returns
    -------
    ndarray of shape (K,)

    Notes
    -----
    Domain-specific intercepts are profiled out by centring at the Hajek domain means, so the
    slope measures the within-domain association only:

    .. math::

        \\hat\\lambda = \\Big(\\sum_{i \\in s} w_i \\tilde x_i \\tilde x_i^\\top\\Big)^{+}
        \\sum_{i \\in s} w_i \\tilde x_i \\tilde y_i,\\quad
        \\tilde x_i = x_i - \\bar x_{w, d(i)},\\ \\tilde y_i = y_i - \\bar y_{w, d(i)},\\
        w_i = 1/\\pi_i

    (Moore-Penrose inverse, so collinear or constant auxiliaries get a zero slope component).
    """
    n_dom = sample.n_domains
    d = sample.labeled_domain
    w = sample.weight
    x = auxiliaries[sample.index]
    sw = np.bincount(d, weights=w, minlength=n_dom)
    safe = np.where(sw > 0, sw, 1.0)
    y_bar = np.bincount(d, weights=w * sample.y, minlength=n_dom) / safe
    x_bar = np.column_stack(
        [np.bincount(d, weights=w * x[:, k], minlength=n_dom) / safe for k in range(x.shape[1])]
    ).reshape(n_dom, x.shape[1])
    xt = x - x_bar[d]
    yt = sample.y - y_bar[d]
    gram = (xt * w[:, None]).T @ xt
    cross = (xt * w[:, None]).T @ yt
    scale = np.sqrt(np.maximum(np.diag(gram), 0.0))
    if not np.any(scale > 0):
        return np.zeros(x.shape[1])
    keep = scale > 1e-12 * max(float(scale.max()), 1.0)
    slope = np.zeros(x.shape[1])
    sub = gram[np.ix_(keep, keep)] / np.outer(scale[keep], scale[keep])
    slope[keep] = (np.linalg.pinv(sub, rcond=1e-10) @ (cross[keep] / scale[keep])) / scale[keep]
    return slope


def greg(
    sample: DomainSample,
    auxiliaries: FloatArray,
    *,
    slope: FloatArray | None = None,
) -> DirectFit:
    """GREG estimate of every domain mean with a pooled slope.

    Parameters
    ----------
    sample : DomainSample
    auxiliaries : ndarray of shape (M, K)
        Auxiliary variables on every pool unit (historical models' correctness, judge scores,
        difficulty, ...).
    slope : ndarray of shape (K,), optional
        A fixed slope; by default :func:`pooled_slope` on this sample.

    Returns
    -------
    DirectFit
        ``params['slope']`` holds the slope.

    Notes
    -----
    The working model y_i = alpha_d + lambda' x_i + e_i has a domain intercept and a slope
    shared by all domains. The GREG estimator is

    .. math::

        \\hat\\theta^{GREG}_d = \\bar y_{w,d} + \\hat\\lambda^\\top(\\bar X_{U_d} - \\bar x_{w,d}),

    i.e. HT plus the regression correction when the design weights of domain d add up to N_d
    (SRS within domain strata, as in the paper) and its Hajek version otherwise. Its design
    variance is that of the HT total of the residuals (slope treated as fixed, Taylor
    linearisation):

    .. math::

        z_i = \\hat e_i / \\hat N_d,\\quad
        \\hat e_i = (y_i - \\bar y_{w,d}) - \\hat\\lambda^\\top(x_i - \\bar x_{w,d}).

    A useless auxiliary has a slope near zero, so GREG stays close to HT/Hajek; a stronger one
    removes the share R^2 of the residual variance.

    References
    ----------
    Sarndal, Swensson and Wretman (1992), *Model Assisted Survey Sampling*, Sections 6.5-6.6 and
    10.5 (GREG for domains, residual variance estimator).
    Kawano, Li and Parker (2026), Prediction-powered smoothing, Section 2 (GREG, pooled slope).
    """
    lam = pooled_slope(sample, auxiliaries) if slope is None else np.asarray(slope, dtype=float)
    n_dom = sample.n_domains
    d = sample.labeled_domain
    x = auxiliaries[sample.index]
    n_hat = domain_sums(sample, np.ones(sample.n))
    has = n_hat > 0
    safe = np.where(has, n_hat, 1.0)
    y_bar = domain_sums(sample, sample.y) / safe
    x_bar = np.column_stack([domain_sums(sample, x[:, k]) / safe for k in range(x.shape[1])])
    x_bar = x_bar.reshape(n_dom, x.shape[1])
    pool_x = pool_means(sample.domain, auxiliaries, n_dom)
    correction = (np.nan_to_num(pool_x) - x_bar) @ lam
    estimate = np.where(has, y_bar + correction, np.nan)
    resid = (sample.y - y_bar[d]) - (x - x_bar[d]) @ lam
    z = resid / safe[d]
    variance = ht_variance(sample, z)
    n_d = sample.n_labeled
    return DirectFit(
        method="greg",
        estimate=estimate,
        variance=np.where(n_d > 1, variance, np.nan),
        z=z,
        n_labeled=n_d,
        params={"slope": lam.copy()},
    )
