"""The out-of-fold variance terms of several candidates that share their features, made together
for ``auto``'s choice (:func:`item_sums`).

``auto`` scores about thirty candidates, in three feature sets, by the item-level terms of
:func:`~slicewise.inference.cv_variance.cross_validated` summed over the grid points. Made one
candidate at a time, each took about ten passes over an (n x G) array, with row gathers of the
folds and a sum along the short axis: 3.5 ms at n = 10,000 and G = 20. Here the candidates of one
feature set share every step: the labeled items are put in fold order once, so that a fold's
residuals are one BLAS product of its features with every candidate's fold coefficients, written
into its columns of a (C G x n) array whose rows are contiguous, and each following step is one
pass over that array (about 0.6 ms a candidate). Only the choice reads these sums; the chosen
candidate's terms and estimate come from :func:`~slicewise.inference.cv_variance.cross_validated`
as before, so the reported numbers do not depend on this path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._typing import BoolArray, FloatArray, IntArray
from .cv_variance import DesignWeights


@dataclass(frozen=True, eq=False)
class FoldOrder:
    """The labeled items put in fold order once for every feature set's :func:`item_sums`.

    Attributes
    ----------
    order : ndarray of int, shape (n,)
        Positions of the labeled items, fold after fold (each fold's held-out items in order).
    parts : list of (train, test) position arrays
        :func:`~slicewise.inference.cv_variance.fold_parts` of the folds.
    y : ndarray of shape (n,)
        Labels in fold order.
    centring, factor : ndarray of shape (G, n)
        The weights of the residual mean (the labeled weights, or with inclusion probabilities
        :attr:`DesignWeights.residual`) and :func:`~slicewise.inference.cv_variance.term_factor`,
        transposed, in fold order.
    """

    order: IntArray
    parts: Sequence[tuple[IntArray, IntArray]]
    y: FloatArray
    centring: FloatArray
    factor: FloatArray

    @classmethod
    def of(
        cls,
        weights: FloatArray,
        y: FloatArray,
        parts: Sequence[tuple[IntArray, IntArray]],
        factor: FloatArray,
        *,
        design: DesignWeights | None = None,
    ) -> FoldOrder:
        """From the labeled weights (n, G), labels, fold parts and term factor (n, G)."""
        order = np.concatenate([test for _, test in parts])
        centring = weights if design is None else design.residual
        return cls(
            order=order,
            parts=parts,
            y=y[order],
            centring=np.ascontiguousarray(centring[order].T),
            factor=np.ascontiguousarray(factor[order].T),
        )


def item_sums(
    folds: FoldOrder,
    x: FloatArray,
    coefs: Sequence[Sequence[FloatArray]],
    point: FloatArray,
) -> tuple[FloatArray, BoolArray]:
    """Every candidate's item-level out-of-fold variance terms summed over its finite grid points.

    For candidate c with fold coefficients c_{-k}(z), the terms are those of
    :func:`~slicewise.inference.cv_variance.cross_validated`,
    factor_i(z) {e_i(z) - ebar(z)}^2 with e_i(z) = Y_i - c_{-k(i)}(z)' X_i and ebar the
    residuals' weighted mean; equal to them up to the order of the additions.

    Parameters
    ----------
    folds : FoldOrder
        The labeled items in fold order, with their labels, weights and term factor.
    x : ndarray of shape (n, p)
        Features of the labeled items (in their own order), shared by every candidate (p may
        be 0: naive).
    coefs : sequence of C sequences of (G, p) arrays
        ``coefs[c][k]``: candidate c's coefficient fitted without the items of fold k
        (``folds.parts[k][1]``).
    point : ndarray of shape (G,)
        Weight of each grid point in the sums (finite).

    Returns
    -------
    sums : ndarray of shape (C, n)
        Row c: candidate c's terms summed over the grid points where its terms are all finite,
        weighted by ``point``.
    finite : ndarray of bool, shape (C, G)
        Where each candidate's terms are all finite.
    """
    g, n = folds.factor.shape
    count, p = len(coefs), x.shape[1]
    x_t = np.ascontiguousarray(x[folds.order].T)  # (p, n), the items in fold order
    resid = np.empty((count * g, n))
    start = 0
    for k, (_, test) in enumerate(folds.parts):
        stop = start + test.size
        if p:
            stacked = np.stack([coefs[c][k] for c in range(count)]).reshape(count * g, p)
            np.matmul(stacked, x_t[:, start:stop], out=resid[:, start:stop])
        else:
            resid[:, start:stop] = 0.0
        start = stop
    np.subtract(folds.y, resid, out=resid)  # e_i(z), one row per (candidate, grid point)
    by_candidate = resid.reshape(count, g, n)
    ebar = np.einsum("cgi,gi->cg", by_candidate, folds.centring)
    by_candidate -= ebar[:, :, None]
    np.square(resid, out=resid)
    by_candidate *= folds.factor
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(resid @ np.ones(n)).reshape(count, g)
    sums = np.empty((count, n))
    for c in range(count):
        mask = finite[c]
        if mask.all():
            sums[c, folds.order] = point @ by_candidate[c]
        else:
            sums[c, folds.order] = point[mask] @ by_candidate[c][mask]
    return sums, finite
