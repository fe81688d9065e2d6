"""Linear pieces (moments, coefficient, scaled influence values) of the centered methods.

The gap ranking and the deployment score need more than a method's estimate and variance: the
item-level influence values of :mod:`slicewise.inference.influence`. They exist for the centered
control variates with an explicit coefficient, which are rebuilt here exactly as their registered
fits compute them (same cached pool moments, same ridge coefficient).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._typing import FloatArray, IntArray, Target
from .estimators.control_variate import CoefficientFit, ridge_coefficient
from .inference.influence import influence_block, influence_scale
from .methods.base import LabeledSet, MethodFit, MethodOptions, PoolContext
from .moments.sums import LabeledMoments, PoolMoments, take_rows

LinearMethod = Literal["lace", "global_cv", "naive"]
LINEAR_METHODS: tuple[LinearMethod, ...] = ("lace", "global_cv", "naive")


@dataclass(frozen=True, eq=False)
class LinearPieces:
    """Pool and labeled moments, coefficient and features of one centered fit."""

    pool: PoolMoments
    lab: LabeledMoments
    coef: CoefficientFit
    features: FloatArray
    index: IntArray
    y: FloatArray


def linear_pieces(
    ctx: PoolContext, labeled: LabeledSet, method: LinearMethod, options: MethodOptions
) -> LinearPieces:
    """Rebuild the moments and coefficient of ``method`` (as in :mod:`slicewise.methods`)."""
    if method == "naive":
        x = np.zeros((ctx.n_pool, 0))
        pool = ctx.moments("none", x)
        lab = LabeledMoments.compute(pool, labeled.index, labeled.y, x)
        coef = CoefficientFit.fixed(np.zeros((ctx.grid_size, 0)))
    else:
        scale = options.nuisance_scale if method == "lace" else np.inf
        x = ctx.features
        pool = ctx.moments("signals", x, nuisance_scale=scale)
        lab = LabeledMoments.compute(pool, labeled.index, labeled.y, x)
        coef = ridge_coefficient(pool, lab, options.ridge)
    return LinearPieces(pool=pool, lab=lab, coef=coef, features=x, index=labeled.index, y=labeled.y)


def scaled_influence(
    pieces: LinearPieces, fit: MethodFit, target: Target, rows: IntArray | None = None
) -> tuple[FloatArray, FloatArray | None]:
    """Influence values scaled to the fit's variances, for the labeled items ``rows``.

    Returns
    -------
    phi : ndarray (r, G)
        Label-draw part; column sums of squares over all of L equal ``fit.var_pool``.
    psi : ndarray (r, G) or None
        Pool-sampling part for the population target (sums of squares equal
        var_population - var_pool); None for the pool target.
    """
    lab = pieces.lab
    sel = np.arange(pieces.index.size) if rows is None else rows
    k_rows = take_rows(pieces.pool.kernel, pieces.index[sel])
    coef = pieces.coef.coef
    x = pieces.features[pieces.index[sel]]
    y = pieces.y[sel]
    center = lab.mean[:, 1] - np.einsum("gp,gp->g", coef, np.nan_to_num(lab.mean[:, 2:]))
    raw = influence_block(k_rows, y, x, coef, mass=lab.mass, center=center)
    phi = raw * influence_scale(lab.quadratic(coef, squared=True), fit.var_pool)
    if target == "pool":
        return phi, None
    zero = np.zeros_like(coef)
    raw_y = influence_block(k_rows, y, x, zero, mass=lab.mass, center=np.nan_to_num(lab.mean[:, 1]))
    extra = fit.var_population - fit.var_pool
    psi = raw_y * influence_scale(lab.quadratic(zero, squared=True), extra)
    return phi, psi
