"""Scaled influence values of the centered methods with an explicit coefficient.

The gap ranking and the deployment score need more than a method's estimate and variance: the
item-level influence values of :mod:`slicewise.inference.influence`, computed from the same
:class:`~slicewise.methods.control_variates.LinearPieces` the registered fits are built from.

``auto`` exposes them through the candidate it chooses (:func:`influence_pieces`): naive, the
signals with one pooled coefficient, with local coefficients, or with local coefficients shrunk
toward the pooled one are all centered control variates with an explicit coefficient c(z), so
their pieces are those of naive, Global CV, LACE at the chosen nuisance bandwidth, or LACE with
the shrunk coefficient of :func:`~slicewise.estimators.centered.shrunk_coefficient`; the
candidate is refitted on all of L (as ``lace_shrunk`` reports it), and its estimate, variance
and influence values come from one set of pieces. A learned candidate's cross-fitted prediction
has no such coefficient on the pool's signals; there ``lace`` is used instead and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from .._typing import FloatArray, IntArray, Target
from ..estimators.centered import shrunk_coefficient
from ..inference.influence import influence_block, influence_scale
from ..methods.base import LabeledSet, MethodFit, PoolContext, linear_fit
from ..methods.control_variates import LinearPieces, linear_pieces
from ..methods.options import MethodOptions
from ..moments.kernel_ops import take_rows

LinearMethod = Literal["lace", "global_cv", "naive"]
LINEAR_METHODS: tuple[LinearMethod, ...] = ("lace", "global_cv", "naive")
#: The methods whose influence values :func:`influence_pieces` gives: ``auto`` (its chosen
#: candidate) and the linear methods.
InfluenceMethod = Literal["auto", "lace", "global_cv", "naive"]
INFLUENCE_METHODS: tuple[InfluenceMethod, ...] = ("auto", *LINEAR_METHODS)


@dataclass(frozen=True, eq=False)
class InfluencePieces:
    """The linear pieces of a method's fit, with the fit they give.

    Attributes
    ----------
    pieces : LinearPieces
    fit : MethodFit or None
        For ``auto``: the chosen candidate refitted on all of L from ``pieces`` (what the caller
        reports). None for a linear method, whose registered fit is built from the same pieces.
    chosen : str
        The linear form used: 'naive', 'global_cv', 'lace' or 'lace_shrunk'.
    params : dict
        For ``auto``: its choice (candidate label, nuisance scale, shrinkage).
    notes : tuple of str
    """

    pieces: LinearPieces
    fit: MethodFit | None
    chosen: str
    params: dict[str, object]
    notes: tuple[str, ...] = ()


def influence_pieces(
    ctx: PoolContext,
    labeled: LabeledSet,
    method: InfluenceMethod,
    options: MethodOptions,
    *,
    func: str,
) -> InfluencePieces:
    """The pieces whose influence values give the joint variance of ``method``'s estimates.

    ``auto`` is fitted without smoothing (the influence representation is that of the direct
    estimates) to learn its choice; see the module notes for the form of each candidate.
    """
    if method != "auto":
        return InfluencePieces(linear_pieces(ctx, labeled, method, options), None, method, {})
    from ..methods.candidates import candidate_words
    from ..methods.registry import METHODS

    if ctx.features.shape[1] == 0:  # auto without signals is naive
        label, features, params = "naive", None, {}
    else:
        auto = METHODS["auto"].fit(ctx, labeled, replace(options, smooth="none"))
        label, params = str(auto.params.get("chosen", "naive")), auto.params
        features = params.get("features")
    choice: dict[str, object] = {"auto_chosen": label}
    if label == "naive" or features is None:
        pieces = linear_pieces(ctx, labeled, "naive", options)
        chosen = "naive"
    elif features != "signals":
        pieces = linear_pieces(ctx, labeled, "lace", options)
        fit = linear_fit(pieces.pool, pieces.lab, pieces.coef, given=pieces.given(labeled))
        note = (
            f"auto chose {candidate_words(label)}, whose item-level influence values are not "
            f"available (a cross-fitted prediction has no coefficient on the signals), so {func} "
            "used lace instead."
        )
        return InfluencePieces(pieces, fit, "lace", {**choice, "auto_used": "lace"}, (note,))
    else:
        shrinkage = float(params["shrinkage"])
        scale = float(params["nuisance_scale"])
        choice |= {"nuisance_scale": scale, "shrinkage": shrinkage}
        if np.isinf(shrinkage):
            pieces = linear_pieces(ctx, labeled, "global_cv", options)
            chosen = "global_cv"
        else:
            pieces = linear_pieces(ctx, labeled, "lace", replace(options, nuisance_scale=scale))
            chosen = "lace"
            if shrinkage > 0:
                pooled = linear_pieces(ctx, labeled, "global_cv", options).coef
                sum_wb2 = pieces.lab.sum_wb2
                with np.errstate(divide="ignore"):
                    n_eff = np.where(sum_wb2 > 0, 1.0 / np.where(sum_wb2 > 0, sum_wb2, 1.0), 0.0)
                coef = shrunk_coefficient(pieces.coef, pooled, n_eff, shrinkage)
                pieces = replace(pieces, coef=coef)
                chosen = "lace_shrunk"
    fit = linear_fit(pieces.pool, pieces.lab, pieces.coef, given=pieces.given(labeled))
    note = (
        f"auto chose {candidate_words(label)}."
        if chosen == "naive"
        else f"auto chose {candidate_words(label)}; {func} uses that choice refitted on all "
        "labels (not auto's cross-fitted estimate), whose item-level influence values give the "
        "variance."
    )
    return InfluencePieces(pieces, fit, chosen, {**choice, "auto_used": chosen}, (note,))


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
