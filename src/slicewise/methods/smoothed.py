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

What each slice reports follows ``objective`` (:mod:`slicewise.smoothing.objective`): under
``'slice'`` (the default) a slice with at least 10 labels moves toward the model by at most 0.3
of its standard errors and a sparser one takes the model's estimate, every moved slice with an
interval that contains its own direct interval (without a limit, the largest PSN-IRT benchmark
was biased by 8 Monte-Carlo standard errors); under ``'ensemble'`` every slice reports the
model's estimate and standard error (the papers' estimator).

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
from ..smoothing.area import MODELS, Model
from ..smoothing.objective import (
    PRECISE_LABELS,
    PROMISES,
    TRANSLATION,
    Borrowing,
    Objective,
)
from ..smoothing.step import Smoothing, smooth
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


def _steps(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, options: MethodOptions
) -> tuple[Smoothing | None, Smoothing | None]:
    """The smoothing step with the pool and the population target's sampling variances.

    Kept for the labeled set by its inputs: ``auto`` smooths naive's estimates for its
    criterion, and again when naive is its choice.
    """
    covariate = synthetic_covariate(ctx, labeled, options)
    x = np.column_stack([np.ones_like(covariate), covariate])
    model = smoothing_model(options.smooth)
    n_lab, fraction = labeled_sizes(ctx, labeled)
    critical = critical_value(0.95, fit.df)  # for flagging disagreement only
    steps: list[Smoothing | None] = []
    for variance, se in zip(
        (fit.var_pool, fit.var_population), _direct_se(fit, n_lab, fraction), strict=True
    ):
        psi = _floored(ctx, labeled, fit, variance)
        key = ("smoothing", ctx, model, options.objective, fit.estimate.tobytes(), psi.tobytes())
        steps.append(
            labeled.memo(
                key,
                lambda psi=psi, se=se: smooth(  # type: ignore[misc]
                    fit.estimate,
                    se,
                    psi,
                    x,
                    n_lab,
                    model=model,
                    objective=options.objective,
                    critical=critical,
                ),
            )
        )
    return steps[0], steps[1]


def shrinkage_weights(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, options: MethodOptions
) -> FloatArray | None:
    """Share of each domain's reported estimate that is its own direct one, for ``fit``.

    None when the model cannot be fitted (too few domains with a direct estimate).
    """
    pool = _steps(ctx, labeled, fit, options)[0]
    return None if pool is None else pool.reported.own_weight


def smooth_fit(
    ctx: PoolContext, labeled: LabeledSet, fit: MethodFit, options: MethodOptions
) -> MethodFit:
    """Fay-Herriot smoothing of a direct profile on disjoint domains (see module notes).

    The one smoothing step of :func:`slicewise.smoothing.step.smooth`, once with the pool
    target's sampling variances (the point and its se) and once with the population target's
    (its se). Returns ``fit`` unchanged, with a note saying why, when the profile's grid points
    are not disjoint domains, too few domains have a direct estimate with a variance, or the
    method has no variance formula.
    """
    if not disjoint_domains(ctx):
        return replace(
            fit,
            notes=(*fit.notes, "Not smoothed: the grid points share items (kernel weights)."),
        )
    if not np.any(np.isfinite(fit.var_pool)):
        return replace(fit, notes=(*fit.notes, "Not smoothed: the method has no variance."))
    pool, population = _steps(ctx, labeled, fit, options)
    if pool is None or population is None:
        return replace(
            fit,
            notes=(*fit.notes, "Not smoothed: fewer than four domains have a direct estimate."),
        )
    reported = pool.reported
    model = pool.model
    notes = smoothing_notes(
        reported, pool.weight, list(ctx.locality.labels), model, options.objective
    )
    normal = reported.model_based | ~np.isfinite(fit.var_pool)  # normal intervals there
    df = None if fit.df is None else np.where(normal, np.nan, fit.df)
    return replace(
        fit,
        estimate=reported.estimate,
        var_pool=reported.se**2,
        var_population=population.reported.se**2,
        borrowed=fit.borrowed | reported.borrowed,
        df=df,
        bias_bound=reported.bias_bound,
        params={
            **fit.params,
            "smoothing": "fay_herriot",
            "smoothing_model": model,
            "objective": options.objective,
            "shrinkage_weight": pool.weight.tolist(),
            "own_weight": reported.own_weight.tolist(),
            "smoothed": reported.moved.tolist(),
            "direct_estimate": fit.estimate.tolist(),
            "direct_se": _direct_se(fit, *labeled_sizes(ctx, labeled))[0].tolist(),
            **robust_params(pool, population),
        },
        notes=(*fit.notes, *notes),
    )


def robust_params(pool: Smoothing, population: Smoothing) -> dict[str, list[float]]:
    """The robust empirical-Bayes interval's inputs per target (``ci(robust=True)``)."""
    return {
        "robust_m2": pool.robust_m2.tolist(),
        "robust_se_pool": pool.robust_se.tolist(),
        "robust_se_population": population.robust_se.tolist(),
    }


def smoothing_notes(
    reported: Borrowing,
    weight: FloatArray,
    labels: list[object],
    model: Model,
    objective: Objective,
) -> list[str]:
    """What the smoothing did and what it promises, in plain words."""
    fitted = int(np.isfinite(weight).sum())
    moved = int(reported.moved.sum())
    source = f"{MODEL_WORDS[model]} on the pool mean of a prediction from the signals"
    if objective == "ensemble":
        notes = [
            f"Every one of the {fitted} slices reports an estimate smoothed toward the others "
            f"({source}), with the model's standard error: {PROMISES['ensemble']}. "
            "res.ci(robust=True) gives intervals that cover on average whatever the spread of "
            "the slices (Armstrong, Kolesar and Plagborg-Moller 2022)."
        ]
    else:
        capped = int(reported.capped.sum())
        notes = [
            f"{moved} of {fitted} slices borrow from the others ({source}); "
            f"{PROMISES['slice']}: a slice with at least {PRECISE_LABELS:g} labels moves by at "
            f"most {TRANSLATION:g} of its standard errors ({capped} were held back), and every "
            "smoothed slice's interval is widened by its shift so that it contains the slice's "
            "own direct interval."
        ]
    if reported.disagree.any():
        names = ", ".join(str(labels[i]) for i in np.flatnonzero(reported.disagree))
        notes.append(
            f"The smoothing model and the direct estimates disagree (beyond the direct interval) "
            f"in {int(reported.disagree.sum())} slice(s): {names}. The model does not fit them; "
            "worth a look."
        )
    return notes


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
