"""Naive, LACE and the LACE ablations of the paper's comparison (Section 5.2).

All are centered control variates (:mod:`slicewise.estimators.centered`) that differ only
in the features and the coefficient, and all weight by known inclusion probabilities when the
labeled set carries them (``LabeledSet.pi``: Hajek local means, design variances of
:mod:`slicewise.inference.variance`):

=================  ====================================  =====================================
method             features                              coefficient
=================  ====================================  =====================================
``naive``          none                                  0
``lace``           all K standardised signals            local ridge, nuisance bandwidth b
``lace_oracle``    all K signals                         supplied beta(z) (simulations)
``global_cv``      all K signals                         one ridge coefficient (b = infinity)
``per_signal_cv``  the primary judge signal              local scalar ridge coefficient
``residual_only``  all K signals                         local ridge, without the pool term
=================  ====================================  =====================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._typing import FloatArray, IntArray
from ..estimators.centered import CoefficientFit, residual_estimate, ridge_coefficient
from ..moments.sums import LabeledMoments, PoolMoments
from .base import GivenSet, LabeledSet, MethodFit, PoolContext, linear_fit
from .options import MethodOptions


def _labeled(
    ctx: PoolContext, labeled: LabeledSet, name: str, nuisance_scale: float, x: FloatArray
) -> tuple[PoolMoments, LabeledMoments]:
    pool = ctx.moments(name, x, nuisance_scale=nuisance_scale)
    lab = LabeledMoments.compute(pool, labeled.index, labeled.y, x, pi=labeled.pi)
    return pool, lab


@dataclass(frozen=True, eq=False)
class LinearPieces:
    """Pool and labeled moments, coefficient and features of one centered fit.

    The registered fits of ``naive``, ``lace`` and ``global_cv`` are built from these pieces, and
    so are the influence values that the gap ranking and the deployment score need.
    """

    pool: PoolMoments
    lab: LabeledMoments
    coef: CoefficientFit
    features: FloatArray
    index: IntArray
    y: FloatArray

    def given(self, labeled: LabeledSet) -> GivenSet:
        """The fit's features for its variance given the labeled set (:func:`linear_fit`)."""
        x = self.features[self.index]
        return GivenSet(labeled, x, x, self.pool.mean)


LinearMethod = Literal["lace", "global_cv", "naive"]
#: Methods with an explicit coefficient, whose influence values are available.
LINEAR_METHODS: tuple[LinearMethod, ...] = ("lace", "global_cv", "naive")


def linear_pieces(
    ctx: PoolContext, labeled: LabeledSet, method: LinearMethod, options: MethodOptions
) -> LinearPieces:
    """Moments and coefficient of naive (c = 0), LACE (local ridge at b) or Global CV (b = inf)."""
    if method == "naive":
        x = np.zeros((ctx.n_pool, 0))
        pool, lab = _labeled(ctx, labeled, "none", 1.0, x)
        coef = CoefficientFit.fixed(np.zeros((ctx.grid_size, 0)))
    else:
        x = ctx.features
        scale = options.nuisance_scale if method == "lace" else np.inf
        pool, lab = _labeled(ctx, labeled, "signals", scale, x)
        coef = ridge_coefficient(pool, lab, options.ridge)
    return LinearPieces(pool=pool, lab=lab, coef=coef, features=x, index=labeled.index, y=labeled.y)


def fit_naive(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Naive: the labeled local mean Ybar_L(z) = sum_L w_{i,L}(z) Y_i (Section 5.2).

    Its variance is the c = 0 case of :mod:`slicewise.inference.variance`: for the pool target
    (1 - pi(z)) sum_L w^2 (Y - Ybar_L)^2 / (1 - sum w^2), the ratio-estimator variance under simple
    random sampling of L from T.
    """

    def compute() -> MethodFit:
        pieces = linear_pieces(ctx, labeled, "naive", options)
        return linear_fit(pieces.pool, pieces.lab, pieces.coef)

    return labeled.memo(("naive", ctx), compute)


def fit_lace(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """LACE (Section 3.3): Ybar_L(z) - beta_hat(z)'(Sbar_L(z) - Sbar_T(z)).

    beta_hat(z) = (Sigma_SS,T,b(z) + lambda I)^+ Sigma_SY,L,b(z) on signals standardised over the
    pool, with the nuisance bandwidth b = ``nuisance_scale`` x h. Variance: see
    :mod:`slicewise.inference.variance` (first-order adaptivity, Theorem 2, lets the estimated
    coefficient be treated as fixed; the df correction handles the finite-sample overfit of the
    residuals), given the labeled set where that is larger
    (:func:`~slicewise.inference.calibration.given_set_factor`). The coefficient is fitted on
    the labels it adjusts, so the estimate has an O(K / n) bias that the interval does not
    include; slices with more than :data:`~slicewise.methods.base.SIGNALS_PER_LABEL` signals
    per label are named in an :class:`~slicewise.exceptions.InSampleFitWarning`.
    """
    pieces = linear_pieces(ctx, labeled, "lace", options)
    return linear_fit(
        pieces.pool,
        pieces.lab,
        pieces.coef,
        params={"ridge": options.ridge, "nuisance_scale": options.nuisance_scale},
        given=pieces.given(labeled),
    )


def fit_global_cv(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Global CV (Section 5.2): LACE with one coefficient pooled over every z (b = infinity).

    beta_hat = (Sigma_SS,T + lambda I)^+ Sigma_SY,L with global pool and labeled covariances; the
    centering stays local, so the estimate is still unbiased for each theta(z).
    """
    pieces = linear_pieces(ctx, labeled, "global_cv", options)
    return linear_fit(
        pieces.pool,
        pieces.lab,
        pieces.coef,
        params={"ridge": options.ridge},
        given=pieces.given(labeled),
    )


def fit_per_signal_cv(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Per-signal CV (Section 5.2): LACE with the primary judge signal only (scalar coefficient)."""
    if ctx.primary is None:
        raise ValueError(
            "Method 'per_signal_cv' needs the primary judge signal: pass primary='<column>'."
        )
    x = ctx.features[:, [ctx.primary]]
    pool, lab = _labeled(ctx, labeled, "primary", options.nuisance_scale, x)
    coef = ridge_coefficient(pool, lab, options.ridge)
    return linear_fit(
        pool,
        lab,
        coef,
        params={"ridge": options.ridge, "primary": ctx.table.signal_names[ctx.primary]},
        given=GivenSet(labeled, x[labeled.index], x[labeled.index], pool.mean),
    )


def fit_residual_only(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Residual-only (Section 5.2): Ybar_L(z) - beta_hat(z)' Sbar_L(z), LACE without the pool term.

    The ablation isolates the contribution of the unlabeled signal means. It is not centered, so it
    is biased for theta(z) and has no valid interval: se is NaN.
    """
    pool, lab = _labeled(ctx, labeled, "signals", options.nuisance_scale, ctx.features)
    coef = ridge_coefficient(pool, lab, options.ridge)
    fit = linear_fit(pool, lab, coef, params={"ridge": options.ridge})
    nan = np.full(ctx.grid_size, np.nan)
    return MethodFit(
        estimate=residual_estimate(lab, coef.coef),
        var_pool=nan,
        var_population=nan,
        r2=fit.r2,
        gain=fit.gain,
        borrowed=fit.borrowed,
        params=fit.params,
        notes=("residual_only is biased (no pool centering); no interval is reported.",),
    )


def oracle_coefficient(ctx: PoolContext, coef: FloatArray | Callable[[Any], Any]) -> FloatArray:
    """A supplied coefficient on the raw signal scale, mapped to the standardised features.

    ``coef`` is an array of shape (G, K) or (K,), or a callable taking a grid point (as shown in
    the result's ``z``) and returning K numbers.
    """
    k = ctx.features.shape[1]
    g = ctx.grid_size
    if callable(coef):
        rows = [
            np.asarray(coef(point), dtype=np.float64).reshape(-1) for point in ctx.locality.labels
        ]
        values = np.vstack(rows) if rows else np.zeros((0, k))
    else:
        values = np.asarray(coef, dtype=np.float64)
        if values.ndim == 1:
            values = np.broadcast_to(values, (g, values.size))
    if values.shape != (g, k) or not np.all(np.isfinite(values)):
        raise ValueError(
            f"The 'coef' parameter of profile must give {k} finite coefficients (one per signal, "
            f"raw signal units) for each of the {g} grid points, i.e. shape ({g}, {k}). Got shape "
            f"{values.shape} instead."
        )
    return values * ctx.signal_scale


def fit_lace_oracle(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """LACE with a supplied coefficient beta(z) in raw signal units (the oracle, Section 5.2).

    With a coefficient that does not depend on the labels, the group estimator is exactly unbiased
    for the pool profile (Theorem 1).
    """
    if options.coef is None:
        raise ValueError(
            "Method 'lace_oracle' needs a supplied coefficient: pass coef= (an array of shape "
            "(G, K) or a function of the grid point)."
        )
    coef = oracle_coefficient(ctx, options.coef)
    pool, lab = _labeled(ctx, labeled, "signals", 1.0, ctx.features)
    return linear_fit(pool, lab, CoefficientFit.fixed(coef))
