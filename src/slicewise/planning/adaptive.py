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
:func:`~slicewise.planning.allocation.prior_labels` labels, at least :data:`PRIOR_LABELS` and
more where the slices' variances differ by less than their noise, since a pilot's few labels
per slice measure them roughly), which is the allocation that minimises the worst slice's
predicted variance.

*Within a slice*, p_i = min{1, max(u m / |U|, c_g sd_i)}, c_g such that the slice's unlabeled
items expect F_g + A_g labels (:func:`~slicewise.planning.allocation.floored_probabilities`): the
Neyman allocation for a mean of residuals (p_i proportional to their standard deviation),
clipped at the floor and at 1, which minimises the slice's variance sum_i sd_i^2 / p_i under
those bounds. The residual scale sd_i is that of :mod:`slicewise.planning.residual` (a
cross-fitted logistic model of Y on the signals, the profile, the ``uncertainty=`` columns'
products with the signals and the signals' disagreement): labels go to the items where the
signals are unreliable, inside slices as well as between them (active inference, Zrnic and
Candes 2024).

**Never worse than uniform.** The proposal above is not taken as it is: the batch's
probabilities are p(t) = (1 - t) p^u + t p^a between uniform ones p^u and the proposal p^a,
with the strength t chosen by :mod:`slicewise.planning.safeguard`, which estimates on the labels
so far the design variance each candidate would give and moves away from uniform only as far
as the gain on the worst slice and on the mean over slices is significant. The returned
table's ``attrs['notes']`` say what was chosen and why, ``attrs['design']`` holds the numbers.

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
items' p_ib use the model fitted on every label. The strength of the batch (the safeguard
below) is chosen the same way: a labeled item of fold k takes the strength chosen on the
residuals of the other folds' labels. The slices' residual variances from
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

import os
import warnings
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._typing import FloatArray, Kind
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
from ..methods.options import DEFAULTS, MethodOptions
from .allocation import (
    COMPLETE_SHARE,
    PRIOR_LABELS,
    adaptive_probabilities,
    floored_probabilities,
    slice_allocation,
)
from .batch import MIN_ADAPTIVE_LABELS, AdaptiveState, adaptive_state, batch_design
from .plan import Columns
from .residual import RESIDUAL_FOLDS, RESIDUAL_SD, residual_design, row_folds
from .safeguard import DesignChoice

__all__ = [
    "COMPLETE_SHARE",
    "PRIOR_LABELS",
    "RESIDUAL_FOLDS",
    "RESIDUAL_SD",
    "AdaptiveState",
    "adaptive_probabilities",
    "adaptive_state",
    "batch_design",
    "floored_probabilities",
    "next_items",
    "residual_design",
    "row_folds",
    "slice_allocation",
]

FUNC = "next_items"
Strategy = Literal["adaptive", "uniform"]
STRATEGIES: tuple[Strategy, ...] = ("adaptive", "uniform")


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
    uncertainty: str | Sequence[str] | None = DEFAULTS.uncertainty,
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
    uncertainty : str or list of str, optional
        Columns that say how reliable the signals are on each item (a judge's confidence): the
        residual model reads them and their products with the signals
        (:mod:`slicewise.data.uncertainty`). Pass the same to the final
        :func:`slicewise.profile`.
    rng : int or numpy Generator, optional
        Randomness of the draw (None: fresh entropy; pass a seed to reproduce a batch).

    Returns
    -------
    DataFrame
        The whole table (same rows, same order) with ``selected`` (bool: label these now) and
        ``pi`` (every row's accumulated inclusion probability; module notes) added or updated.
        ``attrs['notes']`` says how the batch was designed and why; for an adaptive batch,
        ``attrs['design']`` holds the strength chosen and the estimated variance ratios
        (:class:`~slicewise.planning.safeguard.DesignChoice`).

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
    options = MethodOptions.from_arguments({"uncertainty": uncertainty, "C": C}, func=FUNC)
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
    fallbacks: list[str] = []
    adaptive = strategy == "adaptive"
    values = frame.loc[labeled, label]
    if adaptive and (n_lab < MIN_ADAPTIVE_LABELS or values.nunique() < 2):
        adaptive = False
        fallbacks.append(
            f"adaptive needs at least {MIN_ADAPTIVE_LABELS} labels with both values to fit its "
            "models; this batch is uniform."
        )
    design: DesignChoice | None = None
    if adaptive:
        columns = Columns(
            z=z,
            signals=signals,
            label=label,
            kind=kind,
            grid=grid,
            bandwidth=bandwidth,
            id=id,
            missing=missing,
            uncertainty=options.uncertainty,
        )
        state = adaptive_state(
            frame,
            columns,
            halfwidth=halfwidth,
            level=level,
            method=method,
            inclusion=pi if pi in frame.columns else None,
            C=options.C,
            floor=floor,
            previous=previous,
        )
        p, design = batch_design(state, float(batch))
        notes.append(design.note())
    else:
        n_open = int(unlabeled.sum())
        p = np.full(m, min(1.0, batch / n_open) if n_open else 0.0)
    draw = generator.random(m) < p
    out = frame.copy()
    out[selected] = unlabeled & draw
    out[pi] = 1.0 - (1.0 - previous) * (1.0 - p)
    for note in fallbacks:
        warnings.warn(note, SlicewiseWarning, stacklevel=2)
    out.attrs["notes"] = (*fallbacks, *notes)
    out.attrs["design"] = {} if design is None else asdict(design)
    return out


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
