"""Prediction-based methods of the LACE paper's comparison (Section 5.2).

=================== ================================================= ==========================
method              estimate                                          interval
=================== ================================================= ==========================
``plugin_judge``    sum_T w_T(z) p(S_judge), logistic fit on L        none (biased if the model
                                                                      is misspecified)
``plugin_multi``    sum_T w_T(z) p(Z, S), ridge-logistic fit on L     none (same reason)
``aug_plugin``      plug-in + sum_L w_L(z) (Y - p), p cross-fitted    control variate, c = 1
``scalar_pred_cv``  Ybar_L - eta(z) (Pbar_L - Pbar_T), P = p(S)       control variate, c = eta
=================== ================================================= ==========================

The augmented plug-in and scalar prediction CV are centered control variates on a single feature
column, the cross-fitted prediction P (:func:`slicewise.estimators.predictors.cross_fitted_predictions`),
so they reuse the engine: pool and labeled moments of P, a coefficient (fixed at 1, or the local
covariance-variance scalar), :func:`slicewise.methods.base.linear_fit` for the variance.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray
from ..estimators.centered import CoefficientFit, ridge_coefficient
from ..estimators.predictors import (
    cross_fitted_predictions,
    pool_predictions,
    profile_design,
    standardize_columns,
)
from ..moments.sums import LabeledMoments, PoolMoments
from .base import LabeledSet, MethodFit, PoolContext, linear_fit
from .options import MethodOptions


def generator(options: MethodOptions) -> np.random.Generator:
    """The options' generator, or a fresh unseeded one when none was given."""
    return options.rng if options.rng is not None else np.random.default_rng()


def primary_index(ctx: PoolContext, method: str) -> int:
    """Column of the primary judge signal, or a ValueError naming the method."""
    if ctx.primary is None:
        raise ValueError(
            f"Method {method!r} needs the primary judge signal: pass primary='<column>' naming "
            f"one of the signals {list(ctx.table.signal_names)}."
        )
    return ctx.primary


def profile_signal_design(ctx: PoolContext) -> FloatArray:
    """Standardised logistic covariates (Z, S): Z numeric (continuous, ordinal) or one-hot."""
    z = profile_design(ctx.table.z, ctx.locality.kind)
    return standardize_columns(np.column_stack([z, ctx.features]))


def prediction_moments(
    ctx: PoolContext, predictions: FloatArray, *, nuisance_scale: float = 1.0
) -> PoolMoments:
    """Pool moments of a prediction column (not cached: predictions depend on the labels)."""
    kernel = ctx.kernel(1.0)
    kernel_b = kernel if nuisance_scale == 1.0 else ctx.kernel(nuisance_scale)
    return PoolMoments.compute(kernel, predictions.reshape(-1, 1), kernel_b)


def _plugin_fit(ctx: PoolContext, predictions: FloatArray, params: dict[str, object]) -> MethodFit:
    pool = prediction_moments(ctx, predictions)
    g = ctx.grid_size
    nan = np.full(g, np.nan)
    return MethodFit(
        estimate=np.asarray(pool.mean[:, 0], dtype=np.float64),
        var_pool=nan,
        var_population=nan.copy(),
        r2=np.zeros(g),
        gain=np.ones(g),
        borrowed=np.ones(g, dtype=bool),
        params=dict(params),
        notes=(
            "Plug-in estimates average a globally fitted logistic model over the pool; they are "
            "biased when that model is misspecified, so no interval is reported.",
        ),
    )


def fit_plugin_judge(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Plug-in (judge): logistic regression of Y on the primary judge signal, averaged locally.

    Parameters
    ----------
    ctx : PoolContext
        Needs ``ctx.primary``.
    labeled : LabeledSet
    options : MethodOptions
        Reads ``C``.

    Returns
    -------
    MethodFit
        se is NaN: the estimate is a pure model extrapolation with no labeled residual
        correction, so under a misspecified logistic model it is biased by
        E[p(S) - Y | Z = z], which no variance formula covers. ``borrowed`` is True everywhere
        (the model is global in Z).

    Notes
    -----
    With p fitted on L (standardised covariate, inverse penalty C) and evaluated on every pool
    item,

    .. math:: \\hat\\theta(z) = \\sum_{i\\in T} w_{i,T}(z)\\, \\hat p(S^{judge}_i).

    References
    ----------
    LACE paper, Section 5.2 ("Plug-in (judge)"); Appendix I.2 (misspecification under
    group-varying signal slopes).
    """
    column = primary_index(ctx, "plugin_judge")
    x = ctx.features[:, [column]]
    predictions = pool_predictions(x, labeled.index, labeled.y, c=options.C)
    return _plugin_fit(
        ctx,
        predictions,
        {"C": options.C, "primary": ctx.table.signal_names[column]},
    )


def fit_plugin_multi(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Plug-in (multi): ridge-logistic regression of Y on (Z, S) fitted on L, averaged locally.

    Z enters as its numeric values (continuous, ordinal) or one-hot (categorical); all columns are
    standardised over the pool.

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    options : MethodOptions
        Reads ``C``.

    Returns
    -------
    MethodFit
        se is NaN for the reason given in :func:`fit_plugin_judge`.

    Notes
    -----
    .. math:: \\hat\\theta(z) = \\sum_{i\\in T} w_{i,T}(z)\\, \\hat p(Z_i, S_i).

    References
    ----------
    LACE paper, Section 5.2 ("Plug-in (multi)").
    """
    x = profile_signal_design(ctx)
    predictions = pool_predictions(x, labeled.index, labeled.y, c=options.C)
    return _plugin_fit(ctx, predictions, {"C": options.C})


def fit_augmented(
    ctx: PoolContext,
    labeled: LabeledSet,
    predictions: FloatArray,
    *,
    params: dict[str, object] | None = None,
) -> MethodFit:
    """Augmented plug-in with given predictions: the control variate on P with coefficient 1.

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    predictions : ndarray of shape (M,)
        P_i for every pool item (cross-fitted on the labeled items).
    params : dict, optional
        Recorded in the fit.

    Returns
    -------
    MethodFit

    Notes
    -----
    .. math::

        \\hat\\theta(z) = \\sum_{i\\in T} w_{i,T}(z) P_i + \\sum_{i\\in L} w_{i,L}(z)(Y_i - P_i)
                        = \\bar Y_L(z) - 1\\cdot\\{\\bar P_L(z) - \\bar P_T(z)\\}.

    The variance is that of the linear representation with e_i = Y_i - P_i and the predictions
    held fixed (:mod:`slicewise.inference.variance`, df = 0): cross-fitting keeps each labeled
    residual free of its own label, which is what the fixed-predictor approximation needs; the
    remaining difference between the out-of-fold and the full-L model is of smaller order.
    """
    pool = prediction_moments(ctx, predictions)
    lab = LabeledMoments.compute(pool, labeled.index, labeled.y, predictions.reshape(-1, 1))
    coef = CoefficientFit.fixed(np.ones((ctx.grid_size, 1)))
    return linear_fit(pool, lab, coef, params=params)


def fit_aug_plugin(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Aug. plug-in: the (Z, S) logistic plug-in plus a labeled residual correction.

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    options : MethodOptions
        Reads ``C`` and ``rng`` (the cross-fitting folds).

    Returns
    -------
    MethodFit
        With the control-variate variance of :func:`fit_augmented`.

    Notes
    -----
    .. math::

        \\hat\\theta(z) = \\sum_{i\\in T} w_{i,T}(z)\\hat p(Z_i, S_i)
            + \\sum_{i\\in L} w_{i,L}(z)\\{Y_i - \\hat p(Z_i, S_i)\\},

    with p two-fold cross-fitted on L (out of fold on L, refitted on all of L elsewhere). By
    Proposition 1 with coefficient 1 it is unbiased whatever the model.

    References
    ----------
    LACE paper, Section 5.2 ("Aug. plug-in").
    """
    x = profile_signal_design(ctx)
    predictions = cross_fitted_predictions(
        x, labeled.index, labeled.y, c=options.C, rng=generator(options)
    )
    return fit_augmented(ctx, labeled, predictions, params={"C": options.C})


def fit_scalar_prediction(
    ctx: PoolContext,
    labeled: LabeledSet,
    predictions: FloatArray,
    *,
    nuisance_scale: float = 1.0,
    params: dict[str, object] | None = None,
) -> MethodFit:
    """Scalar prediction control variate with given predictions (PPI++ localised).

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    predictions : ndarray of shape (M,)
        P_i for every pool item.
    nuisance_scale : float, default 1
        Bandwidth of the coefficient's moments as a multiple of h.
    params : dict, optional
        Recorded in the fit.

    Returns
    -------
    MethodFit

    Notes
    -----
    .. math::

        \\hat\\theta(z) = \\bar Y_L(z) - \\hat\\eta(z)\\{\\bar P_L(z) - \\bar P_T(z)\\},\\qquad
        \\hat\\eta(z) = \\hat\\Sigma_{PY,L,b}(z) / \\hat\\Sigma_{PP,T,b}(z),

    the unregularised local covariance-variance coefficient (the LACE coefficient with lambda = 0
    on the single feature P; 0 where P has no local pool variance). Since
    :math:`\\bar P_L - \\bar P_T = (1 - \\pi)(\\bar P_L - \\bar P_U)` with U = T \\ L, this is the
    PPI++ estimator :math:`\\bar Y_L - \\lambda(\\bar P_L - \\bar P_U)` with
    :math:`\\lambda = (1 - \\pi)\\eta = \\eta / (1 + n/N)`, N = |U|: PPI++'s optimal
    lambda = Cov(Y, P) / {(1 + n/N) Var(P)} is exactly eta = Cov / Var in this finite-pool form.
    Variance: :mod:`slicewise.inference.variance` with e = Y - eta P and df = 1 for the fitted
    scalar.

    References
    ----------
    LACE paper, Section 5.2 ("Scalar prediction CV"); Angelopoulos, Duchi and Zrnic (2023),
    PPI++, for the tuned scalar.
    """
    pool = prediction_moments(ctx, predictions, nuisance_scale=nuisance_scale)
    lab = LabeledMoments.compute(pool, labeled.index, labeled.y, predictions.reshape(-1, 1))
    coef = ridge_coefficient(pool, lab, 0.0)
    return linear_fit(pool, lab, coef, params=params)


def fit_scalar_pred_cv(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Scalar prediction CV: a cross-fitted logistic predictor of Y from S with a local scalar.

    Parameters
    ----------
    ctx : PoolContext
    labeled : LabeledSet
    options : MethodOptions
        Reads ``C``, ``nuisance_scale`` (bandwidth of the scalar's moments, b / h) and
        ``rng`` (cross-fitting folds).

    Returns
    -------
    MethodFit

    Notes
    -----
    P_i = p(S_i), a logistic regression of Y on the standardised signals (not Z), two-fold
    cross-fitted on L; the estimate and variance are those of :func:`fit_scalar_prediction`.

    References
    ----------
    LACE paper, Section 5.2 ("Scalar prediction CV (Angelopoulos et al., 2023b)").
    """
    predictions = cross_fitted_predictions(
        ctx.features, labeled.index, labeled.y, c=options.C, rng=generator(options)
    )
    return fit_scalar_prediction(
        ctx,
        labeled,
        predictions,
        nuisance_scale=options.nuisance_scale,
        params={"C": options.C},
    )
