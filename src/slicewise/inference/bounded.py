"""Intervals kept inside [0, 1] for a mean of labels in [0, 1]: a Wilson-type score interval.

A Wald or t interval estimate +/- c se can leave [0, 1] near the boundary, where it also covers
poorly (the variance of a proportion shrinks with it). Clipping such an interval does not repair
its coverage. Instead, invert the score-type statement |p - theta| <= c sd(theta) with the
variance of a proportion at theta,

.. math::

    \\{\\theta \\in [0, 1] : (\\check p - \\theta)^2 \\le c^2\\, \\theta (1 - \\theta) / n^*\\},

which is the Wilson interval of a proportion p-check = clip(estimate, 0, 1) with the effective
sample size

.. math::

    n^* = q / \\widehat{se}^2,\\qquad q = \\bar p (1 - \\bar p) \\text{ for }
    0 < \\bar p < 1,\\qquad q = \\tilde p (1 - \\tilde p),\\
    \\tilde p = (n_L \\bar p + 1) / (n_L + 2) \\text{ otherwise},

with p-bar the labels-only (naive) estimate at the same point: the number of independent
Bernoulli labels that would give the reported variance (Kish's effective sample size; Korn and
Graubard 1998 use it to carry exact and Wilson intervals to complex samples). Where every labeled
item of a neighbourhood agrees (p-bar = 0 or 1) the reported se is the Agresti-Coull floor of
:mod:`slicewise.inference.variance`, and the "plus two" proportion p-tilde (Agresti and Coull 1998;
n_L the labeled effective sample size) gives the matching n* = n_L + 2 (over 1 - pi for the pool
target). For a control-variate estimate n* is about n_L x gain, so the signals' precision is kept;
the Bernoulli variance is taken at the naive estimate, which is never outside [0, 1] (a linear
adjustment can be). c is
the same critical value as the unbounded interval (Student t with the result's df, normal where
df is NaN). Solving the quadratic gives

.. math::

    \\frac{\\check p + c^2 / (2 n^*)}{1 + c^2 / n^*} \\pm
    \\frac{c}{1 + c^2 / n^*} \\sqrt{\\frac{\\check p (1 - \\check p)}{n^*} + \\frac{c^2}{4 n^{*2}}},

always inside [0, 1], and close to estimate +/- c se away from the boundary.

References
----------
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
*JASA* 22, 209-212.
Agresti, A. and Coull, B. A. (1998). Approximate is better than "exact" for interval estimation of
binomial proportions. *The American Statistician* 52, 119-126.
Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small expected
number of positive counts estimated from survey data. *Survey Methodology* 24, 193-201.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray


def effective_size(
    naive_estimate: FloatArray, se: FloatArray, n_labeled_eff: FloatArray
) -> FloatArray:
    """n* = q / se^2 of the module notes (inf where se = 0, NaN where undefined)."""
    p = np.clip(np.asarray(naive_estimate, dtype=np.float64), 0.0, 1.0)
    n_l = np.asarray(n_labeled_eff, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_tilde = (n_l * p + 1.0) / (n_l + 2.0)
        q = np.where((p > 0) & (p < 1), p * (1.0 - p), p_tilde * (1.0 - p_tilde))
        n_star = np.where(se > 0, q / np.where(se > 0, se, 1.0) ** 2, np.inf)
    ok = np.isfinite(p) & np.isfinite(se) & np.isfinite(n_l) & (n_l > 0)
    return np.where(ok, n_star, np.nan)


def wilson_interval(
    estimate: FloatArray, n_star: FloatArray, crit: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Wilson bounds of clip(estimate, 0, 1) with effective size ``n_star`` and quantile ``crit``.

    NaN where ``n_star`` is NaN; the single point clip(estimate, 0, 1) where ``n_star`` is inf.
    """
    p = np.clip(np.asarray(estimate, dtype=np.float64), 0.0, 1.0)
    c2 = np.asarray(crit, dtype=np.float64) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = c2 / n_star  # 0 where n* is inf
        denom = 1.0 + ratio
        center = (p + ratio / 2.0) / denom
        half = np.sqrt(c2) / denom * np.sqrt(p * (1.0 - p) / n_star + ratio**2 / (4.0 * c2))
    half = np.where(c2 > 0, half, 0.0)
    low = np.clip(center - half, 0.0, 1.0)  # round-off only: the exact bounds lie in [0, 1]
    high = np.clip(center + half, 0.0, 1.0)
    return low, high


def interval_bounds(
    estimate: FloatArray,
    se: FloatArray,
    crit: FloatArray,
    bias_bound: FloatArray | float = 0.0,
    *,
    naive_estimate: FloatArray | None = None,
    n_labeled_eff: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The pointwise interval every result and study reports, widened by a bias bound b.

    Without ``naive_estimate``: estimate +/- (crit se + b). With it (a mean of labels in [0, 1]):
    the Wilson-type interval of the module notes, from the lower bound at estimate - b to the
    upper bound at estimate + b -- the hull of the intervals of every estimate within b, since
    both Wilson bounds are non-decreasing in the estimate. Either way the interval contains the
    one of any estimate within b with the same se (for a smoothed slice: its direct interval,
    :mod:`slicewise.smoothing.objective`). The bounded interval lies inside [0, 1] except
    that it always contains the estimate, which a linear adjustment by the signals can put
    slightly outside. Arrays broadcast against each other.
    """
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    bound = np.asarray(bias_bound, dtype=np.float64)
    if naive_estimate is None:
        half = np.asarray(crit, dtype=np.float64) * se + bound
        return est - half, est + half
    if n_labeled_eff is None:
        raise TypeError("interval_bounds needs n_labeled_eff together with naive_estimate")
    n_star = effective_size(naive_estimate, se, n_labeled_eff)
    low, _ = wilson_interval(est - bound, n_star, crit)
    _, high = wilson_interval(est + bound, n_star, crit)
    # Where every label is 1 (0) the interval reaches 1 (0), as the Wilson interval of those
    # labels does: a signal adjustment can put the estimate just inside the boundary, and the
    # interval of that estimate would exclude a truth of exactly 1 (measured: PSN-IRT model_3
    # answers all MMLU items correctly; auto's profile covered 0.79-0.81 there over 200 draws,
    # GREG domain estimates 0.53-0.55). A linear adjustment can also put the estimate itself
    # outside [0, 1]; its interval still holds it.
    naive = np.asarray(naive_estimate, dtype=np.float64)
    labeled = np.asarray(n_labeled_eff, dtype=np.float64) > 0
    low = np.where(labeled & (naive == 0.0), np.minimum(low, 0.0), low)
    high = np.where(labeled & (naive == 1.0), np.maximum(high, 1.0), high)
    return np.minimum(low, est), np.maximum(high, est)
