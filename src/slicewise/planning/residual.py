"""The residual model of :func:`slicewise.next_items`: every item's predicted residual scale.

Active inference (Zrnic and Candes, 2024, Sections 3-4) labels item i with probability
proportional to the conditional standard deviation of the residual of the prediction used by the
estimator, sd_i = E[(Y - f(X))^2 | X = x_i]^{1/2}: the design variance of the
prediction-powered (AIPW) estimate of a mean, sum_i sd_i^2 (1 / pi_i - 1), is smallest under
that allocation for a fixed expected number of labels. Here f is a logistic model of Y on the
item's covariates x, fitted on the labels so far, and sd_i = sqrt{f_i (1 - f_i)}, the residual
sd of a calibrated prediction, clipped to :data:`RESIDUAL_SD`.

**Covariates.** The learner's covariates of ``auto`` (signals, level indicators and level x
signal terms; for a continuous profile Z, Z^2 and Z x signal) and, for a continuous profile,
each item's normalised kernel weights w_g(z_i) at up to :data:`MAX_BASIS` grid points and
w_g(z_i) x signal, so that a signal that is good in one region of Z and noise elsewhere (the
specialists of the LACE paper's I.3) is modelled where it is good. The signals include the
``uncertainty=`` columns and their products with every signal
(:mod:`slicewise.data.uncertainty`). With two or more given signals, their disagreement
d_i (the standard deviation across the item's standardised given signals) and d_i x signal
are added: where the judges disagree, the model can learn that they are less reliable.

**Cross-fitting.** The rows are dealt to :data:`RESIDUAL_FOLDS` fixed folds by input row
(:func:`row_folds`). Besides the model fitted on every label (the unlabeled items' scale), the
model fitted without fold k gives the labeled items of fold k their scale and their residual
e_i = Y_i - f_{-k}(x_i): a labeled item's probability must not depend on its own label (module
notes of :mod:`slicewise.planning.adaptive`, *Own labels*), and the residuals that judge the
proposed design (:mod:`slicewise.planning.safeguard`) must be out of sample, or the design would
be judged on the labels it was fitted to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray, IntArray

#: Clip of the predicted residual standard deviation sd_i.
RESIDUAL_SD = (0.1, 0.5)
#: Folds of the residual model (module notes).
RESIDUAL_FOLDS = 5
#: Most grid points whose kernel weights enter the residual model of a continuous profile.
MAX_BASIS = 10


def residual_design(pilot: Any, given: Sequence[str] | None = None) -> FloatArray:
    """The covariates of the residual model in canonical row order (module notes).

    Parameters
    ----------
    pilot
        The pool context of :func:`slicewise.planning.plan._context` (``items``, ``ctx``).
    given : sequence of str, optional
        The signal columns the user named; with two or more, their disagreement and its
        products with them are added.
    """
    from ..estimators.learner_design import learner_design

    items, ctx = pilot.items, pilot.ctx
    design = learner_design(items.z, ctx.locality.kind, ctx.features, "logistic")
    parts = [design]
    if ctx.locality.kind == "continuous":  # signal effects that vary along Z, grid point by point
        kernel = ctx.kernel(1.0)
        dense = np.asarray(kernel if isinstance(kernel, np.ndarray) else kernel.toarray())
        g = dense.shape[1]
        dense = dense[:, np.unique(np.round(np.linspace(0, g - 1, min(g, MAX_BASIS))).astype(int))]
        w = dense / np.maximum(dense.sum(axis=1, keepdims=True), 1e-300)
        parts += [w, (w[:, :, None] * ctx.features[:, None, :]).reshape(w.shape[0], -1)]
    names = list(items.signal_names)
    columns = [names.index(s) for s in (given or ()) if s in names]
    if len(columns) >= 2:  # the given signals' disagreement, and the signals scaled by it
        own = ctx.features[:, columns]
        spread = own.std(axis=1)
        spread = (spread - spread.mean()) / max(float(spread.std()), 1e-12)
        parts += [spread[:, None], own * spread[:, None]]
    return np.asarray(np.column_stack(parts), dtype=np.float64)


def row_folds(m: int) -> IntArray:
    """The fold of every input row, 0 .. :data:`RESIDUAL_FOLDS` - 1 (fixed, label-blind)."""
    return np.asarray(np.random.default_rng(0).permutation(m) % RESIDUAL_FOLDS, dtype=np.intp)


@dataclass(frozen=True, eq=False)
class ResidualModel:
    """What :func:`residual_model` returns, in canonical item order.

    Attributes
    ----------
    scale : ndarray of shape (1 + F, M)
        Row 0: sd_i from the model fitted on every label; row 1 + k: from the model fitted
        without the labels of fold k.
    resid : ndarray of shape (n,)
        Out-of-fold residual Y_i - f_{-k(i)}(x_i) of every labeled item (``items.labeled_index``
        order).
    fold : ndarray of int, shape (n,)
        The fold of every labeled item.
    """

    scale: FloatArray
    resid: FloatArray
    fold: IntArray


def residual_model(
    pilot: Any, c: float, folds: IntArray, given: Sequence[str] | None = None
) -> ResidualModel:
    """Fit the residual model and its fold models (module notes); ``folds`` is every input
    row's fold (:func:`row_folds`), ``c`` the inverse L2 penalty of the logistic fits."""
    from ..estimators.predictors import fit_logistic

    items = pilot.items
    design = residual_design(pilot, given)
    index = items.labeled_index
    y = items.label[index]
    fold = folds[items.input_rows(index)]
    f = np.empty((1 + RESIDUAL_FOLDS, items.n_pool))
    f[0] = fit_logistic(design[index], y, c=c).predict(design)
    resid = np.empty(index.size)
    for k in range(RESIDUAL_FOLDS):
        kept = fold != k
        f[1 + k] = fit_logistic(design[index[kept]], y[kept], c=c).predict(design)
        resid[~kept] = y[~kept] - f[1 + k, index[~kept]]
    scale = np.clip(np.sqrt(f * (1.0 - f)), *RESIDUAL_SD)
    return ResidualModel(
        scale=np.asarray(scale, dtype=np.float64), resid=resid, fold=np.asarray(fold, np.intp)
    )
