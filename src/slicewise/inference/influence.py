"""Item-level influence values of centered control-variate profiles, and simultaneous intervals.

For theta_hat(z) = Ybar_L(z) - c(z)'(Xbar_L(z) - Xbar_T(z)) the linear representation of
:mod:`slicewise.inference.variance` is a sum over labeled items,

.. math::

    \\hat\\theta(z) - \\theta_T(z) \\approx \\sum_{i\\in L} \\phi_i(z),\\qquad
    \\phi_i(z) = w_{i,L}(z)\\{e_i(z) - \\bar e_L(z)\\},\\quad e_i(z) = Y_i - c(z)^\\top X_i ,

and :math:`\\sum_L \\phi_i(z)^2` is the quadratic form
``LabeledMoments.quadratic(c, squared=True)``.
Scaling column z by :math:`s(z) = \\{\\hat V(z) / \\sum_L \\phi_i(z)^2\\}^{1/2}` (finite-population
and small-sample factors of the variance module) makes the column's sum of squares the reported
variance; the covariance of any two linear functionals (two grid points, two model pairs sharing L)
is then the cross-product of their scaled influence columns. Linear combinations
sum_z a(z) theta_hat(z) (deployment weights) have variance :math:`\\sum_i \\{\\sum_z a(z)
\\phi_i(z) s(z)\\}^2`; for disjoint neighbourhoods (categorical groups) this is exactly
sum_z a(z)^2 V(z).

For the population target the pool-sampling part is added with its own influence values
:math:`\\psi_i(z) = w_{i,L}(z)\\{Y_i - \\bar Y_L(z)\\}`, scaled to V_pop(z) - V_pool(z); the two
parts are uncorrelated.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._typing import FloatArray, KernelMatrix


def dense_rows(kernel_rows: KernelMatrix) -> FloatArray:
    """A (rows x G) kernel block as a dense array."""
    if isinstance(kernel_rows, np.ndarray):
        return np.asarray(kernel_rows, dtype=np.float64)
    return np.asarray(kernel_rows.toarray(), dtype=np.float64)


def influence_block(
    kernel_rows: KernelMatrix,
    values: FloatArray,
    x: FloatArray,
    coef: FloatArray,
    *,
    mass: FloatArray,
    center: FloatArray,
) -> FloatArray:
    """Raw influence values phi_i(z) = w_{i,L}(z) (e_i(z) - ebar_L(z)) for a block of labeled items.

    Parameters
    ----------
    kernel_rows : (c, G) kernel rows of the block's labeled items
    values : (c,) labels (or any outcome) of the block
    x : (c, p) features of the block
    coef : (G, p) coefficient c(z)
    mass : (G,) labeled kernel mass sum_L k_i(z) over the whole labeled set
    center : (G,) ebar_L(z) over the whole labeled set

    Returns
    -------
    ndarray of shape (c, G); zero columns where the labeled mass is zero.
    """
    k = dense_rows(kernel_rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(mass > 0, k / np.where(mass > 0, mass, 1.0), 0.0)
    resid = values[:, None] - x @ coef.T - np.where(np.isfinite(center), center, 0.0)
    return np.asarray(w * resid, dtype=np.float64)


def influence_scale(sum_squares: FloatArray, variance: FloatArray) -> FloatArray:
    """s(z) = sqrt(V(z) / sum_L phi_i(z)^2); 0 where either is zero or not finite."""
    ok = np.isfinite(variance) & np.isfinite(sum_squares) & (sum_squares > 0) & (variance > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ok, np.maximum(variance, 0.0) / np.where(ok, sum_squares, 1.0), 0.0)
    return np.asarray(np.sqrt(ratio), dtype=np.float64)


def correlation(cov: FloatArray) -> FloatArray:
    """Correlation matrix of a covariance matrix.

    An entry with zero variance gets a unit diagonal and zero correlations: its se was floored
    (Agresti-Coull, :func:`slicewise.inference.variance.degenerate_floor`) where the influence
    values vanish, so its t-statistic is treated as independent of the others.
    """
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
    out = cov * inv[:, None] * inv[None, :]
    np.fill_diagonal(out, 1.0)
    return np.asarray(out, dtype=np.float64)


def max_abs_draws(
    corr: FloatArray, *, n_draws: int, rng: np.random.Generator, block: int = 2048
) -> FloatArray:
    """Draws of max_j |Z_j| for Z ~ N(0, corr), sorted ascending.

    The correlation is factored by an eigendecomposition (negative round-off eigenvalues are
    clipped), so singular correlations (collinear pairs: gap(a, c) = gap(a, b) + gap(b, c) when
    all three share L and the coefficient is zero) are handled.
    """
    j = corr.shape[0]
    if j == 0:
        return np.zeros(0)
    eigval, eigvec = np.linalg.eigh(corr)
    keep = eigval > 1e-12 * max(float(eigval.max(initial=0.0)), 1.0)
    factor = eigvec[:, keep] * np.sqrt(eigval[keep])
    out = np.empty(n_draws)
    for start in range(0, n_draws, block):
        size = min(block, n_draws - start)
        draws = rng.standard_normal((size, factor.shape[1])) @ factor.T
        out[start : start + size] = np.abs(draws).max(axis=1)
    out.sort()
    return out


def max_t_critical(draws: FloatArray, level: float) -> float:
    """The ``level`` quantile of max-|t| draws (the simultaneous critical value).

    No draws means an empty family (no interval has a positive finite se); the one-interval
    value z_{(1 + level) / 2} is returned then.
    """
    if draws.size == 0:
        return bonferroni_critical(1, level)
    return float(np.quantile(draws, level, method="higher"))


def bonferroni_critical(n_tests: int, level: float) -> float:
    """z_{1 - (1 - level) / (2 J)}: the two-sided Bonferroni critical value for J intervals."""
    return float(stats.norm.ppf(1.0 - (1.0 - level) / (2.0 * max(n_tests, 1))))
