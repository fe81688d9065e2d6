"""Horvitz-Thompson and Hajek domain means with their design variances."""

from __future__ import annotations

import numpy as np

from ...data.designs import DomainSample
from .base import DirectFit, domain_sums, ht_variance


def horvitz_thompson(sample: DomainSample) -> DirectFit:
    """Horvitz-Thompson estimate of every domain mean.

    Parameters
    ----------
    sample : DomainSample

    Returns
    -------
    DirectFit
        NaN estimate for domains without labeled units.

    Notes
    -----
    .. math::

        \\hat\\theta^{HT}_d = \\frac{1}{N_d}\\sum_{i \\in s_d} \\frac{y_i}{\\pi_i},\\qquad
        \\widehat V(\\hat\\theta^{HT}_d) = \\widehat V_{HT}\\big(\\textstyle\\sum_{s_d} z_i/\\pi_i\\big),
        \\ z_i = y_i / N_d,

    with the design variance of an HT total from :func:`.base.ht_covariance`. Design-unbiased for
    the finite-population domain mean under any design with pi_i > 0.

    References
    ----------
    Horvitz, D. G. and Thompson, D. J. (1952). A generalization of sampling without replacement
    from a finite universe. *JASA* 47, 663-685.
    Kawano, Li and Parker (2026), Prediction-powered smoothing, Section 2 (direct estimators).
    """
    n_d = sample.n_labeled
    size = sample.pool_size[sample.labeled_domain]
    z = sample.y / size
    estimate = domain_sums(sample, z)
    variance = ht_variance(sample, z)
    has = n_d > 0
    return DirectFit(
        method="ht",
        estimate=np.where(has, estimate, np.nan),
        variance=np.where(has, variance, np.nan),
        z=z,
        n_labeled=n_d,
    )


def hajek(sample: DomainSample) -> DirectFit:
    """Hajek (ratio) estimate of every domain mean.

    Notes
    -----
    .. math::

        \\hat\\theta^{H}_d = \\frac{\\sum_{s_d} y_i/\\pi_i}{\\hat N_d},\\quad
        \\hat N_d = \\sum_{s_d} 1/\\pi_i,\\qquad
        z_i = (y_i - \\hat\\theta^{H}_d)/\\hat N_d

    (Taylor linearisation of the ratio). Equal to HT when the domain's sample weights add up to
    N_d (e.g. SRS within strata that are the domains).

    References
    ----------
    Sarndal, Swensson and Wretman (1992), *Model Assisted Survey Sampling*, Section 5.7.
    """
    n_d = sample.n_labeled
    d = sample.labeled_domain
    ones = np.ones(sample.n)
    n_hat = domain_sums(sample, ones)
    total = domain_sums(sample, sample.y)
    has = n_hat > 0
    safe = np.where(has, n_hat, 1.0)
    estimate = np.where(has, total / safe, np.nan)
    z = (sample.y - np.where(has, estimate, 0.0)[d]) / safe[d]
    variance = ht_variance(sample, z)
    return DirectFit(
        method="hajek",
        estimate=estimate,
        variance=np.where(n_d > 1, variance, np.nan),
        z=z,
        n_labeled=n_d,
    )
