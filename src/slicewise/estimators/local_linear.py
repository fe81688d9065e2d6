"""Local-linear smoothing on a grid, from local weighted sums (Fan and Gijbels, 1996).

For items A with unnormalised kernel weights k_i(z), coordinates x_i (the profile covariate,
centred and scaled) and values V_i, the local-linear fit at a grid point z solves

.. math::

    \\min_{a, b} \\sum_{i\\in A} k_i(z)\\{V_i - a - b^\\top(x_i - x_z)\\}^2,

so :math:`(\\hat a, \\hat b) = M(z)^{+} \\sum_A k_i(z)\\, u_i(z) V_i` with
:math:`u_i(z) = (1, x_i - x_z)` and :math:`M(z) = \\sum_A k_i(z) u_i(z) u_i(z)^\\top`. The fitted
value :math:`\\hat a(z) = \\sum_A \\ell_i(z) V_i` is a linear smoother with equivalent weights
:math:`\\ell_i(z) = k_i(z)\\, e_1^\\top M(z)^{+} u_i(z)`, which sum to one and annihilate linear
trends. Both M(z) and the cross sums are obtained from sums over the items of (1, x) (1, x)^T and
(1, x) V^T (one ``kernel.T @ rows`` product each), so sums over a set difference U = T \\ L are a
subtraction. When M(z) is singular (all items of the neighbourhood at one value of Z, e.g. an
ordinal level with half-width 1), the pseudo-inverse gives the local constant (Nadaraya-Watson)
fit with zero slope.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, KernelMatrix
from ..moments.kernel_ops import outer_rows, weighted_sums

#: Relative eigenvalue threshold of the pseudo-inverse of M(z).
RANK_TOL = 1e-10


@dataclass(frozen=True, eq=False)
class LocalSums:
    """Raw local sums of a set of items: sum k (1, x)(1, x)^T and sum k (1, x) V^T.

    Attributes
    ----------
    design : ndarray of shape (G, d, d)
        d = q + 1.
    cross : ndarray of shape (G, d, p)
    """

    design: FloatArray
    cross: FloatArray

    @classmethod
    def compute(cls, kernel: KernelMatrix, x: FloatArray, values: FloatArray) -> LocalSums:
        """Sums for items with kernel rows ``kernel`` (m, G), coordinates x (m, q), values (m, p)."""
        m, q = x.shape
        p = values.shape[1]
        basis = np.column_stack([np.ones(m), x])
        d = q + 1
        design = weighted_sums(kernel, outer_rows(basis)).reshape(-1, d, d)
        products = (basis[:, :, None] * values[:, None, :]).reshape(m, d * p)
        cross = weighted_sums(kernel, products).reshape(-1, d, p)
        return cls(design=design, cross=cross)

    def minus(self, other: LocalSums) -> LocalSums:
        """Sums over the set difference (self's items without other's)."""
        return LocalSums(design=self.design - other.design, cross=self.cross - other.cross)


@dataclass(frozen=True, eq=False)
class LocalLinearFit:
    """Local-linear fits of p value columns at G grid points.

    Attributes
    ----------
    coef : ndarray of shape (G, d, p)
        Intercept (row 0) and slopes in the coordinates x - x_z; NaN where there is no mass.
    row : ndarray of shape (G, d)
        e_1^T M(z)^+, the equivalent-kernel coefficients.
    mass : ndarray of shape (G,)
        sum k_i(z).
    rank : ndarray of shape (G,)
        Rank of M(z) (d, or 1 where the fit is locally constant).
    """

    coef: FloatArray
    row: FloatArray
    mass: FloatArray
    rank: FloatArray

    @property
    def fitted(self) -> FloatArray:
        """The fitted values a(z), shape (G, p)."""
        return np.asarray(self.coef[:, 0, :], dtype=np.float64)


def _pinv_psd(matrix: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Batched pseudo-inverse of symmetric PSD matrices and their numerical rank."""
    eigval, eigvec = np.linalg.eigh(matrix)
    top = np.max(np.abs(eigval), axis=1, keepdims=True)
    keep = eigval > RANK_TOL * np.maximum(top, np.finfo(float).tiny)
    inv = np.where(keep, 1.0 / np.where(keep, eigval, 1.0), 0.0)
    pinv = np.einsum("gij,gj,gkj->gik", eigvec, inv, eigvec)
    return pinv, keep.sum(axis=1).astype(np.float64)


def _centering(grid_x: FloatArray) -> FloatArray:
    """C(z) with (1, x - x_z) = C(z) (1, x), shape (G, d, d)."""
    g, q = grid_x.shape
    c = np.broadcast_to(np.eye(q + 1), (g, q + 1, q + 1)).copy()
    c[:, 1:, 0] = -grid_x
    return c


def local_linear(sums: LocalSums, grid_x: FloatArray) -> LocalLinearFit:
    """Local-linear fits at the grid points from raw local sums.

    Parameters
    ----------
    sums : LocalSums
    grid_x : ndarray of shape (G, q)
        Grid points in the coordinates of the sums.

    Returns
    -------
    LocalLinearFit

    Notes
    -----
    :math:`(\\hat a, \\hat b)(z) = M(z)^{+} \\sum_A k_i(z) u_i(z) V_i` with
    :math:`M(z) = C(z) R(z) C(z)^\\top`, R the raw sums over (1, x) and C(z) the shift to
    (1, x - x_z) (module notes).

    References
    ----------
    Fan, J. and Gijbels, I. (1996), Local Polynomial Modelling and Its Applications, Chapter 3.
    """
    c = _centering(grid_x)
    design = np.einsum("gij,gjk,glk->gil", c, sums.design, c)
    cross = np.einsum("gij,gjp->gip", c, sums.cross)
    mass = np.asarray(sums.design[:, 0, 0], dtype=np.float64)
    pinv, rank = _pinv_psd(design)
    coef = np.einsum("gij,gjp->gip", pinv, cross)
    coef = np.where(mass[:, None, None] > 0, coef, np.nan)
    return LocalLinearFit(coef=coef, row=pinv[:, 0, :], mass=mass, rank=rank)


def equivalent_weights(
    kernel_rows: KernelMatrix, x: FloatArray, grid_x: FloatArray, fit: LocalLinearFit
) -> FloatArray:
    """Equivalent weights l_i(z) = k_i(z) e_1^T M(z)^+ (1, x_i - x_z) of the fitted items.

    Parameters
    ----------
    kernel_rows : (m, G) kernel rows of the fitted items
    x : ndarray of shape (m, q)
    grid_x : ndarray of shape (G, q)
    fit : LocalLinearFit
        The fit made from these items' sums.

    Returns
    -------
    ndarray of shape (m, G)
    """
    k = kernel_rows if isinstance(kernel_rows, np.ndarray) else kernel_rows.toarray()
    constant = fit.row[:, 0] - np.einsum("gd,gd->g", fit.row[:, 1:], grid_x)
    factor = constant[None, :] + x @ fit.row[:, 1:].T
    return np.asarray(k * factor, dtype=np.float64)


def residuals(
    fit: LocalLinearFit, x: FloatArray, values: FloatArray, grid_x: FloatArray
) -> FloatArray:
    """V_i - a(z) - b(z)^T (x_i - x_z) for every item and grid point, shape (m, G, p)."""
    offset = x[:, None, :] - grid_x[None, :, :]
    line = fit.coef[None, :, 0, :] + np.einsum("mgq,gqp->mgp", offset, fit.coef[:, 1:, :])
    return np.asarray(values[:, None, :] - line, dtype=np.float64)
