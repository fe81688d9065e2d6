"""RKHS localization weights for a conditional mean at a point (PPCI; Sui et al., 2026).

A conditional moment at a test point z is rewritten as a weighted unconditional moment,
E[Y | Z = z] ~ E[w_z(Z) Y] / E[w_z(Z)], with a weight function w_z in the RKHS H of a Matern-5/2
kernel k learned from covariates alone: w_z makes the weighted empirical kernel mean match the
evaluation functional at z,

.. math::

    \\Big\\lVert \\frac1N \\sum_{i=1}^N w_z(Z_i)\\, k(\\cdot, Z_i) - k(\\cdot, z)\\Big\\rVert_{H}
    \\approx 0 .

With A = K / N (K the kernel matrix of the N items) and k_z = (k(Z_i, z))_i, the Tikhonov
solution for the weight vector is

.. math::

    w_z = A (A^2 + \\lambda I)^{-1} k_z = \\sum_j \\frac{a_j}{a_j^2 + \\lambda}\\, u_j u_j^\\top k_z ,

with (a_j, u_j) the eigenpairs of A. The regularisation lambda is picked per grid point at the
corner of the L-curve (log RKHS residual norm, log variance proxy (1/N) sum_i w_i^2) over a
log-spaced grid of lambda (:func:`lcurve_corner`). The weight function extends beyond the
training items as w_z(x) = k(x, Z_train) alpha, which is what cross-fitting uses. Large pools use a
Nystrom approximation of K with at most :data:`MAX_LANDMARKS` landmarks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray

#: Largest number of Nystrom landmarks (pools up to this size per fold are exact).
MAX_LANDMARKS = 200
#: Relative eigenvalue cut-off of the kernel matrices.
EIGEN_TOL = 1e-10
#: Tikhonov grid for the L-curve, relative to the squared largest eigenvalue of K / N.
LAMBDA_GRID = np.logspace(-10.0, 1.0, 45)


def matern52(x: FloatArray, y: FloatArray) -> FloatArray:
    """Matern-5/2 kernel with unit length scale: (1 + sqrt5 d + 5 d^2 / 3) exp(-sqrt5 d)."""
    from scipy.spatial.distance import cdist  # heavy: imported on first use

    d = np.sqrt(5.0) * cdist(x, y)
    return np.asarray((1.0 + d + d**2 / 3.0) * np.exp(-d), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class NystromBasis:
    """Features phi(x) = k(x, landmarks) W with phi(x)' phi(y) ~ k(x, y)."""

    landmarks: FloatArray
    projection: FloatArray

    @classmethod
    def fit(cls, x: FloatArray, rng: np.random.Generator) -> NystromBasis:
        """Landmarks: every item when there are at most MAX_LANDMARKS, else a random subset."""
        if x.shape[0] > MAX_LANDMARKS:
            x = x[np.sort(rng.choice(x.shape[0], MAX_LANDMARKS, replace=False))]
        eigval, eigvec = np.linalg.eigh(matern52(x, x))
        keep = eigval > EIGEN_TOL * max(float(eigval.max(initial=0.0)), np.finfo(float).tiny)
        return cls(landmarks=x, projection=eigvec[:, keep] / np.sqrt(eigval[keep]))

    def features(self, x: FloatArray) -> FloatArray:
        """phi(x), shape (rows of x, rank)."""
        return np.asarray(matern52(x, self.landmarks) @ self.projection, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class LocalizationFit:
    """Weights learned on one set of training items.

    Attributes
    ----------
    basis : NystromBasis
    beta : ndarray of shape (rank, G)
        w_z(x) = phi(x)' beta[:, z].
    penalty : ndarray of shape (G,)
        The Tikhonov parameter used at each grid point (multiplier x L-curve corner).
    corner : ndarray of shape (G,)
        The L-curve corner.
    """

    basis: NystromBasis
    beta: FloatArray
    penalty: FloatArray
    corner: FloatArray

    def weights(self, x: FloatArray) -> FloatArray:
        """w_z(x) for every row of x and grid point, shape (rows, G)."""
        return np.asarray(self.basis.features(x) @ self.beta, dtype=np.float64)


def lcurve_corner(residual: FloatArray, variance: FloatArray) -> FloatArray:
    """Index of the L-curve corner per column: the point farthest from the chord.

    Parameters
    ----------
    residual, variance : ndarray of shape (P, G)
        RKHS residual norm (increasing in lambda) and variance proxy (decreasing) along a
        log-spaced penalty grid (rows).

    Returns
    -------
    ndarray of int, shape (G,)

    Notes
    -----
    With x = log residual and y = log variance, each rescaled to [0, 1] over the grid, the curve
    runs from (0, 1) (no regularisation: tiny residual, large variance) to (1, 0) (the weights
    shrunk to zero). Here the residual falls steadily as lambda decreases while the variance grows
    only slowly, and the variance collapses once the residual saturates, so the curve bends above
    its chord x + y = 1; the corner is the point farthest from that chord,

    .. math:: j^\\star = \\arg\\max_j \\{\\tilde x_j + \\tilde y_j\\},

    a derivative-free corner rule (finite-difference curvature of the sampled curve oscillates
    with the kernel's spectrum).
    """
    tiny = np.finfo(float).tiny

    def rescale(v: FloatArray) -> FloatArray:
        logv = np.log(np.maximum(v, tiny))
        low = logv.min(axis=0)
        span = logv.max(axis=0) - low
        return np.asarray((logv - low) / np.where(span > 0, span, 1.0), dtype=np.float64)

    return np.asarray(np.argmax(rescale(residual) + rescale(variance), axis=0), dtype=np.intp)


def fit_localization(
    x: FloatArray, grid_x: FloatArray, *, multiplier: float, rng: np.random.Generator
) -> LocalizationFit:
    """Learn the localization weights of every grid point on training items x.

    Parameters
    ----------
    x : ndarray of shape (N, q)
        Training covariates (scaled so that the kernel's length scale is 1).
    grid_x : ndarray of shape (G, q)
    multiplier : float
        Multiplier of the L-curve corner.
    rng : numpy Generator
        Draws the Nystrom landmarks of large sets.

    Returns
    -------
    LocalizationFit
    """
    n = x.shape[0]
    basis = NystromBasis.fit(x, rng)
    phi = basis.features(x)
    eigval, eigvec = np.linalg.eigh(phi.T @ phi)
    keep = eigval > EIGEN_TOL * max(float(eigval.max(initial=0.0)), np.finfo(float).tiny)
    s2, v = eigval[keep], eigvec[:, keep]
    s = np.sqrt(s2)
    # c = U' k_z with U = phi V / s, the orthonormal eigenvectors of K
    c = (v / s).T @ (phi.T @ matern52(x, grid_x))
    a = s2 / n
    grid = LAMBDA_GRID * float(a.max(initial=1.0)) ** 2
    filt = a[None, :] / (a[None, :] ** 2 + grid[:, None])  # (P, r)
    c2 = c**2
    cross = filt @ c2 / n
    quad = (a[None, :] * filt**2) @ c2 / n
    residual = np.sqrt(np.maximum(1.0 - 2.0 * cross + quad, 0.0))
    variance = filt**2 @ c2 / n
    corner = grid[lcurve_corner(residual, variance)]
    penalty = multiplier * corner
    used = a[:, None] / (a[:, None] ** 2 + penalty[None, :])  # (r, G)
    beta = v @ (used / s[:, None] * c)
    return LocalizationFit(basis=basis, beta=beta, penalty=penalty, corner=corner)


def cross_fitted_weights(
    x: FloatArray, grid_x: FloatArray, *, multiplier: float, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """Two-fold cross-fitted localization weights over the pool.

    The pool is split at random into two halves; each item's weights come from the weight
    functions learned on the other half.

    Returns
    -------
    weights : ndarray of shape (M, G)
    penalty : ndarray of shape (G,)
        The Tikhonov parameter averaged over the two folds (for the record).
    """
    m = x.shape[0]
    fold = np.empty(m, dtype=np.intp)
    fold[rng.permutation(m)] = np.arange(m) % 2
    weights = np.empty((m, grid_x.shape[0]))
    penalties = []
    for k in range(2):
        train: IntArray = np.flatnonzero(fold == k)
        evaluate: IntArray = np.flatnonzero(fold != k)
        fit = fit_localization(x[train], grid_x, multiplier=multiplier, rng=rng)
        weights[evaluate] = fit.weights(x[evaluate])
        penalties.append(fit.penalty)
    return weights, np.mean(penalties, axis=0)
