"""Density ratio r_Q(z) = dQ_Z / dP_Z between a deployment sample and the pool, by kernel densities.

.. math::

    \\hat r_Q(z) = \\frac{N^{-1}\\sum_{j=1}^{N} K_h(z - Z^Q_j)}
                       {M^{-1}\\sum_{i \\in T} K_h(z - Z_i)},

the ratio of two Gaussian product-kernel density estimates with the same bandwidth h (the kernel
normalising constants cancel). It is evaluated at the pool items only, where the denominator is
positive (every item contributes to its own density). Cost: (unique pool points) x (M + N) kernel
evaluations, in blocks.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray

#: Evaluation points per block.
BLOCK = 512


def _kde_sums(points: FloatArray, data: FloatArray, bandwidth: FloatArray) -> FloatArray:
    """mean_j exp(-1/2 sum_d ((x_d - data_jd) / h_d)^2) for every row x of ``points``."""
    out = np.empty(points.shape[0])
    scaled_data = data / bandwidth
    for start in range(0, points.shape[0], BLOCK):
        block = points[start : start + BLOCK] / bandwidth
        dist = np.zeros((block.shape[0], data.shape[0]))
        for d in range(points.shape[1]):
            dist += np.subtract.outer(block[:, d], scaled_data[:, d]) ** 2
        out[start : start + BLOCK] = np.exp(-0.5 * dist).mean(axis=1)
    return out


def kde_density_ratio(
    pool_z: FloatArray, deploy_z: FloatArray, bandwidth: FloatArray
) -> FloatArray:
    """r_Q(Z_i) for every pool item, from a sample of deployment Z values (module formula).

    Parameters
    ----------
    pool_z : ndarray of shape (M, q)
    deploy_z : ndarray of shape (N, q)
    bandwidth : ndarray of shape (q,)
        Kernel bandwidth h per dimension (positive, finite).

    Returns
    -------
    ndarray of shape (M,), nonnegative.
    """
    unique, inverse = np.unique(pool_z, axis=0, return_inverse=True)
    numerator = _kde_sums(unique, deploy_z, bandwidth)
    denominator = _kde_sums(unique, pool_z, bandwidth)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0)
    return np.asarray(ratio[np.asarray(inverse).reshape(-1)], dtype=np.float64)
