"""Local weighted sums over the pool T and the labeled set L.

Everything an estimator of the form

.. math::

    \\hat\\theta(z) = \\sum_{i \\in L} w_{i,L}(z)\\{Y_i - c(z)^\\top X_i\\}
                    + \\sum_{i \\in T} w_{i,T}(z)\\, c(z)^\\top X_i

needs is a weighted sum. The pool side (:class:`PoolMoments`) is computed once per pool and reused
across label draws; the labeled side (:class:`LabeledMoments`) holds, for the augmented row
:math:`\\tilde x_i = (1, Y_i, X_i)`, the first moments and the second-moment matrices under the
weights w and w^2. Any residual variance :math:`\\sum_L w_i^2 (e_i - \\bar e)^2` with
:math:`e_i = Y_i - c^\\top X_i` is then the quadratic form :math:`v^\\top Q v` with
:math:`v = (-\\bar e, 1, -c)`, so no (items x grid) residual matrix is ever formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._typing import FloatArray, IntArray, KernelMatrix, PoolKernel
from .kernel_ops import (
    as_dense_if_small,
    column_sums,
    multiply,
    positive_max,
    product_columns,
    safe_divide,
    scale_rows,
    square,
    square_column_sums,
    take_rows,
    weighted_products,
    weighted_sums,
)
from .row_sums import LabeledRowSums, augmented


@dataclass(frozen=True, eq=False)
class PoolMoments:
    """Pool-side local sums, computed once per pool, feature matrix and pair of bandwidths.

    Attributes
    ----------
    kernel, kernel_b : KernelMatrix
        Unnormalised weights (items x grid) at the profile bandwidth h and the nuisance
        bandwidth b (the same object when b = h).
    mass, mass_b : ndarray of shape (G,)
        Kernel mass of the pool, sum_T k_i(z), at h and at b.
    n_eff : ndarray of shape (G,)
        Pool effective sample size 1 / sum_T w_{i,T}(z)^2.
    mean : ndarray of shape (G, p)
        Local pool means of the features at h, Xbar_T(z).
    cov_b : ndarray of shape (G, p, p)
        Local pool covariance of the features at b, Sigma_XX,T(z).
    """

    kernel: PoolKernel
    kernel_b: PoolKernel
    mass: FloatArray
    mass_b: FloatArray
    n_eff: FloatArray
    mean: FloatArray
    cov_b: FloatArray

    @cached_property
    def cov_b_eigen(self) -> tuple[FloatArray, FloatArray]:
        """Eigenvalues (clipped at 0) and eigenvectors of :attr:`cov_b`, non-finite grid points
        zeroed: computed once per pool moments and reused by every coefficient fit (every fold,
        candidate and label draw), since the pool covariance does not depend on the labels."""
        finite = np.all(np.isfinite(self.cov_b), axis=(1, 2))
        values, vectors = np.linalg.eigh(np.where(finite[:, None, None], self.cov_b, 0.0))
        return np.clip(values, 0.0, None), vectors

    def first_columns(self, count: int) -> PoolMoments:
        """The moments of the first ``count`` features only."""
        return PoolMoments(
            kernel=self.kernel,
            kernel_b=self.kernel_b,
            mass=self.mass,
            mass_b=self.mass_b,
            n_eff=self.n_eff,
            mean=self.mean[:, :count],
            cov_b=self.cov_b[:, :count, :count],
        )

    @classmethod
    def compute(
        cls, kernel: PoolKernel, features: FloatArray, kernel_b: PoolKernel | None = None
    ) -> PoolMoments:
        """Compute the pool sums for ``features`` (shape (M, p))."""
        kernel_b = kernel if kernel_b is None else kernel_b
        mass = column_sums(kernel)
        sq_mass = square_column_sums(kernel)
        mean = safe_divide(weighted_sums(kernel, features), mass)
        mass_b = mass if kernel_b is kernel else column_sums(kernel_b)
        p = features.shape[1]
        mean_b = (
            mean if kernel_b is kernel else safe_divide(weighted_sums(kernel_b, features), mass_b)
        )
        upper = safe_divide(weighted_products(kernel_b, features), mass_b) if p else None
        return cls.assemble(
            kernel,
            kernel_b,
            mass=mass,
            sq_mass=sq_mass,
            mass_b=mass_b,
            mean=mean,
            mean_b=mean_b,
            second=np.zeros((mass.size, 0, 0)) if upper is None else symmetric(upper, p),
        )

    @classmethod
    def assemble(
        cls,
        kernel: PoolKernel,
        kernel_b: PoolKernel,
        *,
        mass: FloatArray,
        sq_mass: FloatArray,
        mass_b: FloatArray,
        mean: FloatArray,
        mean_b: FloatArray,
        second: FloatArray,
    ) -> PoolMoments:
        """The moments from the kernel masses (at h: sum w, sum w^2; at b: sum w), the local
        feature means at h and b, and the local means of the feature products at b (``second``,
        shape (G, p, p)): cov_b = second - mean_b mean_b' and Kish's n_eff = mass^2 / sum w^2."""
        cov = second - mean_b[:, :, None] * mean_b[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            n_eff = np.where(sq_mass > 0, mass**2 / np.where(sq_mass > 0, sq_mass, 1.0), 0.0)
        return cls(
            kernel=kernel,
            kernel_b=kernel_b,
            mass=mass,
            mass_b=mass_b,
            n_eff=n_eff,
            mean=mean,
            cov_b=cov,
        )


def symmetric(upper: FloatArray, p: int) -> FloatArray:
    """The (G, p, p) symmetric matrices whose upper triangles (``np.triu_indices(p)`` order, as
    :func:`product_columns` lays out the products) are the rows of ``upper`` (G, p(p + 1)/2)."""
    rows, cols = np.triu_indices(p)
    full = np.empty((upper.shape[0], p, p))
    full[:, rows, cols] = upper
    full[:, cols, rows] = upper
    return full


@dataclass(frozen=True, eq=False)
class LabeledMoments:
    """Labeled-side local sums for one labeled set, on the augmented rows (1, Y, X).

    Index 0 of the last axes is the constant, 1 is Y, 2: are the features X.

    Attributes
    ----------
    mass, mass_b : ndarray of shape (G,)
        Labeled kernel mass at h and at b.
    mean : ndarray of shape (G, d)
        Local labeled means (1, Ybar_L, Xbar_L) at h.
    second : ndarray of shape (G, d, d)
        sum_L w_i x_i x_i^T at h (first-power weights).
    second_sq : ndarray of shape (G, d, d)
        sum_L w_i^2 x_i x_i^T at h.
    mean_b, second_b : ndarray
        The same first and second moments at the nuisance bandwidth b.
    sum_w2 : ndarray of shape (G,)
        sum_L w_i^2 = 1 / n_eff_L.
    sum_w2_wb : ndarray of shape (G,)
        sum_L w_i^2 w^b_i, used by the degrees-of-freedom correction.
    sum_wb2 : ndarray of shape (G,)
        sum_L (w^b_i)^2.
    sum_w4 : ndarray of shape (G,) or None
        sum_L w_i^4, for the Satterthwaite degrees of freedom (:attr:`df_effective`).
    sample_mass : ndarray of shape (G,) or None
        With design weights: the unweighted labeled kernel mass sum_L k_i(z) (for the local
        labeled fraction). None under simple random sampling, where it equals ``mass``.
    second_sq_pi : ndarray of shape (G, d, d) or None
        With design weights: sum_L pi_i w_i^2 x_i x_i^T at h (the finite-population correction of
        the design variance, :mod:`slicewise.inference.variance`). None without design weights.
    pi_max : ndarray of shape (G,) or None
        With design weights: the largest inclusion probability of a labeled item with positive
        kernel weight at z (it bounds the calibration of the finite-population correction,
        :mod:`slicewise.inference.variance`). None without design weights.

    Notes
    -----
    With inclusion probabilities pi_i (``pi`` of :meth:`compute`) every labeled weight is a
    design (Hajek) weight,

    .. math::

        w_{i,L}(z) = \\frac{k_i(z) / \\pi_i}{\\sum_{\\ell \\in L} k_\\ell(z) / \\pi_\\ell},

    so every mean, covariance and w^2 sum above is design-weighted; equal pi_i give back the
    unweighted sums (to rounding).
    """

    mass: FloatArray
    mass_b: FloatArray
    mean: FloatArray
    second: FloatArray
    second_sq: FloatArray
    mean_b: FloatArray
    second_b: FloatArray
    sum_w2: FloatArray
    sum_w2_wb: FloatArray
    sum_wb2: FloatArray
    sample_mass: FloatArray | None = None
    second_sq_pi: FloatArray | None = None
    sum_w4: FloatArray | None = None
    pi_max: FloatArray | None = None

    @property
    def df_effective(self) -> FloatArray:
        """Satterthwaite's effective size (sum_L w^2)^2 / sum_L w^4 of the residual variance.

        The variance estimate sum_L w_i^2 (e_i - ebar)^2 is a weighted sum of squares; its
        Satterthwaite (1946) degrees of freedom are (sum w^2)^2 / sum w^4 (minus what the
        centering and the coefficient use). Equal weights over n items give n, as n_eff does;
        unequal kernel weights give less than n_eff (about 0.7 n_eff for a Gaussian kernel on a
        uniform Z), so t intervals on kernel grids widen where few labels carry the weight.
        Falls back to n_eff when the fourth-power sum is not available.
        """
        if self.sum_w4 is None:
            return self.n_eff
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                self.sum_w4 > 0, self.sum_w2**2 / np.where(self.sum_w4 > 0, self.sum_w4, 1), 0.0
            )

    @property
    def n_eff(self) -> FloatArray:
        """Labeled effective sample size 1 / sum_L w_{i,L}(z)^2 (0 where there is no mass)."""
        with np.errstate(divide="ignore"):
            return np.where(self.sum_w2 > 0, 1.0 / np.where(self.sum_w2 > 0, self.sum_w2, 1), 0.0)

    @classmethod
    def compute(
        cls,
        pool: PoolMoments,
        index: IntArray,
        label: FloatArray,
        features: FloatArray,
        *,
        pi: FloatArray | None = None,
    ) -> LabeledMoments:
        """Labeled sums for items ``index`` with labels ``label`` and pool ``features`` rows.

        ``features`` is the full (M, p) pool feature matrix; only the rows in ``index`` are read.
        ``pi`` gives the labeled items' inclusion probabilities (design weights 1 / pi_i); None is
        simple random sampling.
        """
        k = take_rows(pool.kernel, index)
        kb = k if pool.kernel_b is pool.kernel else take_rows(pool.kernel_b, index)
        return cls.from_rows(k, kb, label, features[index], pi=pi)

    @classmethod
    def from_rows(
        cls,
        k: KernelMatrix,
        kb: KernelMatrix,
        label: FloatArray,
        x: FloatArray,
        *,
        pi: FloatArray | None = None,
    ) -> LabeledMoments:
        """Labeled sums from the labeled kernel rows (at h and at b), labels and features.

        With ``pi`` (inclusion probabilities of the labeled rows) the kernel rows are divided by
        pi_i before any sum is taken (see the class notes).
        """
        same = kb is k
        k = as_dense_if_small(k)
        kb = k if same else as_dense_if_small(kb)
        if isinstance(k, np.ndarray) and isinstance(kb, np.ndarray):
            return cls.from_row_sums(LabeledRowSums.of(k, kb, label, x, pi=pi))
        sample_mass = None
        pi_max = None
        if pi is not None:
            sample_mass = column_sums(k)
            pi_max = positive_max(k, pi)
            k = scale_rows(k, 1.0 / pi)
            kb = k if same else scale_rows(kb, 1.0 / pi)
        aug = augmented(label, x)
        d = aug.shape[1]
        outer = product_columns(aug)  # upper triangles: each product once, not twice
        k_sq = square(k)
        mass = column_sums(k)
        mass_sq = column_sums(k_sq)
        first = weighted_sums(k, aug)
        second = symmetric(weighted_sums(k, outer), d)
        second_sq = symmetric(weighted_sums(k_sq, outer), d)
        if kb is k:
            mass_b, first_b, second_b = mass, first, second
            cross = weighted_sums(multiply(k_sq, k), aug[:, :1])
            sum_wb2_raw = mass_sq
        else:
            mass_b = column_sums(kb)
            first_b = weighted_sums(kb, aug)
            second_b = symmetric(weighted_sums(kb, outer), d)
            cross = weighted_sums(multiply(k_sq, kb), aug[:, :1])
            sum_wb2_raw = square_column_sums(kb)
        second_sq_pi = None
        if pi is not None:
            second_sq_pi = safe_divide(
                symmetric(weighted_sums(k_sq, outer * pi[:, None]), d), mass**2
            )
        return cls._assemble(
            mass=mass,
            mass_sq=mass_sq,
            first=first,
            second=second,
            second_sq=second_sq,
            mass_b=mass_b,
            first_b=first_b,
            second_b=second_b,
            cross=cross,
            sum_wb2_raw=sum_wb2_raw,
            fourth=square_column_sums(k_sq),
            sample_mass=sample_mass,
            pi_max=pi_max,
            second_sq_pi=second_sq_pi,
        )

    @classmethod
    def from_row_sums(cls, sums: LabeledRowSums) -> LabeledMoments:
        """Labeled moments from the sums over dense labeled rows (:class:`LabeledRowSums`;
        the sums of several disjoint sets of rows added up are those of their union)."""
        g, d = sums.grid_size, sums.width
        table = sums.products
        first, mass = table[:g, :d], table[:g, 0]
        second = symmetric(table[:g, d:], d)
        mass_sq = table[g : 2 * g, 0]
        second_sq = symmetric(table[g : 2 * g, d:], d)
        if table.shape[0] == 2 * g:  # kb is k
            mass_b, first_b, second_b = mass, first, second
            sum_wb2_raw = mass_sq
        else:
            first_b, mass_b = table[2 * g :, :d], table[2 * g :, 0]
            second_b = symmetric(table[2 * g :, d:], d)
            assert sums.square_b is not None
            sum_wb2_raw = sums.square_b
        second_sq_pi = None
        if sums.design_products is not None:
            second_sq_pi = safe_divide(symmetric(sums.design_products, d), mass**2)
        return cls._assemble(
            mass=mass,
            mass_sq=mass_sq,
            first=first,
            second=second,
            second_sq=second_sq,
            mass_b=mass_b,
            first_b=first_b,
            second_b=second_b,
            cross=sums.cross,
            sum_wb2_raw=sum_wb2_raw,
            fourth=sums.fourth,
            sample_mass=sums.sample_mass,
            pi_max=sums.pi_max,
            second_sq_pi=second_sq_pi,
        )

    @classmethod
    def _assemble(
        cls,
        *,
        mass: FloatArray,
        mass_sq: FloatArray,
        first: FloatArray,
        second: FloatArray,
        second_sq: FloatArray,
        mass_b: FloatArray,
        first_b: FloatArray,
        second_b: FloatArray,
        cross: FloatArray,
        sum_wb2_raw: FloatArray,
        fourth: FloatArray,
        sample_mass: FloatArray | None,
        pi_max: FloatArray | None,
        second_sq_pi: FloatArray | None,
    ) -> LabeledMoments:
        with np.errstate(divide="ignore", invalid="ignore"):
            sum_w2 = np.where(mass > 0, mass_sq / np.where(mass > 0, mass, 1.0) ** 2, 0.0)
            sum_w4 = np.where(mass > 0, fourth / np.where(mass > 0, mass, 1.0) ** 4, 0.0)
            sum_w2_wb = np.where(
                (mass > 0) & (mass_b > 0),
                cross[:, 0]
                / (np.where(mass > 0, mass, 1.0) ** 2 * np.where(mass_b > 0, mass_b, 1)),
                0.0,
            )
            sum_wb2 = np.where(
                mass_b > 0, sum_wb2_raw / np.where(mass_b > 0, mass_b, 1.0) ** 2, 0.0
            )
        return cls(
            sample_mass=sample_mass,
            second_sq_pi=second_sq_pi,
            pi_max=pi_max,
            mass=mass,
            mass_b=mass_b,
            mean=safe_divide(first, mass),
            second=safe_divide(second, mass),
            second_sq=safe_divide(second_sq, mass**2),
            mean_b=safe_divide(first_b, mass_b),
            second_b=safe_divide(second_b, mass_b),
            sum_w2=sum_w2,
            sum_w2_wb=sum_w2_wb,
            sum_wb2=sum_wb2,
            sum_w4=sum_w4,
        )

    def cross_cov_b(self) -> FloatArray:
        """Local labeled covariance of the features with Y at b, Sigma_XY,L(z): shape (G, p)."""
        return self.second_b[:, 2:, 1] - self.mean_b[:, 2:] * self.mean_b[:, 1:2]

    def quadratic(self, coef: FloatArray, *, squared: bool) -> FloatArray:
        """sum_L w_i^(1 or 2) (e_i - ebar)^2 for residuals e_i = Y_i - coef(z)' X_i, per grid point.

        Parameters
        ----------
        coef : ndarray of shape (G, p)
        squared : bool
            Use the w^2 weights (variance of the weighted mean) instead of w (local variance).
        """
        return self._form(coef, self.second_sq if squared else self.second)

    def design_quadratic(self, coef: FloatArray) -> FloatArray:
        """sum_L pi_i w_i^2 (e_i - ebar)^2 (design weights only; see :attr:`second_sq_pi`)."""
        if self.second_sq_pi is None:
            raise ValueError("design_quadratic needs labeled moments computed with pi.")
        return self._form(coef, self.second_sq_pi)

    def _form(self, coef: FloatArray, moment: FloatArray) -> FloatArray:
        g = self.mean.shape[0]
        ebar = self.mean[:, 1] - np.einsum("gp,gp->g", coef, self.mean[:, 2:])
        v = np.column_stack([-ebar, np.ones(g), -coef])
        return np.asarray(np.einsum("gi,gij,gj->g", v, moment, v), dtype=np.float64)
