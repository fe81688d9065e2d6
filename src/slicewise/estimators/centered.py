"""Centered control-variate profiles: naive, LACE and every fixed- or pooled-coefficient variant.

All of them are one formula (LACE paper, Section 3.3):

.. math::

    \\hat\\theta(z) = \\bar Y_L(z) - c(z)^\\top\\{\\bar X_L(z) - \\bar X_T(z)\\}
                    = \\sum_{i\\in L} w_{i,L}(z)\\{Y_i - c(z)^\\top X_i\\}
                      + \\sum_{i\\in T} w_{i,T}(z)\\, c(z)^\\top X_i ,

with features X (the standardised cheap signals, or predictions built from them) and a coefficient
c(z) that only affects the variance, never the mean (Proposition 1: for any fixed c,
E[Y - c^T{X - mu_X(z)} | Z = z] = theta(z)). Naive is c = 0. LACE uses the local ridge coefficient

.. math::

    \\hat\\beta(z) = \\{\\hat\\Sigma_{SS,T,b}(z) + \\lambda I\\}^{-1} \\hat\\Sigma_{SY,L,b}(z),

with the signal covariance from the whole pool and the signal-label covariance from the labeled
set, both at the nuisance bandwidth b (Section 3.3); with lambda = 0 the inverse is the
Moore-Penrose pseudo-inverse, giving the minimum-norm solution of Proposition 1. Global CV is the
same coefficient with b = infinity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray
from ..moments.sums import LabeledMoments, PoolMoments

#: Eigenvalues of the regularised signal covariance below this are treated as zero (pseudo-inverse).
EIGEN_TOL = 1e-10


@dataclass(frozen=True, eq=False)
class CoefficientFit:
    """A control-variate coefficient per grid point, with its effective degrees of freedom.

    Attributes
    ----------
    coef : ndarray of shape (G, p)
        c(z) on the feature scale.
    df, df2 : ndarray of shape (G,)
        tr(H) and tr(H^2) for the ridge hat matrix H = (Sigma + lambda I)^+ Sigma of the fit; zero
        for a coefficient that was not estimated from the labels (oracle, naive). Used by the
        small-sample correction of the residual variance.
    """

    coef: FloatArray
    df: FloatArray
    df2: FloatArray

    @classmethod
    def fixed(cls, coef: FloatArray) -> CoefficientFit:
        """A coefficient that does not depend on the labels (naive, oracle)."""
        zeros = np.zeros(coef.shape[0])
        return cls(coef=coef, df=zeros, df2=zeros)


def residual_floor(naive_pool: FloatArray, n_eff: FloatArray) -> FloatArray:
    """Floor of a control variate's pool-target variance: the labels-only one over n_eff,L + 1.

    Where the signals predict every labeled item of a neighbourhood (nearly) exactly, the
    residuals show no misprediction and their variance is (nearly) zero, although the unlabeled
    items may hold one: labels cannot show a misprediction that none of them has (measured:
    LLMBar's CaseStudy/Negation subset, 58 items, GPT-4 wrong on one; after adaptive labeling of
    18-21 of them with ``auto``, the interval covered 18 of 30 draws, missing exactly when that
    item was unlabeled, with se 0.007 against errors of 0.015-0.031). As the Agresti-Coull floor
    adds pseudo-labels where the labels all agree
    (:func:`slicewise.inference.variance.degenerate_floor`), this adds one pseudo-item on which
    the signals do not help: the residual variance is at least
    (n_eff,L x 0 + 1 x Var(Y)) / (n_eff,L + 1), so the variance is at least the labels-only
    (naive) one of the same target divided by n_eff,L + 1. In words: no neighbourhood claims
    more than n_eff,L + 1 times the precision of its labels alone. The floor is reached only
    where the estimated R^2 exceeds about n_eff,L / (n_eff,L + 1); it costs nothing elsewhere. Used by every centered control variate of a profile
    (:func:`slicewise.inference.variance.local_variance`, auto's cross-fitted candidates) and by
    the direct domain estimators that use predictions (:mod:`slicewise.domains.fit`).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(naive_pool / (n_eff + 1.0), dtype=np.float64)


def ridge_coefficient(
    pool: PoolMoments, lab: LabeledMoments, ridge: float, *, prior: FloatArray | None = None
) -> CoefficientFit:
    """Local ridge control-variate coefficient (LACE paper, Section 3.3).

    .. math::

        \\hat\\beta(z) = \\{\\hat\\Sigma_{XX,T,b}(z) + \\lambda I\\}^{+}
            \\{\\hat\\Sigma_{XY,L,b}(z) + \\lambda \\beta_0\\}

    computed by an eigendecomposition of the pool covariance, so that a signal that is constant
    inside a neighbourhood (a zero eigenvalue) never breaks the solve. The penalty pulls toward the
    prior coefficient beta_0 (``prior``, default 0: the paper's ridge; a learned prediction of Y has
    the natural prior coefficient 1). Grid points whose b-neighbourhood has no labeled or no pool
    mass get the prior coefficient.

    Returns
    -------
    CoefficientFit
        With df = sum d_j / (d_j + lambda) and df2 = sum {d_j / (d_j + lambda)}^2 over the
        eigenvalues d_j of the pool covariance.
    """
    cov = pool.cov_b
    g, p = cov.shape[0], cov.shape[1]
    if p == 0:
        return CoefficientFit.fixed(np.zeros((g, 0)))
    cross = lab.cross_cov_b()
    usable = (
        (lab.mass_b > 0)
        & (pool.mass_b > 0)
        & np.all(np.isfinite(cross), axis=1)
        & np.all(np.isfinite(cov), axis=(1, 2))
    )
    target = np.zeros(p) if prior is None else np.asarray(prior, dtype=np.float64)
    safe_cross = np.where(usable[:, None], cross, 0.0) + ridge * target
    eigval, eigvec = pool.cov_b_eigen  # cached per pool; clipped at 0 against round-off
    eigval = np.where(usable[:, None], eigval, 0.0)
    coef, inv = ridge_solve(eigval, eigvec, safe_cross, ridge)
    coef = np.where(usable[:, None], coef, target)
    hat = eigval * inv
    return CoefficientFit(coef=coef, df=hat.sum(axis=1), df2=(hat**2).sum(axis=1))


def ridge_solve(
    eigval: FloatArray, eigvec: FloatArray, rhs: FloatArray, ridge: float | FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(Sigma(z) + lambda I)^+ rhs(z) at every grid point from Sigma's eigendecomposition
    (eigenvalues (G, p), eigenvectors (G, p, p)), so that a zero eigenvalue never breaks the
    solve. Returns the solutions (G, p) and the inverted shifted eigenvalues (G, p), 0 where
    the shifted eigenvalue is numerically 0."""
    denom = eigval + ridge
    scale = np.max(np.abs(denom), axis=1, keepdims=True)
    keep = denom > EIGEN_TOL * np.maximum(scale, 1.0)
    inv = np.where(keep, 1.0 / np.where(keep, denom, 1.0), 0.0)
    rotated = np.einsum("gji,gj->gi", eigvec, rhs)
    return np.einsum("gij,gj->gi", eigvec, inv * rotated), inv


def centered_estimate(pool: PoolMoments, lab: LabeledMoments, coef: FloatArray) -> FloatArray:
    """theta_hat(z) = Ybar_L(z) - c(z)'(Xbar_L(z) - Xbar_T(z)); NaN where L has no mass."""
    gap = lab.mean[:, 2:] - pool.mean
    adjust = np.einsum("gp,gp->g", coef, np.where(np.isfinite(gap), gap, 0.0))
    return np.asarray(lab.mean[:, 1] - adjust, dtype=np.float64)


def residual_estimate(lab: LabeledMoments, coef: FloatArray) -> FloatArray:
    """Ybar_L(z) - c(z)' Xbar_L(z): the labeled residual mean without the pool term."""
    return np.asarray(
        lab.mean[:, 1] - np.einsum("gp,gp->g", coef, lab.mean[:, 2:]), dtype=np.float64
    )


def shrunk_coefficient(
    local: CoefficientFit, pooled: CoefficientFit, n_eff: FloatArray, shrinkage: float
) -> CoefficientFit:
    """Local coefficient shrunk toward the pooled one in proportion to the local labeled information.

    .. math::

        \\tilde\\beta(z) = \\omega(z)\\,\\hat\\beta_{loc}(z) + \\{1 - \\omega(z)\\}\\,\\hat\\beta_{pool},
        \\qquad \\omega(z) = \\frac{n_{eff,b}(z)}{n_{eff,b}(z) + \\kappa},

    the posterior mean of a local coefficient under a prior centred on the pooled coefficient whose
    precision equals that of kappa local labels (an empirical-Bayes ridge toward beta_pool):
    with n_eff,b(z) = 1 / sum_L (w^b_i)^2 labeled items in the b-neighbourhood the estimate is LACE
    where neighbourhoods are rich (omega -> 1) and Global CV where they are poor (omega -> 0).
    ``shrinkage`` = kappa = 0 gives LACE, ``inf`` gives the pooled coefficient.

    Returns
    -------
    CoefficientFit
        With df = omega df_loc and df2 = omega^2 df2_loc: the pooled part is fitted on all labels,
        so its leverage inside one neighbourhood is negligible.
    """
    if np.isinf(shrinkage):
        omega = np.zeros_like(n_eff)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            omega = np.where(n_eff > 0, n_eff / (n_eff + shrinkage), 0.0)
    coef = omega[:, None] * local.coef + (1.0 - omega[:, None]) * pooled.coef
    return CoefficientFit(
        coef=coef,
        df=omega * local.df,
        df2=omega**2 * local.df2,
    )
