"""What smoothing promises: every slice, or the slices on average (``objective=``).

A smoothing model shrinks each slice's direct estimate toward a regression across slices. Stein's
lesson cuts both ways: the total error over slices falls, but a slice whose truth departs from the
regression -- a model that fails on one benchmark, exactly what an evaluator looks for -- is
pulled toward the others. Two promises are both legitimate, and the user chooses one:

``objective='ensemble'`` -- least total error, coverage on average over slices.
    Every slice reports the model's smoothed estimate with the model's own standard error (the
    posterior standard deviation of ``'pp-s'``, the Prasad-Rao root MSE of ``'fh'``): the
    estimators of Kawano, Li and Parker (2026) as published. Beside it,
    :func:`slicewise.inference.robust_eb.robust_critical`
    gives the robust empirical-Bayes interval of Armstrong, Kolesar and Plagborg-Moller (2022),
    which covers at the nominal rate on average over slices whatever the distribution of their
    departures from the regression.

``objective='slice'`` (the default) -- each slice's interval covers that slice, and no slice is
    much worse than its own estimate.
    The smoothed estimate is a *limited translation* of the direct one (Efron and Morris 1972):

    .. math::

        \\tilde\\theta_d = \\hat\\theta_d + \\operatorname{clip}\\bigl(\\theta^{s}_d - \\hat\\theta_d,
        \\,-c\\,se_d,\\; c\\,se_d\\bigr),

    with theta_d-hat and se_d the direct estimate and its standard error, theta_d^s the model's
    smoothed estimate and c = :data:`TRANSLATION`. Typical slices borrow; a departing slice
    moves by at most c standard errors whatever the model says, so its bias is at most
    c se_d and its mean squared error at most (1 + c^2) times the direct one, by construction.
    The interval is the direct one widened by the realised shift b_d = |theta-tilde - theta-hat|
    (:func:`slicewise.inference.bounded.interval_bounds` with the bias bound b_d): it contains
    the slice's own direct interval, so it covers the slice at least as often, for every slice,
    whether or not the model holds. Slices with fewer than :data:`PRECISE_LABELS` effective
    labels, whose direct estimate is little more than noise, take the smoothed estimate
    (no cap), with the same containing interval; slices without a direct standard error (a
    single label) keep the model's interval and are marked borrowed.

The cap trades total error for the worst slice's bias, which approaches c standard errors for a
slice that departs far from the model (a slice departing by 3.3 standard errors from a
regression that fits 14 others: bias 0.49 sd with c = 0.5, 0.32 sd with c = 0.3, 0.66 sd
without a cap; ``tests/core/test_trust.py``). c = 0.3 keeps it under 0.35 standard deviations;
the frontier of total error against the worst slice on the real families is in
docs/results/smoothing.md.

References
----------
Efron, B. and Morris, C. (1972). Limiting the risk of Bayes and empirical Bayes estimators --
Part II: The empirical Bayes case. *JASA* 67, 130-139.
Armstrong, T. B., Kolesar, M. and Plagborg-Moller, M. (2022). Robust empirical Bayes
confidence intervals. *Econometrica* 90(6), 2567-2602.
Kawano, S., Li, Z. R. and Parker, P. A. (2026). Prediction-powered smoothing and validation for
disaggregated AI evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import OBJECTIVES, BoolArray, FloatArray, Objective

__all__ = ["OBJECTIVES", "Borrowing", "Objective", "borrow"]

#: c of the limited translation: under ``objective='slice'`` a slice with at least
#: :data:`PRECISE_LABELS` effective labels moves by at most c of its standard errors.
TRANSLATION = 0.3

#: Slices with fewer effective labels take the smoothed estimate without a cap (slice objective).
PRECISE_LABELS = 10.0

#: A slice is *borrowed* when the slice's own direct estimate carries less than this share of the
#: reported one (more than half of it comes from the other slices), or when it has no direct
#: standard error at all. The same threshold marks a profile's grid point that leans on the
#: pooled coefficient (:func:`slicewise.methods.borrowing.choose_and_fit`), so the word means one
#: thing: most of the estimate comes from elsewhere.
BORROWED_WEIGHT = 0.5

#: One line per objective: the promise, in plain words, for notes, reports and ``--help``.
PROMISES: dict[str, str] = {
    "slice": (
        "each slice's interval covers that slice, and no slice is pulled far from its own "
        "estimate (objective='slice')"
    ),
    "ensemble": (
        "the least total error across slices, with intervals that cover on average over "
        "slices, not each slice (objective='ensemble')"
    ),
}


@dataclass(frozen=True, eq=False)
class Borrowing:
    """The reported estimates of every slice under one objective.

    Attributes
    ----------
    estimate, se : ndarray of shape (D,)
        The reported point and standard error: under ``'slice'`` the direct standard error
        (the model's where there is none), under ``'ensemble'`` the model's.
    bias_bound : ndarray of shape (D,)
        The realised shift from the direct estimate that widens the interval (``'slice'``), 0
        under ``'ensemble'``.
    own_weight : ndarray of shape (D,)
        Share of the reported estimate that is the slice's own direct estimate (1 where nothing
        is borrowed, NaN where the slice has no estimate).
    borrowed : ndarray of bool, shape (D,)
        ``own_weight`` below :data:`BORROWED_WEIGHT`, or no direct standard error.
    moved : ndarray of bool, shape (D,)
        Slices whose reported point is not their direct estimate.
    capped : ndarray of bool, shape (D,)
        Slices whose shift the limited translation cut short (``'slice'``).
    model_based : ndarray of bool, shape (D,)
        Slices whose standard error is the model's (no direct one, or ``'ensemble'``).
    disagree : ndarray of bool, shape (D,)
        Slices whose smoothed estimate lies outside their own direct interval.
    """

    estimate: FloatArray
    se: FloatArray
    bias_bound: FloatArray
    own_weight: FloatArray
    borrowed: BoolArray
    moved: BoolArray
    capped: BoolArray
    model_based: BoolArray
    disagree: BoolArray


def borrow(
    direct: FloatArray,
    direct_se: FloatArray,
    smoothed: FloatArray,
    smoothed_se: FloatArray,
    weight: FloatArray,
    n_labeled: FloatArray,
    critical: FloatArray | float,
    objective: Objective,
) -> Borrowing:
    """Combine direct and smoothed estimates under ``objective`` (see module notes).

    Parameters
    ----------
    direct, direct_se : ndarray of shape (D,)
        Direct estimates and standard errors (NaN where missing).
    smoothed, smoothed_se : ndarray of shape (D,)
        The model's smoothed estimates and standard errors (NaN where not fitted).
    weight : ndarray of shape (D,)
        The model's shrinkage weight of each slice's own direct estimate.
    n_labeled : ndarray of shape (D,)
        Effective number of labeled items per slice.
    critical : float or ndarray of shape (D,)
        The direct interval's critical value (only to flag disagreement).
    objective : {'slice', 'ensemble'}

    Returns
    -------
    Borrowing

    Examples
    --------
    A slice with 40 labels that the model would pull by three standard errors moves by 0.3 of
    one under the slice objective, and by all three under the ensemble objective:

    >>> import numpy as np
    >>> one = lambda v: np.array([v])
    >>> borrow(one(0.5), one(0.05), one(0.65), one(0.02), one(0.3), one(40.0), 1.96,
    ...        "slice").estimate.round(3).tolist()
    [0.515]
    >>> borrow(one(0.5), one(0.05), one(0.65), one(0.02), one(0.3), one(40.0), 1.96,
    ...        "ensemble").estimate.round(3).tolist()
    [0.65]
    """
    has_direct = np.isfinite(direct)
    has_se = has_direct & np.isfinite(direct_se)
    fitted = np.isfinite(smoothed)
    full_shift = np.where(fitted & has_direct, smoothed - direct, 0.0)
    if objective == "ensemble":
        shift = full_shift
        model_based = fitted
    else:
        limit = np.where(
            n_labeled < PRECISE_LABELS, np.inf, TRANSLATION * np.where(has_se, direct_se, 0.0)
        )
        shift = np.clip(full_shift, -limit, limit)
        model_based = fitted & ~has_se
    estimate = np.where(model_based, smoothed, np.where(has_direct, direct + shift, np.nan))
    se = np.where(model_based, smoothed_se, direct_se)
    bound = np.where(model_based, 0.0, np.abs(shift))
    with np.errstate(invalid="ignore", divide="ignore"):
        applied = np.where(
            full_shift != 0.0, shift / np.where(full_shift != 0.0, full_shift, 1.0), 0.0
        )
        own = np.where(model_based, weight, 1.0 - (1.0 - weight) * applied)
        own = np.where(fitted, own, 1.0)
        own = np.where(np.isfinite(estimate), own, np.nan)
        leans = np.isfinite(own) & (own < BORROWED_WEIGHT)
    q = np.broadcast_to(np.asarray(critical, dtype=np.float64), direct.shape)
    with np.errstate(invalid="ignore"):
        disagree = fitted & has_se & (np.abs(full_shift) > q * np.where(has_se, direct_se, np.inf))
    moved = np.isfinite(estimate) & (model_based | (shift != 0.0))
    return Borrowing(
        estimate=np.asarray(estimate, dtype=np.float64),
        se=np.asarray(se, dtype=np.float64),
        bias_bound=np.asarray(bound, dtype=np.float64),
        own_weight=np.asarray(own, dtype=np.float64),
        borrowed=np.asarray(leans | (fitted & ~has_se), dtype=bool),
        moved=np.asarray(moved, dtype=bool),
        capped=np.asarray(np.abs(shift) < np.abs(full_shift), dtype=bool),
        model_based=np.asarray(model_based, dtype=bool),
        disagree=np.asarray(disagree, dtype=bool),
    )
