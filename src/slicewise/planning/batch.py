"""What the adaptive batches of :func:`slicewise.next_items` computed from one table share
(:class:`AdaptiveState`: the plan's slice variances, the residual model, the labeled rows'
design-variance terms) and one batch's probabilities (:func:`batch_design`: the proposal of
:mod:`slicewise.planning.allocation`, mixed with uniform probabilities at the strength
:mod:`slicewise.planning.safeguard` chooses); the module notes of
:mod:`slicewise.planning.adaptive` say why."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import BoolArray, FloatArray, IntArray
from .allocation import COMPLETE_SHARE, adaptive_probabilities, prior_labels, slices_to_complete
from .plan import Columns, nearest_point, plan
from .residual import RESIDUAL_FOLDS, residual_model, row_folds
from .result import PlanResult
from .safeguard import MEASURED_LABELS, STRENGTHS, DesignChoice, choose_strength, variance_terms

FUNC = "next_items"
#: Fewest labels (and both label values) before the adaptive strategy fits its models.
MIN_ADAPTIVE_LABELS = 20


@dataclass(frozen=True, eq=False)
class AdaptiveState:
    """What every adaptive batch computed from one table shares, in input-row order.

    Attributes
    ----------
    need : PlanResult
        The slices' residual variances, labeled effective sizes and pool sizes
        (:func:`~slicewise.planning.plan.plan` with the method, uniform design).
    slice_of : ndarray of int, shape (M,)
        Every row's nearest grid point (-1: none).
    scale : ndarray of shape (1 + F, M)
        The residual scale sd_i of the residual model and of its fold models.
    fold : ndarray of int, shape (M,)
        Every row's fold (:func:`~slicewise.planning.residual.row_folds`).
    labeled : ndarray of bool, shape (M,)
    previous : ndarray of shape (M,)
        The accumulated inclusion probabilities before the batch.
    terms : ndarray of shape (n, G)
        The labeled rows' design-variance terms
        (:func:`~slicewise.planning.safeguard.variance_terms`), in ``np.flatnonzero(labeled)``
        order; zero at the grid points with fewer than
        :data:`~slicewise.planning.safeguard.MEASURED_LABELS` effective labels.
    sigma2 : ndarray of shape (G,)
        The plan's per-label residual variance of every grid point, shrunk toward the pooled
        one with the weight of ``prior`` labels.
    prior : float
        :func:`~slicewise.planning.allocation.prior_labels` of the plan.
    current : ndarray of shape (G,)
        Every grid point's variance now, sigma_g^2 (1 - n_eff / N) / n_eff (shrunk sigma^2).
    before : ndarray of shape (G,)
        The residual model's design variance now, sum_T kappa^2 sd^2 (1 / pi^prev - 1).
    kernel : ndarray of shape (M, G)
        Every row's normalised kernel weights k_ig / K_g (for the predicted variances of
        :func:`slicewise.plan`).
    floor : float
        The uniform floor u.
    """

    need: PlanResult
    slice_of: IntArray
    scale: FloatArray
    fold: IntArray
    labeled: BoolArray
    previous: FloatArray
    terms: FloatArray
    sigma2: FloatArray
    prior: float
    current: FloatArray
    before: FloatArray
    kernel: FloatArray
    floor: float


def adaptive_state(
    frame: pd.DataFrame,
    columns: Columns,
    *,
    halfwidth: float,
    level: float,
    method: str,
    inclusion: str | None,
    C: float,
    floor: float,
    previous: FloatArray,
    need: PlanResult | None = None,
) -> AdaptiveState:
    """Fit what the adaptive batches need (module notes): the plan's slice variances (``need``
    when the caller has the uniform plan already), the residual model and the labeled rows'
    design-variance terms."""
    pilot = columns.context(frame, func=FUNC)
    need = need or plan(
        frame,
        halfwidth=halfwidth,
        level=level,
        method=method,
        inclusion=inclusion,
        strategy="uniform",
        rng=0,
        **columns.keywords(),
    )
    m = len(frame)
    kernel = pilot.ctx.kernel(1.0)
    rows = pilot.items.input_rows(np.arange(m))
    slice_of = np.full(m, -1)
    slice_of[rows] = nearest_point(kernel)
    fold = row_folds(m)
    model = residual_model(pilot, C, fold, columns.given)
    scale = np.zeros((1 + RESIDUAL_FOLDS, m))
    scale[:, rows] = model.scale
    dense = np.asarray(kernel if isinstance(kernel, np.ndarray) else kernel.toarray())
    mass = dense.sum(axis=0)
    normalised = np.zeros_like(dense)
    normalised[rows] = dense / np.where(mass > 0, mass, np.inf)[None, :]
    labeled = frame[columns.label].notna().to_numpy()
    resid = np.zeros(m)
    resid[pilot.labeled_rows] = model.resid
    lab = np.flatnonzero(labeled)
    terms = variance_terms(normalised[lab], np.ones(dense.shape[1]), resid[lab], previous[lab])
    n_eff = np.asarray(need.n_labeled, dtype=np.float64)
    terms[:, n_eff < MEASURED_LABELS] = 0.0
    sigma2 = np.asarray(need.sigma, dtype=np.float64) ** 2
    prior = prior_labels(sigma2, n_eff)
    pooled = float(np.sum(n_eff * sigma2) / max(n_eff.sum(), 1e-12))
    shrunk = (n_eff * sigma2 + prior * pooled) / (n_eff + prior)
    n_pool = np.maximum(np.asarray(need.n_pool, dtype=np.float64), 1e-12)
    return AdaptiveState(
        need=need,
        slice_of=slice_of,
        scale=scale,
        fold=fold,
        labeled=labeled,
        previous=previous,
        terms=terms,
        sigma2=shrunk,
        prior=prior,
        current=shrunk * np.clip(1.0 - n_eff / n_pool, 0.0, 1.0) / np.maximum(n_eff, 1e-12),
        before=((1.0 / previous - 1.0) * scale[0] ** 2) @ normalised**2,
        kernel=normalised,
        floor=floor,
    )


def batch_design(
    state: AdaptiveState, batch: float, *, own_folds: bool = True
) -> tuple[FloatArray, DesignChoice]:
    """Every row's probability p_ib for a batch of expected size ``batch``, and the strength
    chosen between uniform probabilities and the adaptive proposal (module notes).

    ``own_folds=False`` gives the labeled rows the probabilities of the model fitted on every
    label and the strength chosen on every label, as the unlabeled rows get (a sixth of the
    work: :func:`slicewise.plan` searches the batch size with it; the unlabeled rows'
    probabilities are the same)."""
    unlabeled = ~state.labeled
    m = unlabeled.size
    complete = np.zeros(m, dtype=bool)

    def proposal(scale: FloatArray) -> FloatArray:
        open_ = unlabeled & ~complete
        left = batch - float((complete & unlabeled).sum())
        rest = adaptive_probabilities(
            state.need, state.slice_of, scale, open_, left, state.floor, state.prior
        )
        return np.asarray(np.where(complete, 1.0, rest), dtype=np.float64)

    p_a = proposal(state.scale[0])
    complete = slices_to_complete(p_a, state.slice_of, state.labeled, COMPLETE_SHARE, batch)
    if complete.any():  # label them completely; the rest of the batch goes to the others
        p_a = proposal(state.scale[0])
    for k in range(RESIDUAL_FOLDS if own_folds else 0):  # labeled: the model without their fold
        held = state.labeled & (state.fold == k)
        if held.any():
            p_a[held] = proposal(state.scale[1 + k])[held]
    n_unlabeled = int(unlabeled.sum())
    n_open = int((unlabeled & ~complete).sum())
    uniform = min(1.0, batch / n_unlabeled) if n_unlabeled else 0.0
    rest = batch - float((complete & unlabeled).sum())
    even = min(1.0, rest / n_open) if n_open else 0.0
    candidates = [np.full(m, uniform)] + [
        np.where(complete, 1.0, (1.0 - t) * even + t * p_a) for t in STRENGTHS[1:]
    ]
    inverse = np.array([1.0 / (1.0 - (1.0 - state.previous) * (1.0 - p)) - 1.0 for p in candidates])
    model = (inverse * state.scale[0] ** 2) @ state.kernel**2  # (T, G): the model's variances
    with np.errstate(divide="ignore", invalid="ignore"):  # the plan's, after a uniform batch
        level = np.where(state.before > 0, state.current * model[0] / state.before, 0.0)
    lab_inverse = inverse[:, state.labeled]
    choice = choose_strength(state.terms, lab_inverse, level, model)
    p = candidates[STRENGTHS.index(choice.strength)].copy()
    lab_fold = state.fold[state.labeled]
    for k in range(RESIDUAL_FOLDS if own_folds else 0):  # labeled: strength without their fold
        kept = lab_fold != k
        held = state.labeled & (state.fold == k)
        if held.any():
            own = choose_strength(state.terms[kept], lab_inverse[:, kept], level, model).strength
            p[held] = candidates[STRENGTHS.index(own)][held]
    return p, choice
