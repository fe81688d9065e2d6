"""Simulation designs of the LACE paper's Appendix I, with closed-form truths.

Every design draws, for an item at profile value z,

.. math::

    Y_i \\mid Z_i = z \\sim \\mathrm{Bernoulli}(\\theta(z)), \\qquad
    S_{ik} = a_k(z) + \\gamma_k(z) Y_i + \\sigma_k(z) \\xi_{ik}, \\quad \\xi_i \\sim N(0, I_K),

so that (Appendix I.1)

.. math::

    \\Sigma_{SS}(z) = \\theta(1-\\theta)\\gamma\\gamma^\\top + \\mathrm{diag}(\\sigma^2),\\quad
    \\Sigma_{SY}(z) = \\theta(1-\\theta)\\gamma,\\quad
    \\beta^\\star(z) = \\Sigma_{SS}^{-1}\\Sigma_{SY},\\quad
    R^2(z) = \\Sigma_{SY}^\\top\\Sigma_{SS}^{-1}\\Sigma_{SY} / \\{\\theta(1-\\theta)\\}.

A :class:`Design` is frozen (group sizes, theta, offsets and specialist assignments fixed); each
call of :meth:`Design.draw` redraws Y and S for the same Z. Designs are conditional-on-design, as in
the paper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import FloatArray, Kind

#: Seed that freezes the random parts of the designs (offsets, specialists, theta of Setting C).
DESIGN_SEED = 20260427


@dataclass(frozen=True, eq=False)
class Design:
    """A frozen simulation design.

    Attributes
    ----------
    name : str
    kind : {'ordinal', 'categorical', 'continuous'}
    z : ndarray of shape (M,)
        Profile values of the pool (fixed for discrete designs; redrawn for continuous ones when
        ``random_z`` is set).
    grid : ndarray of shape (G,)
        Evaluation points.
    theta : ndarray of shape (G,)
        The population profile theta(z) at the grid points.
    gamma, offset, sigma : ndarray of shape (G, K)
        Slope, offset and residual scale of every signal at every grid point (discrete designs).
    random_z : bool
        Whether :meth:`draw` redraws Z (continuous designs).
    """

    name: str
    kind: Kind
    z: FloatArray
    grid: FloatArray
    theta: FloatArray
    gamma: FloatArray
    offset: FloatArray
    sigma: FloatArray
    random_z: bool = False

    @property
    def n_signals(self) -> int:
        """K."""
        return int(self.gamma.shape[1])

    @property
    def signal_names(self) -> list[str]:
        """Column names of the signals in :meth:`draw`'s frame."""
        return [f"s{k + 1}" for k in range(self.n_signals)]

    def _parameters(self, z: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """theta, gamma, offset, sigma at every item's z."""
        if self.kind == "continuous":
            return continuous_parameters(z)
        position = np.searchsorted(self.grid, z)
        return (
            self.theta[position],
            self.gamma[position],
            self.offset[position],
            self.sigma[position],
        )

    def draw(self, rng: np.random.Generator) -> pd.DataFrame:
        """One pool: columns z, s1..sK and y (fully labeled)."""
        z = rng.uniform(0.0, 1.0, self.z.size) if self.random_z else self.z
        theta, gamma, offset, sigma = self._parameters(z)
        y = (rng.random(z.size) < theta).astype(np.float64)
        noise = rng.standard_normal((z.size, self.n_signals))
        signals = offset + gamma * y[:, None] + sigma * noise
        frame = pd.DataFrame(signals, columns=self.signal_names)
        frame.insert(0, "z", z)
        frame["y"] = y
        return frame

    def oracle_coef(self) -> FloatArray:
        """beta*(z) = Sigma_SS(z)^{-1} Sigma_SY(z) at the grid points, shape (G, K), raw units."""
        return oracle_moments(self.theta, self.gamma, self.sigma)[0]

    def r2(self) -> FloatArray:
        """Population local R^2(z) at the grid points."""
        return oracle_moments(self.theta, self.gamma, self.sigma)[1]

    def bound_gain(self, fraction: float) -> FloatArray:
        """Pointwise oracle gain 1 / (1 - (1 - pi) R^2(z))."""
        return 1.0 / (1.0 - (1.0 - fraction) * self.r2())


def oracle_moments(
    theta: FloatArray, gamma: FloatArray, sigma: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Closed-form beta*(z) and R^2(z) of the Appendix I model, per row of the inputs."""
    var_y = theta * (1.0 - theta)
    cov_sy = var_y[:, None] * gamma
    cov_ss = var_y[:, None, None] * gamma[:, :, None] * gamma[:, None, :]
    cov_ss = cov_ss + np.einsum("gk,kj->gkj", sigma**2, np.eye(gamma.shape[1]))
    beta = np.linalg.solve(cov_ss, cov_sy[:, :, None])[:, :, 0]
    r2 = np.einsum("gk,gk->g", cov_sy, beta) / var_y
    return beta, r2


def setting_b(m_per_group: int = 2000, *, seed: int = DESIGN_SEED) -> Design:
    """Setting B (Appendix I.1): ordered discrete profile, one specialist active at each level.

    Five levels of ``m_per_group`` items; K = 6; gamma_k(g) = 2 for (g, k) in {(1,1), (2,2),
    (3,3), (4,4), (5,1)} and 0 otherwise; sigma = (1/2, 1/2, 1/2, 1/2, 1, 1) at every level;
    theta = (0.3, 0.4, 0.5, 0.6, 0.7); offsets a_k(g) ~ N(0, 1), frozen by ``seed``.
    """
    levels = np.arange(1.0, 6.0)
    k = 6
    gamma = np.zeros((5, k))
    for g, j in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 0)]:
        gamma[g, j] = 2.0
    sigma = np.tile(np.array([0.5, 0.5, 0.5, 0.5, 1.0, 1.0]), (5, 1))
    offset = np.random.default_rng(seed).standard_normal((5, k))
    return Design(
        name="setting-b",
        kind="ordinal",
        z=np.repeat(levels, m_per_group),
        grid=levels,
        theta=np.array([0.3, 0.4, 0.5, 0.6, 0.7]),
        gamma=gamma,
        offset=offset,
        sigma=sigma,
    )


def setting_c(m_per_group: int = 1000, *, seed: int = DESIGN_SEED) -> Design:
    """Setting C (Appendix I.1): unordered categorical profile with group-varying specialists.

    Ten categories of ``m_per_group`` items; K = 6; in each category r_g in {1, 2} specialist
    signals are drawn uniformly without replacement, with gamma = 2 and sigma = 1/2 there and
    gamma = 0, sigma = 1 elsewhere; theta(g) ~ Uniform(0.25, 0.75) and a_k(g) ~ N(0, 1), all frozen
    by ``seed``.
    """
    rng = np.random.default_rng(seed)
    groups, k = 10, 6
    gamma = np.zeros((groups, k))
    sigma = np.ones((groups, k))
    for g in range(groups):
        count = int(rng.integers(1, 3))
        chosen = rng.choice(k, size=count, replace=False)
        gamma[g, chosen] = 2.0
        sigma[g, chosen] = 0.5
    theta = rng.uniform(0.25, 0.75, groups)
    offset = rng.standard_normal((groups, k))
    levels = np.arange(float(groups))
    return Design(
        name="setting-c",
        kind="categorical",
        z=np.repeat(levels, m_per_group),
        grid=levels,
        theta=theta,
        gamma=gamma,
        offset=offset,
        sigma=sigma,
    )


SPECIALIST_CENTERS = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
SPECIALIST_SIGN = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 0.0])


def continuous_parameters(
    z: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """theta, gamma, offset, sigma of the continuous specialist design (Appendix I.3) at ``z``.

    theta = 1/2; gamma_k(z) = 2 (1 - 5 |z - mu_k|)_+ at mu_k = (2k - 1) / 10 for k = 1..5 and
    gamma_6 = 0; sigma = (1/2, 1/2, 1/2, 1/2, 1/2, 1); a_k(z) = c_k sin(pi z) with
    c = (1, -1, 1, -1, 1, 0).
    """
    z = np.asarray(z, dtype=np.float64)
    gamma = np.zeros((z.size, 6))
    gamma[:, :5] = 2.0 * np.clip(1.0 - 5.0 * np.abs(z[:, None] - SPECIALIST_CENTERS), 0.0, None)
    sigma = np.tile(np.array([0.5, 0.5, 0.5, 0.5, 0.5, 1.0]), (z.size, 1))
    offset = SPECIALIST_SIGN * np.sin(np.pi * z)[:, None]
    theta = np.full(z.size, 0.5)
    return theta, gamma, offset, sigma


def specialist(m: int = 10_000) -> Design:
    """The continuous specialist design of Appendix I.3 on the grid {0.10, 0.15, ..., 0.90}.

    Z ~ Uniform[0, 1] is redrawn with every pool; theta(z) = 1/2 so the smoothing bias is zero.
    """
    grid = np.round(np.arange(0.10, 0.9001, 0.05), 10)
    theta, gamma, offset, sigma = continuous_parameters(grid)
    return Design(
        name="specialist",
        kind="continuous",
        z=np.zeros(m),
        grid=grid,
        theta=theta,
        gamma=gamma,
        offset=offset,
        sigma=sigma,
        random_z=True,
    )


DESIGNS: dict[str, Callable[[], Design]] = {
    "setting-b": setting_b,
    "setting-c": setting_c,
    "specialist": specialist,
}
