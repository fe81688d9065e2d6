"""Three-level centered control variate for cascaded raters (LACE paper, Appendix F; Conclusion).

Design: cheap signals S on the whole pool T, an expensive rater X (a strong LLM judge) on a simple
random subset R of T, gold labels Y on a simple random subset L of R. With V = (X, S), the vector
observed on R, the estimator centres the rater at the level where it is observed and the cheap
signals at theirs:

.. math::

    \\hat\\theta(z) = \\bar Y_L(z) - b(z)^\\top\\{\\bar V_L(z) - \\bar V_R(z)\\}
                    - c(z)^\\top\\{\\bar S_R(z) - \\bar S_T(z)\\}.

The first correction (level 1) moves the gold mean from L to R using everything observed on R; the
second (level 2) moves the R-level mean from R to T using the cheap signals. Writing
u = Y - b'V and v = Y - c'S,

.. math::

    \\hat\\theta(z) - \\bar Y_T(z) =
      \\underbrace{\\{\\bar u_L(z) - \\bar u_R(z)\\}}_{A:\\ L \\text{ from } R}
    + \\underbrace{\\{\\bar v_R(z) - \\bar v_T(z)\\}}_{B:\\ R \\text{ from } T},

an exact identity. For fixed b and c, E[A | R] = 0 and E[B] = 0 (Theorem 1 of the paper applied to
each nested simple random sample within a group), so the group estimator is exactly unbiased for
the pool profile; B is a function of R, so A and B are uncorrelated. The variance is in
:mod:`slicewise.inference.cascade_variance`.

Variance-optimal coefficients: b* = Var(V | z)^+ Cov(V, Y | z) (regression of Y on X and S) and
c* = Var(S | z)^+ Cov(S, Y | z) (regression of Y on S). As in LACE they are estimated locally with
a ridge penalty, each covariance of the signals from the largest set where they are observed and
the covariance with Y from L:

.. math::

    \\hat b(z) = \\{\\hat\\Sigma_{VV,R,b}(z) + \\lambda I\\}^{+}\\hat\\Sigma_{VY,L,b}(z),\\qquad
    \\hat c(z) = \\{\\hat\\Sigma_{SS,T,b}(z) + \\lambda I\\}^{+}\\hat\\Sigma_{SY,L,b}(z),

so c_hat is the LACE coefficient. Including S in the level-1 vector matters: with V = X alone a
pure-noise rater would leave theta_hat = Ybar_L - c'(Sbar_R - Sbar_T), which is worse than LACE;
with V = (X, S) and b = (0, c) the estimator is exactly LACE, Ybar_L - c'(Sbar_L - Sbar_T).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray, KernelMatrix
from ..moments.kernel_ops import take_rows
from ..moments.sums import LabeledMoments, PoolMoments
from .centered import CoefficientFit, centered_estimate, ridge_coefficient


@dataclass(frozen=True, eq=False)
class CascadeMoments:
    """Local sums of the three levels.

    Attributes
    ----------
    pool_t : PoolMoments
        Standardised S over the pool T.
    pool_r : PoolMoments
        Standardised V = (X, S) over the rater set R.
    lab_s : LabeledMoments
        (1, Y, S) over L (weights normalised over L).
    lab_v : LabeledMoments
        (1, Y, V) over L.
    n_rater_features : int
        Columns of X in V (the first ones).
    """

    pool_t: PoolMoments
    pool_r: PoolMoments
    lab_s: LabeledMoments
    lab_v: LabeledMoments
    n_rater_features: int

    @classmethod
    def compute(
        cls,
        *,
        pool_t: PoolMoments,
        kernel: KernelMatrix,
        kernel_b: KernelMatrix,
        signals: FloatArray,
        rater: FloatArray,
        rater_index: IntArray,
        label_index: IntArray,
        label: FloatArray,
    ) -> CascadeMoments:
        """Sums for pool moments ``pool_t`` of S, rater rows R and labeled rows L.

        Parameters
        ----------
        pool_t : PoolMoments of the standardised signals over T
        kernel, kernel_b : (M, G) kernels at h and at the nuisance bandwidth b
        signals : (M, K_S) standardised signals
        rater : (|R|, K_X) standardised rater columns, rows in the order of ``rater_index``
        rater_index : positions of R in the pool
        label_index : positions of L within R (indices into ``rater_index``)
        label : (n,) gold labels of L
        """
        v = np.column_stack([rater, signals[rater_index]])
        k_r = take_rows(kernel, rater_index)
        kb_r = k_r if kernel_b is kernel else take_rows(kernel_b, rater_index)
        pool_r = PoolMoments.compute(k_r, v, kb_r)
        lab_v = LabeledMoments.compute(pool_r, label_index, label, v)
        lab_s = LabeledMoments.compute(pool_t, rater_index[label_index], label, signals)
        return cls(
            pool_t=pool_t,
            pool_r=pool_r,
            lab_s=lab_s,
            lab_v=lab_v,
            n_rater_features=rater.shape[1],
        )

    def coefficients(self, ridge: float) -> tuple[CoefficientFit, CoefficientFit]:
        """The local ridge coefficients b_hat (on V over R) and c_hat (on S over T)."""
        return (
            ridge_coefficient(self.pool_r, self.lab_v, ridge),
            ridge_coefficient(self.pool_t, self.lab_s, ridge),
        )


def cascade_estimate(moments: CascadeMoments, b: FloatArray, c: FloatArray) -> FloatArray:
    """theta_hat(z) = Ybar_L - b'(Vbar_L - Vbar_R) - c'(Sbar_R - Sbar_T); see the module notes."""
    level1 = centered_estimate(moments.pool_r, moments.lab_v, b)
    s_r = moments.pool_r.mean[:, moments.n_rater_features :]
    shift = s_r - moments.pool_t.mean
    adjust = np.einsum("gp,gp->g", c, np.where(np.isfinite(shift), shift, 0.0))
    return np.asarray(level1 - adjust, dtype=np.float64)


def rater_r2(moments: CascadeMoments) -> FloatArray:
    """Local R^2 of each rater column on the cheap signals over R, shape (G, K_X).

    R^2 = Sigma_XS Sigma_SS^+ Sigma_SX / Sigma_XX at the nuisance bandwidth (NaN where X has no
    local variance).
    """
    cov = moments.pool_r.cov_b
    kx = moments.n_rater_features
    sxx = np.diagonal(cov[:, :kx, :kx], axis1=1, axis2=2)
    sxs = cov[:, :kx, kx:]
    if cov.shape[1] == kx:
        return np.zeros_like(sxx)
    finite = np.all(np.isfinite(cov), axis=(1, 2))
    pinv = np.linalg.pinv(np.where(finite[:, None, None], cov[:, kx:, kx:], 0.0), hermitian=True)
    explained = np.einsum("gxs,gst,gxt->gx", np.nan_to_num(sxs), pinv, np.nan_to_num(sxs))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(finite[:, None] & (sxx > 0), explained / np.where(sxx > 0, sxx, 1.0), np.nan)
    return np.asarray(out, dtype=np.float64)
