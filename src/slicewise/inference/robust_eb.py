"""The robust empirical-Bayes confidence interval of Armstrong, Kolesar and Plagborg-Moller (2022).

A linear shrinkage estimator theta-tilde_d = m_d + w_d (theta-hat_d - m_d) of a direct estimate
theta-hat_d ~ N(theta_d, se_d^2) has error w_d (theta-hat_d - theta_d) + (1 - w_d)(m_d - theta_d):
a normal noise of standard error w_d se_d plus a bias that, in units of that standard error, is
b_d = (1/w_d - 1)(m_d - theta_d) / se_d. The parametric empirical-Bayes interval assumes the
departures m_d - theta_d are normal; the robust one only that their normalised second moment is
m2 = E b_d^2, and takes the worst case over every distribution with that moment:

.. math::

    \tilde\theta_d \\pm \\mathrm{cva}_\alpha(m_2)\\, w_d\\, se_d,\\qquad
    \\mathrm{cva}_\alpha(m_2) = \\min\\{\\chi : \rho(m_2, \\chi) \\le \alpha\\},\\quad
    \rho(m_2, \\chi) = \\sup_{F : E_F b^2 = m_2} E_F\\, r(b, \\chi),

with r(b, chi) = P(|Z - b| > chi) (their eq. (8) with the second-moment constraint only). It
covers theta_d with probability at least 1 - alpha on average over the slices, whatever the
distribution of the departures. Under the Fay-Herriot model with spread sigma_v^2,
w = sigma_v^2 / (sigma_v^2 + se^2) and m2 = se^2 / sigma_v^2 = (1 - w) / w.

References
----------
Armstrong, T. B., Kolesar, M. and Plagborg-Moller, M. (2022). Robust empirical Bayes
confidence intervals. *Econometrica* 90(6), 2567-2602.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray


def _non_coverage(bias: FloatArray, chi: FloatArray) -> FloatArray:
    """r(b, chi) = P(|Z - b| > chi), Z standard normal."""
    from scipy import special

    out: FloatArray = special.ndtr(-chi - bias) + special.ndtr(-chi + bias)
    return out


#: Grid of t = b^2 / m2 for the worst case over distributions of the normalised bias.
_T_GRID = np.geomspace(1.0, 1e4, 801)


def _max_non_coverage(m2: FloatArray, chi: FloatArray) -> FloatArray:
    """rho(m2, chi): the largest non-coverage over distributions of b with E b^2 = m2.

    The concave envelope of t -> r(sqrt t, chi) at m2 (AKP 2022, Proposition B.1): either all
    mass at b^2 = m2, or a two-point distribution on {0, t} with t >= m2 and mass m2 / t at t.
    """
    m2 = np.maximum(m2, 1e-300)[:, None]
    chi = chi[:, None]
    t = m2 * _T_GRID[None, :]
    r0 = _non_coverage(np.zeros_like(chi), chi)
    chords = r0 + (m2 / t) * (_non_coverage(np.sqrt(t), chi) - r0)
    out: FloatArray = np.max(chords, axis=1)
    return out


def robust_critical(m2: FloatArray, level: float) -> FloatArray:
    """The robust critical value cva_alpha(m2) of the module notes.

    Parameters
    ----------
    m2 : ndarray
        Mean square of the normalised bias of each slice (0: no shrinkage).
    level : float

    Returns
    -------
    ndarray
        cva(m2), at least the normal quantile, by bisection to 1e-10.

    Examples
    --------
    >>> import numpy as np
    >>> robust_critical(np.array([0.0, 1.0]), 0.95).round(3).tolist()
    [1.96, 3.259]
    """
    from scipy import special

    m2 = np.atleast_1d(np.asarray(m2, dtype=np.float64))
    alpha = 1.0 - level
    low = np.full(m2.shape, float(special.ndtri(1.0 - alpha / 2.0)))
    high = low + 2.0 * np.sqrt(np.maximum(m2, 0.0)) + 10.0
    ok = np.isfinite(m2) & (m2 > 0)
    for _ in range(60):
        mid = 0.5 * (low + high)
        above = _max_non_coverage(np.where(ok, m2, 0.0), mid) > alpha
        low = np.where(above, mid, low)
        high = np.where(above, high, mid)
    out: FloatArray = np.where(ok, high, np.where(np.isfinite(m2), low, np.nan))
    return out


def robust_interval(
    estimate: FloatArray,
    robust_se: FloatArray,
    robust_m2: FloatArray,
    level: float,
    *,
    naive_estimate: FloatArray | None = None,
    n_labeled_eff: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The robust EBCI of every smoothed slice (NaN where it was not smoothed).

    estimate +/- cva(m2) w se, or with ``naive_estimate`` and ``n_labeled_eff`` (labels in [0, 1])
    the Wilson-type interval of :func:`slicewise.inference.bounded.interval_bounds` with the
    same standard error and critical value.
    """
    from .bounded import interval_bounds

    crit = robust_critical(robust_m2, level)
    low, high = interval_bounds(
        estimate, robust_se, crit, naive_estimate=naive_estimate, n_labeled_eff=n_labeled_eff
    )
    ok = np.isfinite(crit) & np.isfinite(robust_se) & np.isfinite(estimate)
    return np.where(ok, low, np.nan), np.where(ok, high, np.nan)
