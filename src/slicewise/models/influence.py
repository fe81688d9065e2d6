"""Scaled influence values of the centered methods with an explicit coefficient.

The gap ranking and the deployment score need more than a method's estimate and variance: the
item-level influence values of :mod:`slicewise.inference.influence`, computed from the same
:class:`~slicewise.methods.control_variates.LinearPieces` the registered fits are built from.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._typing import FloatArray, IntArray, Target
from ..inference.influence import influence_block, influence_scale
from ..methods.base import MethodFit
from ..methods.control_variates import LinearPieces
from ..moments.sums import take_rows

LinearMethod = Literal["lace", "global_cv", "naive"]
LINEAR_METHODS: tuple[LinearMethod, ...] = ("lace", "global_cv", "naive")


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
