"""REML fit of the area-level model, the EBLUP and its Prasad-Rao (Datta-Lahiri) MSE."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray
from .linear_mixed import AreaModel, conditional_posterior, projection_matrices


@dataclass(frozen=True, eq=False)
class EblupFit:
    """EBLUP of every observed domain.

    Attributes
    ----------
    estimate, mse : ndarray of shape (D,)
        EBLUP and its estimated MSE g1 + g2 + 2 g3.
    g1_g2, g3 : ndarray of shape (D,)
    weight : ndarray of shape (D,)
        Shrinkage weight 1 - psi_d P_dd (weight on the domain's own direct estimate).
    sigma2 : ndarray of shape (L + 1,)
        REML variance components (levels, then the domain effect).
    beta : ndarray of shape (p,)
    iterations : int
    converged : bool
    """

    estimate: FloatArray
    mse: FloatArray
    g1_g2: FloatArray
    g3: FloatArray
    weight: FloatArray
    sigma2: FloatArray
    beta: FloatArray
    iterations: int
    converged: bool


def _component_matrices(model: AreaModel) -> list[FloatArray]:
    """The Z_l (D x q_l) of every component; the identity stands for the domain effect."""
    mats = [model.level_matrix(level) for level in range(model.n_levels)]
    mats.append(np.eye(model.y.size))
    return mats


def reml_fisher_scoring(
    model: AreaModel,
    *,
    start: FloatArray | None = None,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> tuple[FloatArray, FloatArray, int, bool]:
    """REML variance components by Fisher scoring, projected onto sigma^2 >= 0.

    Returns
    -------
    sigma2 : ndarray of shape (L + 1,)
    information : ndarray of shape (L + 1, L + 1)
        Expected REML information at the estimate.
    iterations : int
    converged : bool

    Notes
    -----
    With A_c = Z_c Z_c^T:

    .. math::

        s_c = -\\tfrac12\\mathrm{tr}(P A_c) + \\tfrac12 y^\\top P A_c P y,\\qquad
        \\mathcal I_{cc'} = \\tfrac12\\mathrm{tr}(P A_c P A_{c'})
        = \\tfrac12\\lVert Z_c^\\top P Z_{c'}\\rVert_F^2,

    and sigma^2 <- max(0, sigma^2 + I^{-1} s), with step halving when the REML likelihood
    decreases.

    References
    ----------
    Harville, D. A. (1977). Maximum likelihood approaches to variance component estimation.
    *JASA* 72, 320-338. Rao and Molina (2015), *Small Area Estimation*, Section 6.1.2.
    """
    mats = _component_matrices(model)
    n_comp = len(mats)
    if start is None:
        resid = model.y - model.x @ np.linalg.lstsq(model.x, model.y, rcond=None)[0]
        total = max(
            float(np.var(resid)) - float(np.mean(model.psi)), 1e-4 * float(np.var(model.y)) + 1e-12
        )
        sigma2 = np.full(n_comp, total / n_comp)
    else:
        sigma2 = np.maximum(np.asarray(start, dtype=np.float64), 0.0)
    converged = False
    info = np.eye(n_comp)
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007
        _, proj = projection_matrices(model, sigma2)
        py = proj @ model.y
        pz = [proj @ zc for zc in mats]
        score = np.array(
            [
                -0.5 * float(np.sum(pz[c] * mats[c])) + 0.5 * float(np.sum((mats[c].T @ py) ** 2))
                for c in range(n_comp)
            ]
        )
        info = np.empty((n_comp, n_comp))
        for a in range(n_comp):
            for c in range(a, n_comp):
                info[a, c] = info[c, a] = 0.5 * float(np.sum((mats[a].T @ pz[c]) ** 2))
        step = np.linalg.lstsq(info, score, rcond=None)[0]
        new = np.maximum(sigma2 + step, 0.0)
        change = float(np.max(np.abs(new - sigma2)))
        sigma2 = new
        scale = max(float(np.max(sigma2)), 1e-12)
        if change <= tol * max(scale, 1e-8):
            converged = True
            break
    return sigma2, info, iterations, converged


def eblup(model: AreaModel, *, tol: float = 1e-10, max_iter: int = 200) -> EblupFit:
    """REML/EBLUP fit with the Prasad-Rao MSE.

    Notes
    -----
    The EBLUP is the conditional posterior mean of :mod:`.linear_mixed` at the REML estimate.
    Its MSE estimate (Prasad and Rao 1990; Datta and Lahiri 2000 for REML; Das, Jiang and Rao
    2004 for several variance components) is

    .. math::

        \\mathrm{mse}_d = g_{1d} + g_{2d} + 2 g_{3d},\\quad g_{1d} + g_{2d} = \\psi_d - \\psi_d^2
        P_{dd},\\quad
        g_{3d} = \\psi_d^2 \\sum_{c,c'} (\\bar{\\mathcal I}^{-1})_{cc'}
        (V^{-1} A_c V^{-1} A_{c'} V^{-1})_{dd},

    with the asymptotic information \\bar I_{cc'} = tr(V^{-1} A_c V^{-1} A_{c'}) / 2. For the
    single-component Fay-Herriot model g_3 reduces to the familiar
    psi_d^2 (sigma^2 + psi_d)^{-3} x 2 / sum_j (sigma^2 + psi_j)^{-2}.

    References
    ----------
    Prasad, N. G. N. and Rao, J. N. K. (1990). The estimation of the mean squared error of
    small-area estimators. *JASA* 85, 163-171.
    Datta, G. S. and Lahiri, P. (2000). A unified measure of uncertainty of estimated best linear
    unbiased predictors in small area estimation problems. *Statistica Sinica* 10, 613-627.
    Das, K., Jiang, J. and Rao, J. N. K. (2004). Mean squared error of empirical predictor.
    *Ann. Statist.* 32, 818-840.
    """
    sigma2, _, iterations, converged = reml_fisher_scoring(model, tol=tol, max_iter=max_iter)
    cond = conditional_posterior(model, sigma2[None, :])
    vinv, _ = projection_matrices(model, sigma2)
    mats = _component_matrices(model)
    n_comp = len(mats)
    vz = [vinv @ zc for zc in mats]
    info = np.empty((n_comp, n_comp))
    for a in range(n_comp):
        for c in range(a, n_comp):
            info[a, c] = info[c, a] = 0.5 * float(np.sum((mats[a].T @ vz[c]) ** 2))
    info_inv = np.linalg.pinv(info)
    g3_core = np.zeros(model.y.size)
    # (V^-1 A_a V^-1 A_c V^-1)_dd = row_d(V^-1 Z_a) (Z_a^T V^-1 Z_c) row_d(V^-1 Z_c)^T
    for a in range(n_comp):
        for c in range(n_comp):
            if info_inv[a, c] == 0.0:
                continue
            middle = mats[a].T @ vz[c]
            g3_core += info_inv[a, c] * np.einsum("di,ij,dj->d", vz[a], middle, vz[c])
    g3 = model.psi**2 * g3_core
    g12 = cond.variance[0]
    return EblupFit(
        estimate=cond.mean[0],
        mse=g12 + 2.0 * g3,
        g1_g2=g12,
        g3=g3,
        weight=cond.weight[0],
        sigma2=sigma2,
        beta=cond.beta[0],
        iterations=iterations,
        converged=converged,
    )
