"""How a batch of :func:`slicewise.next_items` is spread: across slices by water-filling to a
common predicted variance, within a slice by the floored Neyman allocation on the residual scale,
and small slices labeled completely (module notes of :mod:`slicewise.planning.adaptive`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._typing import FloatArray, IntArray

#: Least weight (in labels) of the pooled residual variance in each slice's
#: (:func:`slice_allocation`): with 20 the labels saved on Setting C rose from 11% to 19% (30
#: seeds), the others 0-5 points. :func:`prior_labels` raises it where the slices' variances
#: differ by less than their noise.
PRIOR_LABELS = 20.0
#: Most weight of the pooled residual variance (slices that do not differ at all).
MAX_PRIOR_LABELS = 1e6


def prior_labels(sigma2: FloatArray, n_eff: FloatArray, least: float = PRIOR_LABELS) -> float:
    """The weight n0 (in labels) of the pooled residual variance in each slice's, by the
    method of moments (empirical Bayes; Morris 1983, Section 2).

    A slice's per-label residual variance measured on n_g labels has sampling variance about
    2 sigma^4 / n_g (normal theory). The variance of the measured sigma_g^2 across slices, less
    the mean of that noise, estimates the spread tau^2 of the true ones; a slice's estimate is
    then best shrunk toward the pooled one with the weight of n0 = 2 sigma-bar^4 / tau^2 labels
    (its noise over the spread). Where the slices do not differ beyond their noise (tau^2 = 0:
    the judge-quality design, whose slices are alike), n0 is :data:`MAX_PRIOR_LABELS` and the
    allocation ignores the noise instead of chasing it; it is at least ``least``.
    """
    used = n_eff > 1.0
    if used.sum() < 2:
        return least
    pooled = float(np.sum(n_eff[used] * sigma2[used]) / n_eff[used].sum())
    noise = float(np.mean(2.0 * pooled**2 / n_eff[used]))
    spread = float(np.var(sigma2[used], ddof=1)) - noise
    if spread <= 0.0:
        return MAX_PRIOR_LABELS
    return float(np.clip(2.0 * pooled**2 / spread, least, MAX_PRIOR_LABELS))


#: A slice whose expected labeled share after a batch reaches this is labeled completely.
COMPLETE_SHARE = 0.5


def slice_allocation(
    need: Any,
    unlabeled: FloatArray,
    batch: float,
    floor: float,
    prior_labels: float = 0.0,
) -> FloatArray:
    """Labels of the batch's adaptive part per grid point: water-filling to a common variance.

    With sigma^2(g), n_eff(g) and N(g) of :class:`~slicewise.planning.result.PlanResult` (the
    labels already there count through n_eff), slice g reaches the variance V with
    Delta_g(V) = max{0, ((1 - f) sigma^2 - V n_eff) / (V + sigma^2 / N)} more labels (f = n_eff /
    N). The uniform floor gives it F_g = u m U_g / |U| of them anyway (U_g its unlabeled items),
    so the adaptive part is A_g(V) = min{max(0, Delta_g(V) - F_g), U_g - F_g}, and V is the
    smallest variance with sum_g A_g(V) <= (1 - u) m: the batch goes to the slices whose
    predicted variance is the largest, until they are level (the minimax allocation for the
    worst slice's half-width, given the labels already there). With ``prior_labels`` n0 > 0 each
    sigma^2(g) is first shrunk toward the n_eff-weighted mean over slices, with the weight of n0
    labels: (n_eff sigma^2 + n0 sigma^2_pooled) / (n_eff + n0).
    """
    sigma2 = np.asarray(need.sigma, dtype=np.float64) ** 2
    n_eff = np.asarray(need.n_labeled, dtype=np.float64)
    if prior_labels > 0 and n_eff.sum() > 0:  # a slice's variance from few labels is noisy
        pooled = float(np.sum(n_eff * sigma2) / n_eff.sum())
        sigma2 = (n_eff * sigma2 + prior_labels * pooled) / (n_eff + prior_labels)
    n_pool = np.maximum(np.asarray(need.n_pool, dtype=np.float64), 1e-12)
    fraction = np.clip(n_eff / n_pool, 0.0, 1.0)
    total_u = float(unlabeled.sum())
    if total_u <= 0:
        return np.zeros(unlabeled.size)
    fixed = floor * min(batch, total_u) * unlabeled / total_u
    budget = (1.0 - floor) * min(batch, total_u)

    def adaptive_part(v: float) -> FloatArray:
        delta = ((1.0 - fraction) * sigma2 - v * n_eff) / (v + sigma2 / n_pool)
        return np.asarray(
            np.clip(delta - fixed, 0.0, np.maximum(unlabeled - fixed, 0.0)), dtype=np.float64
        )

    if adaptive_part(0.0).sum() <= budget:  # the batch can label every slice's need
        return adaptive_part(0.0)
    # sum_g A_g(V) falls as V grows: bracket the budget between 0 and a V that needs none
    low, high = -700.0, math.log(max(float(sigma2.max()), 1e-12))
    while adaptive_part(math.exp(high)).sum() > budget and high < 700.0:
        high += 2.0
    for _ in range(60):
        mid = 0.5 * (low + high)
        if adaptive_part(math.exp(mid)).sum() > budget:
            low = mid
        else:
            high = mid
    return adaptive_part(math.exp(high))


def adaptive_probabilities(
    need: Any,
    slice_of: IntArray,
    sd: FloatArray,
    open_: np.ndarray,
    batch: float,
    floor: float,
    prior_labels: float,
) -> FloatArray:
    """Every row's p_ib when the items ``open_`` share ``batch`` (module notes): each slice's
    expected labels from :func:`slice_allocation`, spread by :func:`floored_probabilities`."""
    n_open = int(open_.sum())
    if n_open == 0:
        return np.zeros(sd.size)
    if batch >= n_open:
        return np.ones(sd.size)
    low = floor * batch / n_open  # rows outside every slice get the floor
    inside = open_ & (slice_of >= 0)
    counts = np.bincount(slice_of[inside], minlength=need.size).astype(np.float64)
    batch_in = batch - low * float((open_ & (slice_of < 0)).sum())
    labels = slice_allocation(need, counts, batch_in, floor, prior_labels)
    total_in = max(float(counts.sum()), 1.0)
    target = floor * batch_in * counts / total_in + labels
    short = batch_in - float(target.sum())
    if short > 1e-9:  # every slice's need is met: spread the rest over what is left open
        room = np.maximum(counts - target, 0.0)
        target = target + short * room / max(float(room.sum()), 1e-12)
    p = floored_probabilities(sd, slice_of, open_, target, floor * batch_in / total_in)
    return np.where(slice_of >= 0, p, low)


def floored_probabilities(
    sd: FloatArray, slice_of: IntArray, open_: np.ndarray, target: FloatArray, low: float
) -> FloatArray:
    """Within each slice k, p_i = min{1, max(low, c_k sd_i)}, c_k such that the slice's open
    items expect target_k labels; rows outside every slice get ``low``.

    The Neyman allocation under the floor: among probabilities with low <= p_i <= 1 and the
    slice's expected labels fixed, it minimises the slice's variance sum_i sd_i^2 / p_i (the
    Lagrange condition p_i proportional to sd_i, clipped at both bounds). Computed for every
    row of the slice, open or not (a labeled row gets what it would get if open).
    """
    p = np.full(sd.size, min(low, 1.0))
    for k in range(target.size):
        rows = slice_of == k
        mine = rows & open_
        n_k = int(mine.sum())
        if n_k == 0:
            continue
        if float(target[k]) >= n_k - 1e-9:
            p[rows] = 1.0
            continue
        scale = np.maximum(sd[mine], 1e-12)
        lo, hi = 0.0, 1.0 / float(scale.min())  # the sum at hi is n_k > target
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if float(np.clip(mid * scale, low, 1.0).sum()) > float(target[k]):
                hi = mid
            else:
                lo = mid
        p[rows] = np.clip(0.5 * (lo + hi) * np.maximum(sd[rows], 1e-12), low, 1.0)
    return np.asarray(p, dtype=np.float64)


def slices_to_complete(
    p: FloatArray, slice_of: IntArray, labeled: np.ndarray, share: float, batch: float
) -> np.ndarray:
    """Rows of the slices to label completely (module notes): the expected labeled count after
    the batch reaches ``share`` of the slice's items, and the completed slices' unlabeled items
    take at most half the batch (smallest slices first)."""
    inside = slice_of >= 0
    if not inside.any():
        return np.zeros(p.size, dtype=bool)
    g = int(slice_of.max()) + 1
    where = slice_of[inside]
    size = np.bincount(where, minlength=g).astype(np.float64)
    open_ = np.bincount(where, weights=(~labeled[inside]).astype(np.float64), minlength=g)
    given = np.bincount(where, weights=np.where(labeled, 0.0, p)[inside], minlength=g)
    eligible = (size - open_ + given >= share * size) & (open_ > 0)
    complete = np.zeros(g, dtype=bool)
    used = 0.0
    for k in np.flatnonzero(eligible)[np.argsort(open_[eligible], kind="stable")]:
        if used + open_[k] <= 0.5 * batch:
            complete[k] = True
            used += open_[k]
    return np.asarray(inside & complete[np.maximum(slice_of, 0)], dtype=bool)
