"""Fay-Herriot smoothing of a profile's direct estimates on disjoint domains.

For a categorical or exact-level ordinal profile the grid points are disjoint domains, and a
centered control variate gives each one a direct estimate theta_hat_g with sampling variance
psi_g. Small domains are noisy; the area-level (Fay-Herriot) model

.. math::

    \\hat\\theta_g = \\theta_g + e_g,\\; e_g \\sim N(0, \\psi_g), \\qquad
    \\theta_g = x_g^\\top\\beta + v_g,\\; v_g \\sim N(0, \\sigma_v^2),

shrinks each direct estimate toward a regression on a domain covariate, with weight
gamma_g = sigma_v^2 / (sigma_v^2 + psi_g) on its own estimate: large domains keep their direct
estimate, small ones lean on the regression (the prediction-powered smoothing of Kawano, Li and
Parker 2026, applied to LACE's direct estimates). The model is fitted as in ``sw.domains``, by
:func:`slicewise.smoothing.area.fit_area_model`, under the same names: ``smooth='pp-s'`` (and
``auto``'s default, ``smooth='auto'``) integrates exactly over sigma_v
(:mod:`slicewise.smoothing.bayes`; flat prior on beta, half-Cauchy(0, 0.25) on sigma_v);
``smooth='fh'`` plugs in the REML estimate of sigma_v (EBLUP, :mod:`slicewise.smoothing.fay_herriot`).

Domain covariate: x_g = (1, Pbar_T(g)), the pool mean over domain g of a logistic prediction of Y
from the signals alone, fitted on all of L without Z (a synthetic estimate that depends on a
domain's own labels only through coefficients pooled over all domains).

Per-slice validity: the smoothed point is reported only for slices with fewer than 10 labels,
with an interval that contains the slice's own direct interval; see
:mod:`slicewise.smoothing.guard` (measured there: without it, the largest PSN-IRT
benchmark was biased by 8 Monte-Carlo standard errors).

Sampling variances: psi_g is the method's variance for the target, floored by a generalised
variance function psi_g >= (1 - pi_g) s^2 sum_L w_ig^2 with s^2 the pooled per-item residual
variance, because a small domain whose few labels agree reports a variance of zero, which would
otherwise exempt exactly the noisiest domains from smoothing.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._typing import BoolArray, FloatArray
from ..estimators.predictors import fit_logistic
from ..inference.variance import plus_two_variance
from ..locality.weights import BlockKernel
from ..moments.kernel_ops import (
    column_sums,
    iter_blocks,
    scale_rows,
    square,
    square_column_sums,
    take_rows,
)
from ..results import critical_value
from ..smoothing.area import MODELS, Model, borrowed, fit_area_model
from ..smoothing.guard import PRECISE_LABELS, guard
from ..smoothing.linear_mixed import AreaModel
from .base import LabeledSet, MethodFit, PoolContext, labeled_sizes
from .options import MethodOptions

#: The values of ``profile(smooth=...)``: ``'auto'`` smooths the ``auto`` method only, with
#: ``'pp-s'``; a model name smooths any method with a variance by that model; ``'none'`` never.
SMOOTH_CHOICES: tuple[str, ...] = ("auto", *MODELS, "none")


#: How the notes name each model.
MODEL_WORDS: dict[str, str] = {
    "fh": "a regression across slices with its spread estimated from the data, smooth='fh'",
    "pp-s": "a regression across slices that averages over its uncertain spread, smooth='pp-s'",
}


def smoothing_model(smooth: str) -> Model:
    """The area-level model of a ``smooth`` option (``'auto'`` uses ``'pp-s'``)."""
    return "fh" if smooth == "fh" else "pp-s"


def disjoint_domains(ctx: PoolContext) -> bool:
    """Whether every pool item has weight in at most one grid point (independent estimates)."""

    def compute() -> bool:
        kernel = ctx.pool_kernel(1.0)
        if isinstance(kernel, np.ndarray | BlockKernel):
            return all(
                bool(np.all((block > 0).sum(axis=1) <= 1)) for _, block in iter_blocks(kernel)
            )
        return bool(np.all(np.diff(kernel.indptr) <= 1))

    return ctx.cached(("disjoint",), compute)


def synthetic_covariate(
    ctx: PoolContext, labeled: LabeledSet, options: MethodOptions
) -> FloatArray:
    """Pool mean per grid point of a Z-free logistic prediction of Y from the signals, shape (G,).

    The prediction is fitted on all of L without the profile, so a domain's own labels enter it
    only through coefficients pooled over all domains (a synthetic estimate, as the domain means of
    auxiliary predictions in prediction-powered smoothing). A hierarchical covariate with level
    intercepts was also tried: on the PSN-IRT benchmark profiles it lowered the geometric-mean
    relative efficiency (2.7 against 3.4; docs/results/auto.md), because it leans on the same
    labels as the direct estimate it is meant to stabilise.
    """

    def compute() -> FloatArray:
        model = fit_logistic(ctx.features[labeled.index], labeled.y, c=options.C)
        mass = ctx.kernel_sums("none", np.zeros((ctx.n_pool, 0))).mass
        sums = ctx.prediction_sums(model)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(mass > 0, sums / np.where(mass > 0, mass, 1.0), np.nan)

    return labeled.memo(("synthetic covariate", ctx, options.C), compute)


def _variance_floor(ctx: PoolContext, labeled: LabeledSet, variance: FloatArray) -> FloatArray:
    """Generalised-variance-function floor (1 - pi_g) s^2 sum_L w_ig^2 (see module notes).

    With inclusion probabilities the weights are the design (Hajek) weights and (1 - pi_g)
    sum_L w^2 is the design factor sum_L (1 - g pi_i) w_i^2 of :mod:`slicewise.inference.variance`.
    """
    rows = take_rows(ctx.pool_kernel(1.0), labeled.index)
    pool_mass = ctx.kernel_sums("none", np.zeros((ctx.n_pool, 0))).mass
    if labeled.pi is not None:
        design = scale_rows(rows, 1.0 / labeled.pi)
        mass_d = column_sums(design)
        squares = square(design)
        positive = (mass_d > 0) & (pool_mass > 0)
        scale = np.zeros_like(mass_d)
        calibration = mass_d[positive] / pool_mass[positive]
        scale[positive] = (
            square_column_sums(design)[positive]
            - calibration * column_sums(scale_rows(squares, labeled.pi))[positive]
        ) / mass_d[positive] ** 2
        return _per_item_floor(variance, positive, np.maximum(scale, 0.0))
    mass_l = column_sums(rows)
    sum_w2 = np.zeros_like(mass_l)
    positive = mass_l > 0
    sum_w2[positive] = square_column_sums(rows)[positive] / mass_l[positive] ** 2
    fraction = np.zeros_like(mass_l)
    fraction[positive] = np.clip(mass_l[positive] / pool_mass[positive], 0.0, 1.0)
    scale = (1.0 - fraction) * sum_w2
    return _per_item_floor(variance, positive, scale)


def _per_item_floor(variance: FloatArray, positive: BoolArray, scale: FloatArray) -> FloatArray:
    """s^2 x scale with s^2 = sum variance / sum scale over the usable domains."""
    ok = positive & np.isfinite(variance) & (scale > 0)
    if not ok.any():
        return np.full_like(variance, np.nan)
    per_item = float(np.sum(variance[ok]) / np.sum(scale[ok]))
    return np.asarray(per_item * scale, dtype=np.float64)


def _floored(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, variance: FloatArray
) -> FloatArray:
    psi = np.fmax(variance, _variance_floor(ctx, labeled, variance))
    return np.where(np.isfinite(fit.estimate), psi, np.nan)


def _fh(
    labeled: LabeledSet,
    estimate: FloatArray,
    psi: FloatArray,
    covariate: FloatArray,
    model: Model,
) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """FH estimate, standard error and shrinkage weight on the domains with a direct estimate.

    Kept for the labeled set by its inputs: ``auto`` fits the model to naive's estimates for its
    criterion, and again when naive is its choice.
    """
    key = ("fay-herriot", model, estimate.tobytes(), psi.tobytes(), covariate.tobytes())
    return labeled.memo(key, lambda: _fh_fit(estimate, psi, covariate, model))


def _fh_fit(
    estimate: FloatArray, psi: FloatArray, covariate: FloatArray, name: Model
) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    observed = np.isfinite(estimate) & np.isfinite(psi) & (psi > 0) & np.isfinite(covariate)
    if observed.sum() < 4:
        return None
    columns = [np.ones(int(observed.sum()))]
    if np.ptp(covariate[observed]) > 0:
        columns.append(covariate[observed])
    model = AreaModel(
        y=estimate[observed],
        psi=psi[observed],
        x=np.column_stack(columns),
        z=np.zeros((int(observed.sum()), 0)),
        column_level=np.zeros(0, dtype=np.intp),
        level_names=(),
    )
    fit = fit_area_model(model, name)
    mean = np.full(estimate.shape, np.nan)
    sd = np.full(estimate.shape, np.nan)
    weight = np.full(estimate.shape, np.nan)
    mean[observed] = fit.estimate
    sd[observed] = fit.se
    weight[observed] = fit.weight
    return mean, sd, weight


def shrinkage_weights(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, options: MethodOptions
) -> FloatArray | None:
    """FH shrinkage weight gamma_g of every domain for ``fit``'s pool-target estimates.

    None when the model cannot be fitted (fewer than four domains with a direct estimate).
    """
    covariate = synthetic_covariate(ctx, labeled, options)
    psi = _floored(ctx, labeled, fit, fit.var_pool)
    result = _fh(labeled, fit.estimate, psi, covariate, smoothing_model(options.smooth))
    return None if result is None else result[2]


def smooth_fit(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, options: MethodOptions
) -> MethodFit:
    """Fay-Herriot smoothing of a direct profile on disjoint domains (see module notes).

    Returns ``fit`` unchanged, with a note saying why, when the profile's grid points are not
    disjoint domains, fewer than four domains have a direct estimate with a variance, or the
    method has no variance formula.
    """
    if not disjoint_domains(ctx):
        return replace(
            fit,
            notes=(*fit.notes, "Not smoothed: the grid points share items (kernel weights)."),
        )
    if not np.any(np.isfinite(fit.var_pool)):
        return replace(fit, notes=(*fit.notes, "Not smoothed: the method has no variance."))
    covariate = synthetic_covariate(ctx, labeled, options)
    model = smoothing_model(options.smooth)
    pool_psi = _floored(ctx, labeled, fit, fit.var_pool)
    pop_psi = _floored(ctx, labeled, fit, fit.var_population)
    pool_fh = _fh(labeled, fit.estimate, pool_psi, covariate, model)
    pop_fh = _fh(labeled, fit.estimate, pop_psi, covariate, model)
    if pool_fh is None or pop_fh is None:
        return replace(
            fit,
            notes=(*fit.notes, "Not smoothed: fewer than four domains have a direct estimate."),
        )
    mean, sd_pool, weight = pool_fh
    sd_pop = pop_fh[1]
    n_lab, fraction = labeled_sizes(ctx, labeled)
    critical = critical_value(0.95, fit.df)  # for flagging disagreement only
    se_pool, se_pop = _direct_se(fit, n_lab, fraction)
    pool_guard = guard(fit.estimate, se_pool, mean, sd_pool, n_lab, critical)
    pop_guard = guard(fit.estimate, se_pop, mean, sd_pop, n_lab, critical)
    smoothed = pool_guard.smoothed
    leans = borrowed(weight, smoothed, pool_guard.model_based)
    labels = list(ctx.locality.labels)
    if smoothed.any():
        note = (
            f"{int(smoothed.sum())} of {int(np.isfinite(weight).sum())} slices have fewer than "
            f"{PRECISE_LABELS:g} labels and report an estimate smoothed toward the others "
            f"({MODEL_WORDS[model]} on the pool mean of a prediction from the signals); their "
            "intervals are widened by the distance to their own direct estimate, so that they "
            "contain the direct interval. Slices with more labels keep their direct estimate."
        )
    else:
        note = (
            f"Every slice has at least {PRECISE_LABELS:g} labels, so every slice keeps its direct "
            "estimate (no smoothing)."
        )
    notes = [note]
    if pool_guard.disagree.any():
        names = ", ".join(str(labels[i]) for i in np.flatnonzero(pool_guard.disagree))
        notes.append(
            f"The smoothed and the direct estimates disagree (beyond the direct interval) in "
            f"{int(pool_guard.disagree.sum())} slice(s): {names}. The smoothing model does not fit "
            "them; their intervals are wide to stay valid. Worth a look."
        )
    plus_two = pool_guard.model_based | ~np.isfinite(fit.var_pool)  # normal intervals there
    df = None if fit.df is None else np.where(plus_two, np.nan, fit.df)
    return replace(
        fit,
        estimate=pool_guard.estimate,
        var_pool=pool_guard.se**2,
        var_population=pop_guard.se**2,
        borrowed=fit.borrowed | leans,
        df=df,
        bias_bound=pool_guard.bias_bound,
        params={
            **fit.params,
            "smoothing": "fay_herriot",
            "smoothing_model": model,
            "shrinkage_weight": weight.tolist(),
            "smoothed": smoothed.tolist(),
            "direct_estimate": fit.estimate.tolist(),
        },
        notes=(*fit.notes, *notes),
    )


def _direct_se(
    fit: MethodFit, n_lab: FloatArray, fraction: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Direct standard errors for the guard (pool and population target).

    A slice with a single label has no residual variance; there the plus-two (Agresti-Coull)
    variance of a proportion (:func:`~slicewise.inference.variance.plus_two_variance` at the direct
    estimate) stands in, times (1 - pi_g) for the pool target (0 when the slice's pool is fully
    labeled, whose direct estimate is exact).
    """
    plus_two = plus_two_variance(n_lab, np.clip(fit.estimate, 0.0, 1.0))
    fraction = np.clip(np.where(np.isfinite(fraction), fraction, 0.0), 0.0, 1.0)
    missing_pool = np.isfinite(fit.estimate) & ~np.isfinite(fit.var_pool)
    missing_pop = np.isfinite(fit.estimate) & ~np.isfinite(fit.var_population)
    var_pool = np.where(missing_pool, (1.0 - fraction) * plus_two, fit.var_pool)
    var_pop = np.where(missing_pop, plus_two, fit.var_population)
    return np.sqrt(var_pool), np.sqrt(var_pop)
