"""Variances of centered control-variate profiles from their linear representation.

Write e_i(z) = Y_i - c(z)' X_i. For a coefficient that is fixed or estimated consistently (first-order
adaptivity, LACE paper Theorem 2) the estimator is, to first order,

.. math::

    \\hat\\theta(z) - \\theta_T(z) = \\sum_{i\\in L} w_{i,L}(z) e_i - \\sum_{i\\in T} w_{i,T}(z) e_i ,

a ratio (Hajek) estimator of the local pool mean of e under simple random sampling of L from T.

**Pool target** theta_T(z) = sum_T w_{i,T}(z) Y_i (randomness only from which items were labeled):

.. math::

    \\widehat{V}_{pool}(z) = (1 - \\pi(z))\\, \\kappa(z) \\sum_{i\\in L} w_{i,L}(z)^2
                            \\{e_i - \\bar e_L(z)\\}^2 ,

with the local labeled fraction pi(z) = sum_L k_i(z) / sum_T k_i(z) as finite-population correction
(n_g / M_g for groups) and the small-sample factor

.. math::

    \\kappa(z) = 1 / \\Big[1 - \\textstyle\\sum_L w_i^2
        - \\{2\\,\\mathrm{df}\\sum_L w_i^2 w^b_i - \\mathrm{df}_2 \\sum_L w_i^2 \\sum_L (w^b_i)^2\\}
          / \\sum_L w_i^2\\Big],

which removes the downward bias of the residual sum of squares: 1 - sum w^2 is the usual
n / (n - 1) for the centering, and the df terms account for a coefficient fitted on the same labels
with weights w^b (df = tr H, df_2 = tr H^2 of the ridge hat matrix; both 0 for naive and oracle). For
equal weights over n_g items it is n_g / (n_g - 1 - 2 df + df_2), the classical residual degrees of
freedom.

**Population target** theta(z) = E[Y | Z = z] adds the pool's own sampling, which is uncorrelated with
the label-draw error:

.. math::

    \\widehat{V}_{pop}(z) = \\widehat{V}_{pool}(z)
        + \\frac{1}{\\pi(z)} \\sum_{i\\in L} w_{i,T}(z)^2 \\{Y_i - \\bar Y_L(z)\\}^2 / (1 - \\textstyle\\sum_L w_i^2),

the Horvitz-Thompson estimate of sum_T w_{i,T}^2 Var(Y | Z_i); since w_{i,T} = pi(z) w_{i,L} this is
pi(z) sum_L w_{i,L}^2 (Y_i - Ybar_L)^2 / (1 - sum w^2). For LACE the two parts reproduce the paper's
gain formula: AVar ratio to naive = 1 - (1 - pi) R^2(z).

**Design weights.** When the labeled items carry known inclusion probabilities pi_i (Poisson or
any unequal-probability sampling of L from T), the weights are the Hajek weights
w_{i,L}(z) = (k_i / pi_i) / sum_L (k_l / pi_l) (:class:`~slicewise.moments.sums.LabeledMoments`)
and the same linearization gives the design variance of a Hajek mean of e. Its with-replacement
(Hansen-Hurwitz) approximation is sum_L w_i^2 (e_i - ebar)^2; the finite-population correction of
Poisson sampling weights item i by (1 - pi_i). We calibrate the probabilities to the realized
local sample, pi*_i(z) = g(z) pi_i with g(z) = sum_L (k_i / pi_i) / sum_T k_i (the Horvitz-Thompson
estimate of the pool kernel mass over the pool kernel mass, 1 in expectation), exactly as the
unweighted formula conditions on the realized local count:

.. math::

    \\widehat{V}_{pool}(z) = \\kappa(z) \\sum_{i\\in L} \\{1 - g(z)\\pi_i\\}\\, w_{i,L}(z)^2
                            \\{e_i - \\bar e_L(z)\\}^2 ,\\qquad
    \\widehat{V}_{pop}(z) = \\widehat{V}_{pool}(z) + g(z) \\sum_{i\\in L} \\pi_i w_{i,L}(z)^2
                            \\{Y_i - \\bar Y_L(z)\\}^2 / (1 - \\textstyle\\sum_L w_i^2),

the second term being the Horvitz-Thompson estimate of sum_T w_{i,T}^2 Var(Y | Z_i) with the
calibrated probabilities. In the finite-population factor g(z) is capped at 1 / max pi_i over the
labeled items with positive kernel weight, so no factor 1 - g(z) pi_i is negative: where g > 1 and
some items were certain (pi_i = 1), the uncapped factors made the sum negative and the variance
was clipped to zero while the labels varied (measured: a PSN-IRT benchmark of 23 items after
adaptive batches reported se = 0 in a third of the draws, covering 0.62; an exactly enumerable
design in tests/core/test_design_variance.py covered 0.5). With all pi_i equal, g(z) pi_i is the local labeled fraction pi(z) and
both formulas are the unweighted ones above. kappa(z), the degrees of freedom and the floor use the
design weights (n_eff,L is then Kish's effective sample size).

**Small samples.** Intervals use Student t quantiles with df = nu(z) - 1 - df_coef(z) degrees of
freedom, nu(z) = (sum_L w^2)^2 / sum_L w^4 the Satterthwaite effective size of the weighted
residual sum of squares (n for equal weights; below n_eff,L for kernel weights) -- the residual
degrees of freedom of a weighted mean with a fitted coefficient; normal quantiles in the limit.
Where every labeled item of a neighbourhood has the same label the residual variance is zero, or
fewer than one effective labeled item lies on the minority side; there it is floored at the
Agresti-Coull value (:func:`degenerate_floor`); where it holds fewer than 5, the design effect of
the weighted mean is truncated at 1 (:func:`design_effect_factor`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import BoolArray, FloatArray
from ..estimators.centered import CoefficientFit, residual_floor
from ..moments.sums import LabeledMoments, PoolMoments


@dataclass(frozen=True, eq=False)
class LocalVariance:
    """Variance estimates and diagnostics per grid point.

    Attributes
    ----------
    pool, population : ndarray of shape (G,)
        Variance of the estimate for the pool and the population target (NaN where the labeled
        neighbourhood is too small for a variance estimate).
    fraction : ndarray of shape (G,)
        Local labeled fraction pi(z).
    r2 : ndarray of shape (G,)
        Estimated local R^2(z) = 1 - Var_w(e) / Var_w(Y) under the labeled weights; it can be
        negative when the adjustment adds variance.
    gain : ndarray of shape (G,)
        Predicted gain 1 / (1 - (1 - pi(z)) R^2(z)) over the labels-only smoother.
    df : ndarray of shape (G,)
        Degrees of freedom of the residual variance, n_eff,L(z) - 1 - df_coef(z) (at least 1),
        for Student-t intervals.
    floored : ndarray of bool, shape (G,)
        Where the variance is the residual floor
        (:func:`~slicewise.estimators.centered.residual_floor`), not the residuals' own.
    """

    pool: FloatArray
    population: FloatArray
    fraction: FloatArray
    r2: FloatArray
    gain: FloatArray
    df: FloatArray
    floored: BoolArray


def _inverse_positive(denominator: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, 1.0 / np.where(denominator > 0, denominator, 1.0), np.nan)


def small_sample_factor(lab: LabeledMoments, fit: CoefficientFit) -> FloatArray:
    """kappa(z) of the module notes for a coefficient fitted on ``lab`` (NaN where it is undefined)."""
    sum_w2 = lab.sum_w2
    with np.errstate(divide="ignore", invalid="ignore"):
        df_term = np.where(
            sum_w2 > 0,
            (2.0 * fit.df * lab.sum_w2_wb - fit.df2 * sum_w2 * lab.sum_wb2)
            / np.where(sum_w2 > 0, sum_w2, 1.0),
            0.0,
        )
    return _inverse_positive(1.0 - sum_w2 - df_term)


def local_variance(
    pool: PoolMoments,
    lab: LabeledMoments,
    fit: CoefficientFit,
    *,
    given_factor: FloatArray | None = None,
) -> LocalVariance:
    """Variances and diagnostics of theta_hat(z) = Ybar_L - c'(Xbar_L - Xbar_T); see module notes.

    ``given_factor`` (shape (G,), at least 1) multiplies the residual variance: the variance given
    the labeled set of :func:`slicewise.inference.calibration.given_set_factor`.
    """
    coef = fit.coef
    g = coef.shape[0]
    zero = np.zeros((g, coef.shape[1]))
    sample_mass = lab.mass if lab.sample_mass is None else lab.sample_mass
    with np.errstate(invalid="ignore"):
        fraction = np.clip(sample_mass / np.where(pool.mass > 0, pool.mass, np.nan), 0.0, 1.0)
    sum_w2 = lab.sum_w2
    kappa = small_sample_factor(lab, fit)
    kappa_naive = _inverse_positive(1.0 - sum_w2)
    resid_sq = lab.quadratic(coef, squared=True)
    if given_factor is not None:
        resid_sq = resid_sq * given_factor
    label_sq = lab.quadratic(zero, squared=True)
    var_e = lab.quadratic(coef, squared=False)
    var_y = lab.quadratic(zero, squared=False)
    floor = degenerate_floor(lab, var_y)
    factor = design_effect_factor(lab, var_y, label_sq)
    if lab.second_sq_pi is None:
        naive_pool = (1.0 - fraction) * kappa_naive * label_sq * factor
        var_pool = np.maximum(
            (1.0 - fraction) * kappa * resid_sq * factor, (1.0 - fraction) * floor
        )
        var_pop = var_pool + fraction * np.maximum(kappa_naive * label_sq * factor, floor)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            calibration = lab.mass / np.where(pool.mass > 0, pool.mass, np.nan)
            pi_max = np.ones_like(calibration) if lab.pi_max is None else lab.pi_max
            bound = 1.0 / np.where(pi_max > 0, pi_max, np.nan)
        fpc_calibration = np.fmin(calibration, bound)
        design_form = lab.design_quadratic(coef)
        if given_factor is not None:
            design_form = design_form * given_factor
        design_sq = np.maximum(resid_sq - fpc_calibration * design_form, 0.0)
        naive_sq = np.maximum(label_sq - fpc_calibration * lab.design_quadratic(zero), 0.0)
        naive_pool = kappa_naive * naive_sq * factor
        var_pool = np.maximum(kappa * design_sq * factor, (1.0 - fraction) * floor)
        label_pi = calibration * lab.design_quadratic(zero)
        var_pop = var_pool + np.maximum(kappa_naive * label_pi * factor, fraction * floor)
    lift = np.fmax(residual_floor(naive_pool, lab.n_eff) - var_pool, 0.0)
    var_pool, var_pop = var_pool + lift, var_pop + lift
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(var_y > 0, 1.0 - var_e / np.where(var_y > 0, var_y, 1.0), 0.0)
        gain = 1.0 / (1.0 - (1.0 - fraction) * r2)
    return LocalVariance(
        pool=np.maximum(var_pool, 0.0),
        population=np.maximum(var_pop, 0.0),
        fraction=fraction,
        r2=r2,
        gain=gain,
        df=np.maximum(lab.df_effective - 1.0 - fit.df, 1.0),
        floored=lift > 0.0,
    )


def plus_two_variance(n_eff: FloatArray, mean: FloatArray) -> FloatArray:
    """The "plus two" (Agresti-Coull) variance of a mean of labels in [0, 1] from n_eff items:
    p(1 - p) / (n_eff + 2) with p = (n_eff mean + 1) / (n_eff + 2), one pseudo-success and one
    pseudo-failure added."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (n_eff * mean + 1.0) / (n_eff + 2.0)
        return np.asarray(p * (1.0 - p) / (n_eff + 2.0), dtype=np.float64)


def degenerate_floor(lab: LabeledMoments, var_y: FloatArray) -> FloatArray:
    """Variance floor where the labels of a neighbourhood cannot show their own variance.

    That is where every labeled item has the same label (the residual variance is exactly zero
    and a Wald interval would have zero width), and also where fewer than one effective labeled
    item lies on the minority side, n_eff,L min(Ybar, 1 - Ybar) < 1: labels in [0, 1] piled at
    a boundary, with the few items on the other side far out in the kernel's tail. There the
    sample variance collapses toward zero although the mean is uncertain (measured: PSN-IRT by
    difficulty, slices whose truth is about 0.99, gold-only and auto intervals covered 0.31 at
    250 labels). We floor the per-neighbourhood variance of the labeled mean at the Agresti-Coull
    value (:func:`plus_two_variance`); elsewhere the floor is 0. A variance that cannot be
    estimated at all (too few labels) stays NaN: ``np.maximum`` propagates it.
    """
    n_eff = lab.n_eff
    mean = lab.mean[:, 1]
    value = plus_two_variance(n_eff, mean)
    with np.errstate(invalid="ignore"):
        minority = n_eff * np.minimum(mean, 1.0 - mean)
    degenerate = (var_y <= 1e-12) | (minority < 1.0)
    return np.where((n_eff > 0) & np.isfinite(value) & degenerate, value, 0.0)


#: Below this many effective labeled items on the minority side, n_eff,L min(Ybar, 1 - Ybar), the
#: design effect of a kernel-weighted mean is truncated at 1 (:func:`design_effect_factor`): the
#: usual "n p >= 5" condition of the normal approximation.
MIN_MINORITY = 5.0


def design_effect_factor(
    lab: LabeledMoments, var_y: FloatArray, label_sq: FloatArray
) -> FloatArray:
    """Factor (>= 1) on a variance where a few labels on the minority side carry it.

    Where the minority side holds at least one but fewer than ``MIN_MINORITY`` (5) effective
    labeled items, the weighted variance sum_L w_i^2 (Y_i - Ybar)^2 rests on those few items and
    on where they fall in the kernel: items in its tail (small w_i) make it small exactly when
    they make the mean close to the boundary, so the standard error and the error are strongly
    correlated (measured: PSN-IRT model_11 by difficulty at z = 1.0, truth 0.986, 2000 labels,
    about 3 effective labeled failures: correlation -0.88 over 200 draws; the gold-only
    Wilson-type interval missed 15.5% of them, 12.5% from below). There the design effect of the
    labeled mean, its variance over Kish's homoscedastic value,

    .. math::

        d(z) = \\frac{\\sum_L w_i^2 (Y_i - \\bar Y_L)^2 / (1 - \\sum_L w_i^2)}
                    {\\sum_L w_i (Y_i - \\bar Y_L)^2 / (n_{eff,L} - 1)},

    is truncated at 1, as Korn and Graubard (1998) truncate the design effect of a survey
    proportion where its estimate is unstable: the factor is max(1, 1 / d(z)) there and 1
    elsewhere. Every variance of the neighbourhood (the gold-only mean's, and a control
    variate's, whose gain over it is kept) is multiplied by it. Equal weights give d = 1
    exactly, so a categorical slice is unchanged.

    References
    ----------
    Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data. *Survey Methodology* 24,
    193-201.
    """
    n_eff = lab.n_eff
    mean = lab.mean[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        minority = n_eff * np.minimum(mean, 1.0 - mean)
        kish = var_y / np.where(n_eff > 1.0, n_eff - 1.0, np.nan)
        naive = label_sq / (1.0 - lab.sum_w2)
        ratio = kish / np.where(naive > 0, naive, np.nan)
    few = (minority >= 1.0) & (minority < MIN_MINORITY) & (var_y > 1e-12) & np.isfinite(ratio)
    return np.where(few, np.maximum(ratio, 1.0), 1.0)
