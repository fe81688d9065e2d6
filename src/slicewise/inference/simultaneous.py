"""Simultaneous intervals over a family of Student-t intervals (pairs x grid points).

Each interval j of the family has estimate, standard error and degrees of freedom nu_j (Student t;
nu_j = inf or NaN means normal), and its pointwise interval is estimate +/- t_{nu_j, 1 - alpha/2} se.
A simultaneous interval must use the same small-sample law, or with few labels it comes out
*narrower* than the pointwise one (normal max-|t| critical values against t quantiles with 1 or 2
degrees of freedom).

**Single-step min-P.** Model the t-statistics as

.. math::

    T_j = Z_j / \\sqrt{W_j / \\nu_j},\\qquad Z \\sim N(0, R),\\qquad
    W_j \\sim \\chi^2_{\\nu_j} \\text{ independent of each other and of } Z,

with R the correlation of the estimates (from their influence values), and let
p_j = 2 P(t_{nu_j} > |T_j|) be the two-sided p-value of interval j. The per-interval level alpha* is
the alpha quantile of min_j p_j (Westfall and Young 1993, Section 2.6, the single-step min-P
adjustment), and interval j uses the critical value t_{nu_j, 1 - alpha*/2}. Then

.. math::

    P(\\text{every interval covers}) = P(\\min_j p_j > \\alpha^*) = 1 - \\alpha

under the model, for any mix of degrees of freedom: intervals with few degrees of freedom get
wider critical values without widening the others. With equal nu_j it is the max-|t| critical value
of the multivariate t law (Hothorn, Bretz and Westfall 2008); with nu_j = inf it is the normal
max-|Z| value.

**Why independent denominators.** The variance estimates of a family that shares labeled items
are positively dependent; a common denominator (one sigma-hat, the multivariate t of a linear
model) is the other extreme. For a fixed critical value c the common denominator gives the higher
joint coverage: for independent Z, E_S[P(|Z| <= c S)^J] >= (E_S[P(|Z| <= c S)])^J by Jensen's
inequality (the argument of Sidak 1967 for the studentized maximum modulus), and for perfectly
correlated Z the common denominator gives one t-statistic where independent ones give the maximum
of J. So independent denominators are the conservative end.

**Never narrower than pointwise.** Since min_j p_j <= p_j, alpha* <= alpha; the Monte-Carlo
alpha* is also clamped to [alpha / J, alpha] (Bonferroni's bound alpha / J is valid for any
dependence), so t_{nu_j, 1 - alpha*/2} >= t_{nu_j, 1 - alpha/2} holds exactly, draw by draw.

**Bonferroni.** alpha* = alpha / J and t_{nu_j, 1 - alpha/(2J)}: conservative for any dependence
between the intervals (Bonferroni's inequality), no draws.

References
----------
Westfall, P. H. and Young, S. S. (1993). *Resampling-Based Multiple Testing*. Wiley.
Hothorn, T., Bretz, F. and Westfall, P. (2008). Simultaneous inference in general parametric
models. *Biometrical Journal* 50, 346-363.
Sidak, Z. (1967). Rectangular confidence regions for the means of multivariate normal
distributions. *JASA* 62, 626-633.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._typing import FloatArray


def _two_sided_p(t: FloatArray, df: FloatArray) -> FloatArray:
    """2 P(t_df > |t|) per column; normal where df is not finite."""
    finite = np.isfinite(df)
    out = np.empty_like(t)
    if finite.any():
        out[:, finite] = 2.0 * stats.t.sf(np.abs(t[:, finite]), df[finite])
    if (~finite).any():
        out[:, ~finite] = 2.0 * stats.norm.sf(np.abs(t[:, ~finite]))
    return out


def clean_df(df: FloatArray) -> FloatArray:
    """Degrees of freedom with NaN and non-positive values read as inf (a normal interval)."""
    df = np.asarray(df, dtype=np.float64)
    return np.where(np.isfinite(df) & (df > 0), df, np.inf)


def min_p_draws(
    corr: FloatArray,
    df: FloatArray,
    *,
    n_draws: int,
    rng: np.random.Generator,
    block: int = 2048,
) -> FloatArray:
    """Draws of min_j p_j under the model of the module notes, sorted ascending.

    Parameters
    ----------
    corr : (J, J) correlation matrix of the estimates
    df : (J,) degrees of freedom (NaN or inf: normal)
    n_draws : int
    rng : numpy Generator

    Returns
    -------
    ndarray of shape (n_draws,); empty when J = 0.

    Notes
    -----
    The correlation is factored by an eigendecomposition (negative round-off eigenvalues are
    clipped), so singular correlations (gap(a, c) = gap(a, b) + gap(b, c) when the three share L
    and the coefficient is zero) are handled.
    """
    j = corr.shape[0]
    if j == 0:
        return np.zeros(0)
    nu = clean_df(df)
    finite = np.isfinite(nu)
    eigval, eigvec = np.linalg.eigh(corr)
    keep = eigval > 1e-12 * max(float(eigval.max(initial=0.0)), 1.0)
    factor = eigvec[:, keep] * np.sqrt(eigval[keep])
    out = np.empty(n_draws)
    for start in range(0, n_draws, block):
        size = min(block, n_draws - start)
        t = rng.standard_normal((size, factor.shape[1])) @ factor.T
        if finite.any():
            scale = rng.chisquare(nu[finite], size=(size, int(finite.sum()))) / nu[finite]
            t[:, finite] /= np.sqrt(scale)
        out[start : start + size] = _two_sided_p(t, nu).min(axis=1)
    out.sort()
    return out


def per_interval_level(draws: FloatArray, level: float, n_tests: int) -> float:
    """alpha*: the (1 - level) quantile of the min-p draws, clamped to [alpha / J, alpha].

    No draws (Bonferroni, or an empty family) gives Bonferroni's alpha / J.
    """
    alpha = 1.0 - level
    bonferroni = alpha / max(n_tests, 1)
    if draws.size == 0:
        return bonferroni
    value = float(np.quantile(draws, alpha, method="lower"))
    return min(max(value, bonferroni), alpha)


def t_critical(alpha: float, df: FloatArray) -> FloatArray:
    """t_{df, 1 - alpha/2} elementwise; the normal quantile where df is NaN, inf or <= 0."""
    nu = clean_df(df)
    finite = np.isfinite(nu)
    z = float(stats.norm.isf(alpha / 2.0))
    out = np.full(nu.shape, z)
    out[finite] = stats.t.isf(alpha / 2.0, nu[finite])
    return out
