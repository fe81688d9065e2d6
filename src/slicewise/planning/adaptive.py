"""``sw.next_items``: which unlabeled items to label next, with inclusion probabilities that keep
the final profile's estimate unbiased and its intervals valid across several adaptive batches.

**The design carried by the table.** Every call is one batch b of Poisson sampling: each pool item
gets a probability p_ib, computed from what is known before the batch (the labels so far, the
cheap signals), and each unlabeled item is selected independently with it. The column ``pi``
holds, for every row, the accumulated probability

.. math::

    \\pi_i = 1 - (1 - \\pi_{i0}) \\prod_{b \\ge 1} (1 - p_{ib}),

with pi_i0 = n0 / M for the labels that existed before the first call (a uniform pilot, taken as
Poisson sampling at rate n0 / M; 0 without a pilot). The p_ib are computed for all M items in
every batch, labeled ones included, so a labeled item's pi_i is its probability of ending up
labeled: given the other items' outcomes, item i is labeled in batch b with probability p_ib if
it was not labeled before, independently across batches, which gives the product form. This is
the conditional-independence (martingale) argument of active inference (Zrnic and Candes, 2024):
p_ib may depend on every earlier label, because it is fixed before batch b is drawn. It is exact
when an item's probability does not depend on its own label; here p_ib uses the labels through a
fitted model and the slices' standard errors, where one label moves it by O(1/n), and the seeded
Monte-Carlo test of ``tests/planning`` measures the coverage of the whole protocol.

The final estimate is ``sw.profile(table, ..., inclusion="pi")`` with a method that weights by
inclusion probabilities (the default ``auto``, ``global_cv``, ``lace``, ...; see
``sw.methods()["inclusion"]``): local means with design weights k_i / pi_i and the Poisson design
variance of :mod:`slicewise.inference.variance` (for ``auto``, its cross-validated version in
:mod:`slicewise.inference.cv_variance`).

**Adaptive probabilities.** Each item belongs to its nearest grid point (its slice). The batch
of expected size m is split over the slices, then spread within each slice; U is the unlabeled
items and u the uniform floor (default 0.3), and no unlabeled item's probability is below
u m / |U| (the floor: an item's weight 1 / pi_i, and with it its contribution to the variance,
is at most 1 / u times what uniform labeling of the batch would give it).

*Across slices*, slice g expects F_g + A_g labels: the floor's share F_g = u m U_g / |U| and a
share A_g of the adaptive part (1 - u) m from :func:`slice_allocation`, water-filling to a common
variance with each slice's per-label residual variance, labeled effective size and pool size
from :func:`~slicewise.planning.plan.plan` (so the labels already in a slice, and the floor's
share, count; each slice's residual variance shrunk toward the pooled one with the weight of
:data:`PRIOR_LABELS` labels, since a pilot's few labels per slice measure it roughly), which is
the allocation that minimises the worst slice's predicted variance.

*Within a slice*, p_i = min{1, max(u m / |U|, c_g sd_i)}, c_g such that the slice's unlabeled
items expect F_g + A_g labels (:func:`floored_probabilities`): the Neyman allocation for a mean
of residuals (p_i proportional to their standard deviation), clipped at the floor and at 1,
which minimises the slice's variance sum_i sd_i^2 / p_i under those bounds. The residual scale
sd_i is sqrt{f_i (1 - f_i)} (clipped to [0.1, 0.5]) from a logistic model f of Y on (Z, S)
fitted on the current labels (the learner's covariates of ``auto``: signals, level indicators
and level x signal terms; for a continuous profile also each item's normalised kernel weights
w_g(z_i) at up to :data:`MAX_BASIS` grid points and w_g(z_i) x signal, so a signal that is good
in one region of Z and noise elsewhere, as the specialists of I.3, is modelled where it is
good). (Until this round the floor was added to every item, p_i =
(m / |U|) {(1 - u) s_i / mean_U(s) + u}, which gives the items the model finds hard u m / |U|
more than they need, taken from the others: docs/results/adaptive.md compares them.)

**Own labels.** A labeled item's p_ib of the later batches enters its pi_i, so it should not
depend on the item's own label: if it did, a surprising label (a failure where the signals
predict success) would raise the item's own later probabilities, hence its pi_i, and the
surprising labels would be down-weighted, biasing the estimate toward what the signals predict.
The residual model is the strong channel (it fits the item's label, with up to hundreds of
level x signal columns on a few hundred labels): on PSN-IRT by benchmark, with the model fitted
on every label for every item, the estimate of MATH was biased by +0.46 standard errors (300
draws, t = 7.8) and TheoremQA's interval covered 0.897 (docs/results/adaptive.md). So the rows
are dealt to :data:`RESIDUAL_FOLDS` fixed folds by input row (:func:`row_folds`), and a labeled
item of fold k gets the p_ib computed with the residual model fitted without fold k's labels,
for every item (so that its slice's constant c_g does not see them either); the unlabeled
items' p_ib use the model fitted on every label. The slices' residual variances from
:func:`plan` still contain every label, a weaker channel (one label moves a slice's variance by
O(1 / n_g)): after the change the largest bias over PSN-IRT's slices was +0.22 standard errors
(t = 3.9) and every slice covered 0.94-1.00. Taking that channel out too (each fold's labels
removed from the plan as well, five more fits of the method per batch) was measured and not
kept: the weights of the labeled items then scatter and the intervals widen with the MSE
unchanged (Setting B: mean worst half-width +27%, coverage 0.98).

**Small slices are labeled completely.** When a slice's expected labeled count after the batch
(its labels so far plus the probabilities of its unlabeled items) reaches :data:`COMPLETE_SHARE`
of its items, and its unlabeled items fit in half the batch (with those of the other slices
completed, the smallest first), every item of the slice gets p_ib = 1 (labeled ones included,
so all its pi_i become 1) and the other items share the rest of the batch, m' = m - (its
unlabeled items), with the same formula (floor u m' / |U'| on the remaining unlabeled items
U'). Its estimate is then its exact mean with zero variance. Without this, a small slice that
the water-filling labels heavily ends with most items labeled under unequal probabilities near
1, where the calibrated Poisson variance of :mod:`slicewise.inference.variance`,
sum_L (1 - g pi_i) w_i^2 (e_i - ebar)^2 with g = sum_L (1 / pi_i) / N above 1, has negative
terms and is clipped to 0: on PSN-IRT by benchmark (HumanEval, 23 items of 6,000) a third of
the adaptive runs had a zero-width interval and the slice's intervals covered 0.57
(docs/results/adaptive.md).
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray, Kind
from .._validation import (
    check_choice,
    check_level,
    check_nonnegative,
    check_positive_int,
    check_rng,
)
from ..data.files import read_table
from ..data.table import MissingRule
from ..exceptions import SlicewiseWarning
from .plan import _context, nearest_point, plan

FUNC = "next_items"
Strategy = Literal["adaptive", "uniform"]
STRATEGIES: tuple[Strategy, ...] = ("adaptive", "uniform")
#: Fewest labels (and both label values) before the adaptive strategy fits its models.
MIN_ADAPTIVE_LABELS = 20
#: Weight (in labels) of the pooled residual variance in each slice's (:func:`slice_allocation`):
#: with 20 the labels saved on Setting C rose from 11% to 19% (30 seeds), the others 0-5 points.
PRIOR_LABELS = 20.0
#: Clip of the predicted residual standard deviation sd_i.
RESIDUAL_SD = (0.1, 0.5)
#: Folds of the residual model for the labeled items' probabilities (module notes, *Own labels*).
RESIDUAL_FOLDS = 5
#: Most grid points whose kernel weights enter the residual model of a continuous profile.
MAX_BASIS = 10
#: A slice whose expected labeled share after a batch reaches this is labeled completely.
COMPLETE_SHARE = 0.5


def residual_design(pilot: Any) -> FloatArray:
    """The covariates of the residual model in canonical row order: the learner's design of
    (Z, S), and for a continuous profile the kernel weights of at most :data:`MAX_BASIS` grid
    points and their products with the signals (module notes)."""
    from ..estimators.learner_design import learner_design

    items, ctx = pilot.items, pilot.ctx
    design = learner_design(items.z, ctx.locality.kind, ctx.features, "logistic")
    if ctx.locality.kind == "continuous":  # signal effects that vary along Z, grid point by point
        kernel = ctx.kernel(1.0)
        dense = np.asarray(kernel if isinstance(kernel, np.ndarray) else kernel.toarray())
        g = dense.shape[1]
        dense = dense[:, np.unique(np.round(np.linspace(0, g - 1, min(g, MAX_BASIS))).astype(int))]
        w = dense / np.maximum(dense.sum(axis=1, keepdims=True), 1e-300)
        inter = (w[:, :, None] * ctx.features[:, None, :]).reshape(w.shape[0], -1)
        design = np.column_stack([design, w, inter])
    return np.asarray(design, dtype=np.float64)


def row_folds(m: int) -> IntArray:
    """The fold of every input row, 0 .. :data:`RESIDUAL_FOLDS` - 1 (fixed, label-blind)."""
    return np.asarray(np.random.default_rng(0).permutation(m) % RESIDUAL_FOLDS, dtype=np.intp)


def _residual_scales(pilot: Any, c: float, folds: IntArray) -> FloatArray:
    """sqrt(f (1 - f)) of a logistic model f of Y on (Z, S) for every item (for a continuous
    profile with kernel-weight x signal terms: module notes), shape (1 + F, M) in canonical
    order: row 0 from the model fitted on all the labels, row 1 + k from the model fitted
    without the labels of fold k; ``folds`` is every input row's fold (:func:`row_folds`;
    module notes, *Own labels*)."""
    from ..estimators.predictors import fit_logistic

    items = pilot.items
    design = residual_design(pilot)
    index = items.labeled_index
    y = items.label[index]
    fold = folds[items.input_rows(index)]
    f = np.empty((1 + RESIDUAL_FOLDS, items.n_pool))
    f[0] = fit_logistic(design[index], y, c=c).predict(design)
    for k in range(RESIDUAL_FOLDS):
        kept = fold != k
        f[1 + k] = fit_logistic(design[index[kept]], y[kept], c=c).predict(design)
    return np.asarray(np.clip(np.sqrt(f * (1.0 - f)), *RESIDUAL_SD), dtype=np.float64)


def next_items(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None = None,
    label: str,
    batch: int = 200,
    strategy: Strategy = "adaptive",
    halfwidth: float = 0.05,
    level: float = 0.95,
    method: str = "auto",
    floor: float = 0.3,
    kind: Kind | None = None,
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    id: str | None = None,
    missing: MissingRule = "impute",
    pi: str = "pi",
    selected: str = "selected",
    C: float = 1.0,
    rng: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Choose the next batch of items to label; the table carries the sampling design.

    Parameters
    ----------
    table : DataFrame or path
        The pool with the labels so far. On the first call the labels present are the pilot
        (taken as a uniform sample); on later calls the table returned by the previous call,
        with the selected rows labeled.
    z, signals, kind, grid, bandwidth, id, missing
        As in :func:`slicewise.profile`.
    label : str
        Gold label column (missing = unlabeled).
    batch : int, default 200
        Expected number of items selected (Poisson sampling: the realized number varies). A slice
        that the batch would label past :data:`COMPLETE_SHARE` of its items is labeled completely,
        within this number (module notes).
    strategy : {'adaptive', 'uniform'}, default 'adaptive'
        'uniform': every unlabeled item with probability batch / |U|. 'adaptive': see the module
        notes (the batch levels the slices' predicted variances, within a slice in proportion to
        the predicted residual scale, with a uniform floor).
    halfwidth, level : float
        The target half-width and level of :func:`slicewise.plan`, whose per-slice residual
        variances the allocation uses; the allocation itself levels the slices' predicted
        variances with the batch given, so ``halfwidth`` does not change it.
    method : str, default 'auto'
        Method whose standard errors define the slices' residual variances (one that supports
        design weights); use the same one for the final profile (the default of
        :func:`slicewise.profile` is 'auto' too). Planning with one method and estimating with
        another loses most of the gain: on Setting B, planning with 'auto' and estimating with
        'lace' saved 8% of the labels, 'lace' with 'lace' 17%, 'auto' with 'auto' 33%
        (docs/results/adaptive.md).
    floor : float, default 0.3
        Share u of the batch spread uniformly; every unlabeled item's probability is at least
        u x batch / |U| (u x m' / |U'| over the items outside slices labeled completely, m' the
        batch left to them).
    pi, selected : str
        Names of the columns written (and, for ``pi``, read back on later calls).
    C : float, default 1
        Inverse L2 penalty of the logistic residual model.
    rng : int or numpy Generator, optional
        Randomness of the draw (None: fresh entropy; pass a seed to reproduce a batch).

    Returns
    -------
    DataFrame
        The whole table (same rows, same order) with ``selected`` (bool: label these now) and
        ``pi`` (every row's accumulated inclusion probability; module notes) added or updated.

    Raises
    ------
    ValueError
        When rows selected by the previous call are still unlabeled (label them first: an
        unlabeled selected item is non-response, which no weight can correct), or ``pi`` holds
        values outside [0, 1] (or 0 on a labeled row).

    Notes
    -----
    Protocol: ``t = sw.next_items(t, ...)``, label the rows where ``t.selected``, repeat, then
    ``sw.profile(t, ..., inclusion='pi')`` with the same method. See
    :mod:`slicewise.planning.adaptive` for why several batches stay valid (Zrnic and Candes,
    "Active Statistical Inference", ICML 2024).

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> level = rng.integers(1, 4, 2000)
    >>> y = (rng.random(2000) < 0.6).astype(float)
    >>> frame = pd.DataFrame({"level": level, "judge": y + rng.normal(0, 1, 2000), "y": y})
    >>> truth = frame["y"].copy()
    >>> frame.loc[rng.permutation(2000)[100:], "y"] = np.nan
    >>> out = sw.next_items(frame, z="level", signals="judge", label="y", kind="ordinal",
    ...                     batch=100, rng=1)
    >>> out.loc[out.selected, "y"] = truth[out.selected]   # label them
    >>> res = sw.profile(out, z="level", signals="judge", label="y", kind="ordinal",
    ...                  inclusion="pi", rng=0)
    >>> res.size
    3
    """
    batch = check_positive_int(batch, name="batch", func=FUNC)
    strategy = check_choice(strategy, STRATEGIES, name="strategy", func=FUNC)
    level = check_level(level, func=FUNC)
    floor = check_nonnegative(floor, name="floor", func=FUNC)
    if not 0.0 < floor <= 1.0:
        raise ValueError(
            f"The 'floor' parameter of {FUNC} must be a float in (0, 1] (the uniform share of the "
            f"batch). Got {floor!r} instead."
        )
    generator = check_rng(rng, func=FUNC)
    frame = read_table(table) if isinstance(table, str | os.PathLike) else table.copy()
    if label not in frame.columns:
        raise ValueError(f"The 'label' column {label!r} of {FUNC} is not in the table.")
    labeled = frame[label].notna().to_numpy()
    m = len(frame)
    previous = _previous(frame, pi, selected, labeled, m)
    unlabeled = ~labeled
    n_lab = int(labeled.sum())
    notes: list[str] = []
    adaptive = strategy == "adaptive"
    values = frame.loc[labeled, label]
    if adaptive and (n_lab < MIN_ADAPTIVE_LABELS or values.nunique() < 2):
        adaptive = False
        notes.append(
            f"adaptive needs at least {MIN_ADAPTIVE_LABELS} labels with both values to fit its "
            "models; this batch is uniform."
        )
    slice_of = np.full(m, -1)  # each row's nearest grid point (adaptive only; -1: none)
    if adaptive:
        inclusion = None if pi not in frame.columns else pi
        pilot = _context(
            frame,
            z=z,
            signals=signals,
            label=label,
            kind=kind,
            grid=grid,
            bandwidth=bandwidth,
            id=id,
            missing=missing,
        )
        need = plan(
            frame,
            z=z,
            signals=signals,
            label=label,
            halfwidth=halfwidth,
            level=level,
            method=method,
            kind=kind,
            grid=grid,
            bandwidth=bandwidth,
            inclusion=inclusion,
            id=id,
            missing=missing,
            rng=0,
        )
        nearest = nearest_point(pilot.ctx.kernel(1.0))
        rows = pilot.items.input_rows(np.arange(m))
        slice_of[rows] = nearest
        fold = row_folds(m)
        sd = np.zeros((1 + RESIDUAL_FOLDS, m))
        sd[:, rows] = _residual_scales(pilot, C, fold)

        def probabilities(scale: FloatArray, complete: np.ndarray) -> FloatArray:
            open_ = unlabeled & ~complete
            left = float(batch) - float((complete & unlabeled).sum())
            rest = adaptive_probabilities(need, slice_of, scale, open_, left, floor, PRIOR_LABELS)
            return np.asarray(np.where(complete, 1.0, rest), dtype=np.float64)

        p = probabilities(sd[0], np.zeros(m, dtype=bool))
        complete = _slices_to_complete(p, slice_of, labeled, COMPLETE_SHARE, float(batch))
        if complete.any():  # label them completely; the rest of the batch goes to the others
            p = probabilities(sd[0], complete)
        for k in range(RESIDUAL_FOLDS):  # labeled items: the residual model without their fold
            held = labeled & (fold == k)
            if held.any():
                p[held] = probabilities(sd[1 + k], complete)[held]
    else:
        n_open = int(unlabeled.sum())
        p = np.full(m, min(1.0, batch / n_open) if n_open else 0.0)
    draw = generator.random(m) < p
    out = frame.copy()
    out[selected] = unlabeled & draw
    out[pi] = 1.0 - (1.0 - previous) * (1.0 - p)
    for note in notes:
        warnings.warn(note, SlicewiseWarning, stacklevel=2)
    return out


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


def _slices_to_complete(
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


def _previous(
    frame: pd.DataFrame, pi: str, selected: str, labeled: np.ndarray, m: int
) -> FloatArray:
    """The accumulated inclusion probabilities before this batch (pilot: n0 / M)."""
    if pi not in frame.columns:
        return np.full(m, labeled.sum() / m)
    if selected in frame.columns:
        chosen = frame[selected].fillna(False).astype(bool).to_numpy()
        missing = chosen & ~labeled
        if missing.any():
            raise ValueError(
                f"{int(missing.sum())} row(s) selected by the previous call (column "
                f"'{selected}') are still unlabeled; label every selected row before asking for "
                "the next batch (an unlabeled selected item is non-response, which the inclusion "
                "probabilities cannot correct)."
            )
    values = pd.to_numeric(frame[pi], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values) | (values < 0.0) | (values > 1.0) | (labeled & (values <= 0.0))
    if bad.any():
        raise ValueError(
            f"Inclusion-probability column '{pi}' has {int(bad.sum())} missing values or values "
            "outside [0, 1] (or 0 on a labeled row); it must be the column written by the "
            f"previous call of {FUNC}."
        )
    return values
