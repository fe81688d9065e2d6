"""Variance of the three-level cascade estimator and when its middle level pays for itself.

With the decomposition theta_hat - Ybar_T = A + B of :mod:`slicewise.estimators.cascade`
(A: L drawn from R, B: R drawn from T, uncorrelated), u = Y - b'V, v = Y - c'S and local labeled
fractions pi_{L|R}(z) = sum_L k / sum_R k, pi_{R|T}(z) = sum_R k / sum_T k:

.. math::

    \\widehat V_{pool}(z) = \\underbrace{(1 - \\pi_{L|R})\\,\\kappa_b
        \\sum_{i\\in L} w_{i,L}^2 (u_i - \\bar u_L)^2}_{\\mathrm{Var}(A)}
      + \\underbrace{(1 - \\pi_{R|T})\\,\\pi_{L|R}\\,\\kappa_c
        \\sum_{i\\in L} w_{i,L}^2 (v_i - \\bar v_L)^2}_{\\mathrm{Var}(B)} .

Var(A) is the ratio-estimator variance of the mean of u over L as an estimate of its mean over R.
Var(B) is the same for v over R against T, (1 - pi_{R|T}) sum_R w_{i,R}^2 (v_i - vbar_R)^2, whose
sum over R is estimated from L by Horvitz-Thompson: sum_R w_R^2 (.)^2 ~ pi_{L|R} sum_L w_L^2 (.)^2
(since w_{i,R} = pi_{L|R} w_{i,L}). kappa_b and kappa_c are the small-sample factors of
:mod:`slicewise.inference.variance` for the two fitted coefficients. The population target adds
pi_{L|T} kappa_0 sum_L w_L^2 (Y - Ybar_L)^2 as for LACE. Checks: with R = T the second term
vanishes and the first is LACE on (X, S); with L = R the first vanishes and the second is LACE on S
with |R| labels; with b = (0, c) the sum is (1 - pi_{L|T}) kappa Q(c), the LACE variance.

In superpopulation terms, with sigma^2 = Var(Y | z) and local sizes n <= N_R <= M,

.. math::

    V \\approx \\sigma^2\\Big[(1 - R^2_{Y\\mid XS})\\Big(\\frac1n - \\frac1{N_R}\\Big)
        + (1 - R^2_{Y\\mid S})\\Big(\\frac1{N_R} - \\frac1M\\Big)\\Big].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray
from ..estimators.cascade import CascadeMoments
from ..estimators.centered import CoefficientFit
from .variance import small_sample_factor


def _fraction(num: FloatArray, den: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(num / np.where(den > 0, den, np.nan), 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class CascadeVariance:
    """Variance parts and diagnostics of the cascade per grid point.

    Attributes
    ----------
    pool, population : ndarray (G,)
    level1, level2 : ndarray (G,)
        Var(A) and Var(B) of the module formula.
    fraction_lr, fraction_rt : ndarray (G,)
        pi_{L|R}(z) and pi_{R|T}(z).
    r2_y_xs, r2_y_s : ndarray (G,)
        Estimated local R^2 of Y on (X, S) and on S (labeled weights; can be negative).
    """

    pool: FloatArray
    population: FloatArray
    level1: FloatArray
    level2: FloatArray
    fraction_lr: FloatArray
    fraction_rt: FloatArray
    r2_y_xs: FloatArray
    r2_y_s: FloatArray


def cascade_variance(
    moments: CascadeMoments, b: CoefficientFit, c: CoefficientFit
) -> CascadeVariance:
    """Pool- and population-target variances of the cascade (module formula)."""
    lab_v, lab_s = moments.lab_v, moments.lab_s
    frac_lr = _fraction(lab_v.mass, moments.pool_r.mass)
    frac_rt = _fraction(moments.pool_r.mass, moments.pool_t.mass)
    frac_lt = _fraction(lab_s.mass, moments.pool_t.mass)
    q_b = lab_v.quadratic(b.coef, squared=True)
    q_c = lab_s.quadratic(c.coef, squared=True)
    zero = np.zeros((c.coef.shape[0], 0))
    q_0 = lab_s.quadratic(np.zeros_like(c.coef), squared=True)
    level1 = (1.0 - frac_lr) * small_sample_factor(lab_v, b) * q_b
    level2 = (1.0 - frac_rt) * frac_lr * small_sample_factor(lab_s, c) * q_c
    pool = np.maximum(level1 + level2, 0.0)
    kappa0 = small_sample_factor(lab_s, CoefficientFit.fixed(zero))
    population = pool + frac_lt * kappa0 * q_0
    var_y_v = lab_v.quadratic(np.zeros_like(b.coef), squared=False)
    var_y_s = lab_s.quadratic(np.zeros_like(c.coef), squared=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2_xs = np.where(
            var_y_v > 0,
            1.0 - lab_v.quadratic(b.coef, squared=False) / np.where(var_y_v > 0, var_y_v, 1.0),
            0.0,
        )
        r2_s = np.where(
            var_y_s > 0,
            1.0 - lab_s.quadratic(c.coef, squared=False) / np.where(var_y_s > 0, var_y_s, 1.0),
            0.0,
        )
    return CascadeVariance(
        pool=pool,
        population=np.maximum(population, 0.0),
        level1=level1,
        level2=level2,
        fraction_lr=frac_lr,
        fraction_rt=frac_rt,
        r2_y_xs=r2_xs,
        r2_y_s=r2_s,
    )


@dataclass(frozen=True, eq=False)
class BreakEven:
    """Variance-per-cost comparison of the cascade with two-level LACE (arrays broadcast).

    Attributes
    ----------
    cost_ratio : ndarray
        rho = cost of one rater call / cost of one gold label.
    break_even : ndarray
        rho*: the cascade (with its optimal allocation) beats LACE on Y ~ S at equal budget iff
        rho < rho*.
    rater_per_label : ndarray
        Optimal N_R / n (rater calls per gold label) at rho; 1 when the rater is not worth it.
    efficiency : ndarray
        Variance of LACE / variance of the cascade at equal budget (> 1: the middle level pays).
    """

    cost_ratio: FloatArray
    break_even: FloatArray
    rater_per_label: FloatArray
    efficiency: FloatArray


def break_even(r2_y_xs: FloatArray, r2_y_s: FloatArray, cost_ratio: FloatArray) -> BreakEven:
    """Break-even cost ratio of the middle level (large-pool approximation; see the Notes).

    Notes
    -----
    Budget B = n c_Y + N_R c_X (S is free; the labeled items also need X). Ignoring the common
    1/M terms, a = 1 - R^2_{Y|XS}, d = R^2_{Y|XS} - R^2_{Y|S} >= 0, rho = c_X / c_Y:

    * LACE (Y on S, n = B / c_Y): V B / (sigma^2 c_Y) = a + d.
    * Cascade: V = sigma^2 (a / n + d / N_R); minimising under the budget gives
      N_R / n = sqrt(d / (a rho)) and V B / (sigma^2 c_Y) = (sqrt(a) + sqrt(d rho))^2, valid when
      N_R >= n, i.e. d >= a rho (otherwise the rater is not worth buying beyond L, and V B =
      (a + d)(1 + rho)).

    The cascade wins iff (sqrt(a) + sqrt(d rho))^2 < a + d, i.e.

    .. math::

        \\rho < \\rho^* = \\frac{\\sqrt{1 - R^2_{Y\\mid S}} - \\sqrt{1 - R^2_{Y\\mid XS}}}
                              {\\sqrt{1 - R^2_{Y\\mid S}} + \\sqrt{1 - R^2_{Y\\mid XS}}} ,

    and at rho* the optimal N_R / n exceeds 1, so the constraint never binds below break-even.
    rho* < 1 always (a rater costing as much as a gold label never pays); a perfect rater
    (R^2_{Y|XS} = 1) gives rho* = 1, a rater adding nothing beyond S gives rho* = 0. R^2 of X on S
    does not enter: what X adds beyond S is already d.
    """
    r_xs = np.clip(np.asarray(r2_y_xs, dtype=np.float64), 0.0, 1.0)
    r_s = np.minimum(np.clip(np.asarray(r2_y_s, dtype=np.float64), 0.0, 1.0), r_xs)
    rho = np.asarray(cost_ratio, dtype=np.float64)
    a = 1.0 - r_xs
    d = r_xs - r_s
    big, small = np.sqrt(a + d), np.sqrt(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho_star = np.where(big > 0, (big - small) / np.where(big > 0, big + small, 1.0), 0.0)
        ratio = np.where(a * rho > 0, np.sqrt(d / np.where(a * rho > 0, a * rho, 1.0)), np.inf)
    worth = ratio >= 1.0
    vb_cascade = np.where(worth, (small + np.sqrt(d * rho)) ** 2, (a + d) * (1.0 + rho))
    with np.errstate(divide="ignore", invalid="ignore"):
        efficiency = np.where(
            vb_cascade > 0, (a + d) / np.where(vb_cascade > 0, vb_cascade, 1.0), np.inf
        )
    return BreakEven(
        cost_ratio=np.asarray(rho, dtype=np.float64),
        break_even=np.asarray(rho_star, dtype=np.float64),
        rater_per_label=np.asarray(np.where(worth, ratio, 1.0), dtype=np.float64),
        efficiency=np.asarray(np.where(a + d > 0, efficiency, 1.0), dtype=np.float64),
    )
