"""The area-level (Fay-Herriot) model with additive taxonomy effects, and its fast algebra.

Model for the direct estimates y_d of D domains with known sampling variances psi_d:

.. math::

    y_d = \\theta_d + e_d,\\ e_d \\sim N(0, \\psi_d),\\qquad
    \\theta_d = x_d^\\top\\beta + \\sum_{l=1}^{L} z_{ld}^\\top u_l + v_d,\\quad
    u_l \\sim N(0, \\sigma_l^2 I_{q_l}),\\ v_d \\sim N(0, \\sigma_v^2).

Without taxonomy levels (L = 0) this is the Fay-Herriot model (PP-S); with levels (task type
within benchmark, model and conversation type, model_a and model_b) the effects add up by level
and each level has its own variance component (PP-TS). Nested and crossed levels are the same
algebra: Z_l is the (D x q_l) indicator matrix of level l.

Marginally y ~ N(X beta, V) with V = Psi + sigma_v^2 I + Z G Z^T, G = diag(sigma_l^2 I). With
D_v = Psi + sigma_v^2 I diagonal and q = sum_l q_l usually much smaller than D, every quantity
goes through the q x q matrix M = G^{-1} + Z^T D_v^{-1} Z (Woodbury):

.. math::

    V^{-1} = D_v^{-1} - D_v^{-1} Z M^{-1} Z^T D_v^{-1},\\qquad
    \\log|V| = \\log|D_v| + \\log|G| + \\log|M|.

Given the variance components, with a flat prior on beta (equivalently, GLS beta), the
posterior of theta is Gaussian with

.. math::

    E(\\theta \\mid y) = y - \\Psi P y,\\quad \\mathrm{Var}(\\theta_d \\mid y) =
    \\psi_d - \\psi_d^2 P_{dd},\\quad
    P = V^{-1} - V^{-1}X(X^\\top V^{-1}X)^{-1}X^\\top V^{-1},

and the weight of domain d's own direct estimate (its shrinkage weight) is
1 - psi_d P_dd, which tends to 1 as psi_d -> 0 (a large domain keeps its direct estimate).
The restricted (REML) log-likelihood is

.. math::

    \\ell_R = -\\tfrac12\\{\\log|V| + \\log|X^\\top V^{-1} X| + y^\\top P y\\}.

References
----------
Fay, R. E. and Herriot, R. A. (1979). Estimates of income for small places. *JASA* 74, 269-277.
Rao, J. N. K. and Molina, I. (2015). *Small Area Estimation*, 2nd ed., Chapters 5-6.
Kawano, Li and Parker (2026), Prediction-powered smoothing, Section 3 (PP-S, PP-TS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray


@dataclass(frozen=True, eq=False)
class AreaModel:
    """Data of an area-level model (observed domains only).

    Attributes
    ----------
    y, psi : ndarray of shape (D,)
        Direct estimates and their sampling variances (psi > 0).
    x : ndarray of shape (D, p)
        Domain covariates, including the intercept column.
    z : ndarray of shape (D, q)
        Indicator columns of all taxonomy levels side by side (q = 0 without taxonomy).
    column_level : ndarray of int, shape (q,)
        Level (0..L-1) of every column of ``z``.
    level_names : tuple of str
        Names of the L levels; the domain effect v is always the last variance component.
    """

    y: FloatArray
    psi: FloatArray
    x: FloatArray
    z: FloatArray
    column_level: IntArray
    level_names: tuple[str, ...]

    @property
    def n_levels(self) -> int:
        """L, the number of taxonomy levels."""
        return len(self.level_names)

    @property
    def n_components(self) -> int:
        """L + 1 variance components (levels, then the domain effect)."""
        return self.n_levels + 1

    @property
    def component_names(self) -> tuple[str, ...]:
        """Names of the variance components, domain effect last."""
        return (*self.level_names, "domain")

    def level_matrix(self, level: int) -> FloatArray:
        """Z_l, the indicator columns of one level."""
        out: FloatArray = self.z[:, self.column_level == level]
        return out


def indicator_levels(
    codes: Sequence[IntArray], names: Sequence[str]
) -> tuple[FloatArray, IntArray]:
    """Stack the indicator matrices of taxonomy levels given as integer codes per domain."""
    blocks = []
    owner = []
    for level, code in enumerate(codes):
        values, inverse = np.unique(code, return_inverse=True)
        block = np.zeros((code.size, values.size))
        block[np.arange(code.size), inverse] = 1.0
        blocks.append(block)
        owner.append(np.full(values.size, level, dtype=np.intp))
    if not blocks:
        n = codes[0].size if codes else 0
        return np.zeros((n, 0)), np.zeros(0, dtype=np.intp)
    del names
    return np.hstack(blocks), np.concatenate(owner)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """REML log-likelihood and GLS pieces at a batch of variance-component values."""

    loglik: FloatArray
    beta: FloatArray


def _batched_logdet_solve(
    matrix: FloatArray, rhs: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Cholesky of a batch of SPD matrices: log-determinants, solves and factors."""
    chol = np.asarray(np.linalg.cholesky(matrix), dtype=np.float64)
    logdet: FloatArray = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    solved = np.asarray(np.linalg.solve(matrix, rhs), dtype=np.float64)
    return logdet, solved, chol


def reml_loglik(model: AreaModel, sigma2: FloatArray) -> Evaluation:
    """REML log-likelihood at a batch of variance components.

    Parameters
    ----------
    model : AreaModel
    sigma2 : ndarray of shape (B, L + 1)
        Level variances sigma_l^2, then the domain variance sigma_v^2 (all > 0).

    Returns
    -------
    Evaluation
        ``loglik`` of shape (B,) (up to a constant) and GLS ``beta`` of shape (B, p).

    Notes
    -----
    Batches that share sigma_v^2 share Z^T D_v^{-1} Z, so a tensor grid costs one q x q Cholesky
    per node (see the module docstring for the formulas).
    """
    sigma2 = np.atleast_2d(np.asarray(sigma2, dtype=np.float64))
    b = sigma2.shape[0]
    p = model.x.shape[1]
    loglik = np.empty(b)
    beta = np.empty((b, p))
    sv, inverse = np.unique(sigma2[:, -1], return_inverse=True)
    for j, value in enumerate(sv):
        same = np.flatnonzero(inverse == j)
        for chunk in range(0, same.size, 256):
            rows = same[chunk : chunk + 256]
            _reml_rows(model, sigma2, rows, float(value), loglik, beta)
    return Evaluation(loglik=loglik, beta=beta)


def _reml_rows(
    model: AreaModel,
    sigma2: FloatArray,
    rows: IntArray,
    value: float,
    loglik: FloatArray,
    beta: FloatArray,
) -> None:
    """REML log-likelihood for the nodes ``rows`` sharing sigma_v^2 = ``value`` (in place)."""
    p = model.x.shape[1]
    dinv = 1.0 / (model.psi + value)
    logdet_d = -np.log(dinv).sum()
    xd = model.x * dinv[:, None]
    xtdx = model.x.T @ xd
    xtdy = xd.T @ model.y
    ytdy = float(model.y @ (dinv * model.y))
    if model.z.shape[1] == 0:
        xtvx = np.broadcast_to(xtdx, (rows.size, p, p))
        xtvy = np.broadcast_to(xtdy, (rows.size, p))
        ytvy = np.full(rows.size, ytdy)
        logdet_v = np.full(rows.size, logdet_d)
    else:
        zd = model.z * dinv[:, None]
        ztdz = model.z.T @ zd
        ztdx = zd.T @ model.x
        ztdy = zd.T @ model.y
        g = np.maximum(sigma2[np.ix_(rows, model.column_level)], _floor(model))
        m = ztdz[None, :, :] + _diag_batch(1.0 / g)
        rhs = np.concatenate([ztdx, ztdy[:, None]], axis=1)
        logdet_m, solved, _ = _batched_logdet_solve(
            m, np.broadcast_to(rhs, (rows.size, *rhs.shape))
        )
        sol_x = solved[:, :, :p]
        sol_y = solved[:, :, p]
        xtvx = xtdx[None] - np.einsum("qa,bqc->bac", ztdx, sol_x)
        xtvy = xtdy[None] - np.einsum("qa,bq->ba", ztdx, sol_y)
        ytvy = ytdy - np.einsum("q,bq->b", ztdy, sol_y)
        logdet_v = logdet_d + np.log(g).sum(axis=1) + logdet_m
    logdet_x, beta_rows, _ = _batched_logdet_solve(np.array(xtvx), np.array(xtvy)[..., None])
    beta_rows = beta_rows[..., 0]
    quad = ytvy - np.einsum("bp,bp->b", xtvy, beta_rows)
    loglik[rows] = -0.5 * (logdet_v + logdet_x + quad)
    beta[rows] = beta_rows


def _floor(model: AreaModel) -> float:
    """Smallest level variance used (a zero variance component is floored, not inverted)."""
    return 1e-12 * max(float(np.mean(model.psi)), 1e-12)


def _diag_batch(values: FloatArray) -> FloatArray:
    b, q = values.shape
    out = np.zeros((b, q, q))
    idx = np.arange(q)
    out[:, idx, idx] = values
    return out


@dataclass(frozen=True, eq=False)
class Conditional:
    """Gaussian posterior of theta given variance components (one row per node)."""

    mean: FloatArray
    variance: FloatArray
    weight: FloatArray
    beta: FloatArray


def conditional_posterior(model: AreaModel, sigma2: FloatArray) -> Conditional:
    """E(theta | y, sigma), Var(theta_d | y, sigma) and shrinkage weights at a batch of nodes.

    Parameters
    ----------
    model : AreaModel
    sigma2 : ndarray of shape (B, L + 1)

    Returns
    -------
    Conditional
        ``mean``, ``variance`` and ``weight`` (= 1 - psi_d P_dd) of shape (B, D), GLS ``beta``
        of shape (B, p).
    """
    sigma2 = np.atleast_2d(np.asarray(sigma2, dtype=np.float64))
    b = sigma2.shape[0]
    n_dom, p = model.x.shape
    mean = np.empty((b, n_dom))
    var = np.empty((b, n_dom))
    weight = np.empty((b, n_dom))
    beta = np.empty((b, p))
    for start in range(0, b, 32):
        rows = slice(start, min(start + 32, b))
        m_, v_, w_, b_ = _conditional_batch(model, sigma2[rows])
        mean[rows], var[rows], weight[rows], beta[rows] = m_, v_, w_, b_
    return Conditional(mean=mean, variance=var, weight=weight, beta=beta)


def _conditional_batch(
    model: AreaModel, sigma2: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Batched conditional posterior moments (see :func:`conditional_posterior`)."""
    q = model.z.shape[1]
    dinv = 1.0 / (model.psi[None, :] + sigma2[:, -1:])  # (b, D)
    x = model.x
    y = model.y
    dx = dinv[:, :, None] * x[None]  # (b, D, p)
    dy = dinv * y[None]  # (b, D)
    vinv_diag = dinv.copy()
    if q:
        g = np.maximum(sigma2[:, model.column_level], _floor(model))  # (b, q)
        zd = dinv[:, :, None] * model.z[None]  # (b, D, q)
        m = np.matmul(model.z.T[None], zd) + _diag_batch(1.0 / g)
        # K = M^{-1} Z^T D^{-1}, shape (b, q, D); V^{-1} a = D^{-1} a - (D^{-1} Z) K a
        k = np.linalg.solve(m, np.transpose(zd, (0, 2, 1)))
        vinv_diag -= np.sum(zd * np.transpose(k, (0, 2, 1)), axis=2)
        vx = dx - np.matmul(zd, np.matmul(k, x))
        vy = dy - np.matmul(zd, np.matmul(k, y)[:, :, None])[:, :, 0]
    else:
        vx = dx
        vy = dy
    xtvx = np.matmul(x.T[None], vx)
    xtvx_inv = np.linalg.inv(xtvx)
    xtvy = np.matmul(y[None, None, :], vx)[:, 0, :]
    beta = np.matmul(xtvx_inv, xtvy[:, :, None])[:, :, 0]
    # P y = V^{-1} y - V^{-1} X beta
    py = vy - np.matmul(vx, beta[:, :, None])[:, :, 0]
    p_diag = vinv_diag - np.sum(np.matmul(vx, xtvx_inv) * vx, axis=2)
    mean = y[None] - model.psi[None] * py
    var = np.maximum(model.psi[None] - model.psi[None] ** 2 * p_diag, 0.0)
    weight = 1.0 - model.psi[None] * p_diag
    return mean, var, weight, beta


def projection_matrices(model: AreaModel, sigma2: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Dense V^{-1} and P at one value of the variance components (REML scoring, MSE terms)."""
    s = np.asarray(sigma2, dtype=np.float64)
    v = np.diag(model.psi + s[-1])
    for level in range(model.n_levels):
        zl = model.level_matrix(level)
        v += s[level] * (zl @ zl.T)
    vinv = np.linalg.inv(v)
    vx = vinv @ model.x
    proj = vinv - vx @ np.linalg.solve(model.x.T @ vx, vx.T)
    return vinv, proj
