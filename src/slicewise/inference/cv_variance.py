"""Cross-validated variance of a centered control-variate profile (an honest selection criterion).

Every centered control variate is (nearly) unbiased for the same profile, whatever its
coefficient, so its mean squared error is its variance, and comparing candidates means comparing
variances. The in-sample residual variance flatters coefficients fitted on few labels; we use
out-of-fold residuals instead. With the labeled set split into folds and c_{-k}(z) the coefficient
fitted without fold k,

.. math::

    e_i(z) = Y_i - c_{-k(i)}(z)^\\top X_i ,\\qquad
    \\widehat V_{cv}(z) = \\frac{1 - \\pi(z)}{1 - \\sum_L w_i^2}
        \\sum_{i \\in L} w_{i,L}(z)^2 \\{e_i(z) - \\bar e(z)\\}^2 ,

the pool-target variance formula of :mod:`slicewise.inference.variance` evaluated at honest
residuals: a coefficient that is noise (a local fit on three labels) inflates its own held-out
residuals and loses the comparison.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._typing import FloatArray, IntArray, KernelMatrix
from ..estimators.control_variate import CoefficientFit
from ..moments.sums import column_sums, take_rows


def dense_weights(kernel: KernelMatrix, index: IntArray) -> tuple[FloatArray, FloatArray]:
    """Labeled weights w_{i,L}(z) as a dense (n x G) array, and the labeled kernel mass (G,)."""
    rows = take_rows(kernel, index)
    dense = rows if isinstance(rows, np.ndarray) else rows.toarray()
    mass = column_sums(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = np.where(mass > 0, dense / np.where(mass > 0, mass, 1.0), 0.0)
    return np.asarray(weights, dtype=np.float64), mass


def cross_validated_contributions(
    weights: FloatArray,
    fraction: FloatArray,
    y: FloatArray,
    x: FloatArray,
    fold: IntArray,
    coefficient: Callable[[IntArray], CoefficientFit],
) -> FloatArray:
    """Item-level terms of the out-of-fold pool-target variance, shape (n, G).

    Column z sums to :math:`\\widehat V_{cv}(z)`; row i is item i's share, which lets a caller
    compare two candidates with a paired standard error.

    Parameters
    ----------
    weights : ndarray of shape (n, G)
        Labeled weights w_{i,L}(z) (:func:`dense_weights`).
    fraction : ndarray of shape (G,)
        Local labeled fraction pi(z).
    y : ndarray of shape (n,)
        Labels.
    x : ndarray of shape (n, p)
        Features of the labeled items (out-of-fold predictions for learned features).
    fold : ndarray of int, shape (n,)
        Fold of every labeled item.
    coefficient : callable
        Maps the positions (into the labeled arrays) of a training subset to its CoefficientFit.

    Returns
    -------
    ndarray of shape (n, G)
        NaN columns where the labeled neighbourhood is too small (sum w^2 >= 1).
    """
    resid = np.empty_like(weights)
    for k in np.unique(fold):
        train = np.flatnonzero(fold != k)
        test = np.flatnonzero(fold == k)
        coef = coefficient(train).coef  # (G, p)
        resid[test] = y[test, None] - x[test] @ coef.T
    ebar = np.einsum("ig,ig->g", weights, resid)
    sum_w2 = np.einsum("ig,ig->g", weights, weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(sum_w2 < 1.0, (1.0 - fraction) / (1.0 - sum_w2), np.nan)
    return np.asarray(scale * weights**2 * (resid - ebar) ** 2, dtype=np.float64)
