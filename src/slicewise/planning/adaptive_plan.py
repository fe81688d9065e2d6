"""``sw.plan(strategy='adaptive')``: the labels needed when they are drawn by
:func:`slicewise.next_items`, predicted under the design it will actually use.

The uniform plan (:mod:`slicewise.planning.plan`) assumes each slice's new labels are spread
uniformly within it. ``next_items`` spreads them by the residual model and mixes its proposal
with uniform probabilities at the strength its safeguard chooses
(:mod:`slicewise.planning.safeguard`), so within a slice the variance per label differs from
the uniform plan's. For a batch of expected size m, with p_i(m) the probabilities
:func:`~slicewise.planning.adaptive.batch_design` gives every item and pi_i(m) = 1 - (1 -
pi_i^prev)(1 - p_i(m)), grid point g's variance is predicted as the current one times the
ratio of the design variances after and before the batch with the residual model's scale,

.. math::

    V_g(m) = \\widehat{\\mathrm{se}}_g^2\\,
        \\frac{\\sum_T \\kappa_{ig}^2\\, sd_i^2 \\{1 / \\pi_i(m) - 1\\}}
             {\\sum_T \\kappa_{ig}^2\\, sd_i^2 \\{1 / \\pi_i^{prev} - 1\\}},
        \\qquad \\kappa_{ig} = k_{ig} / \\textstyle\\sum_T k_{jg}

(the uniform plan's formula when sd is constant and the probabilities equal), so the method's
own standard error sets the level and the design sets the change. The interval's degrees of
freedom follow the expected effective size under the design,
n_eff(m) = 1 / sum_T kappa_ig^2 / pi_i(m) (Kish's, in expectation), through
:func:`~slicewise.planning.plan.planned_df`. ``total_more`` is the smallest m whose largest
predicted half-width q sqrt(V_g(m)) reaches the target (bisection on m), ``n_more`` the labels
each slice expects from it, ``item_rate`` the probabilities, and the result's notes say which
strength the safeguard chose for that batch.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray
from .batch import MIN_ADAPTIVE_LABELS, adaptive_state, batch_design
from .plan import FUNC, Columns, planned_df
from .result import PlanResult

#: Bisection steps on the batch size.
STEPS = 14


def predicted_halfwidth(
    state: Any,
    batch: float,
    current_se: FloatArray,
    df: FloatArray,
    n_eff: FloatArray,
    level: float,
    widen: float | FloatArray = 0.0,
) -> tuple[FloatArray, FloatArray, Any]:
    """Predicted half-width of every grid point after a batch of expected size ``batch``
    (module notes), the probabilities and the safeguard's choice; the half-width is
    (q + ``widen``) se (:func:`slicewise.planning.plan.shift_ratio`)."""
    from ..results import critical_value

    p, choice = batch_design(state, batch, own_folds=False)
    after = 1.0 - (1.0 - state.previous) * (1.0 - p)
    kappa2 = state.kernel**2
    sd2 = state.scale[0] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        before_v = (sd2 / state.previous - sd2) @ kappa2
        after_v = (sd2 / after - sd2) @ kappa2
        ratio = np.where(before_v > 0, after_v / before_v, 0.0)
        n_new = 1.0 / ((1.0 / after) @ kappa2)
    df_new = planned_df(df, n_eff, np.where(np.isfinite(n_new), n_new, n_eff))
    half = (critical_value(level, df_new) + widen) * current_se * np.sqrt(ratio)
    return np.asarray(half, dtype=np.float64), p, choice


def adaptive_plan(
    uniform: PlanResult,
    frame: pd.DataFrame,
    columns: Columns,
    *,
    method: str,
    inclusion: str | None,
    floor: float,
) -> PlanResult:
    """The plan under :func:`slicewise.next_items`' adaptive design (module notes); the uniform
    plan ``uniform`` with a note when there are too few labels for the residual model."""
    from ..results import critical_value

    if not 0.0 < floor <= 1.0:
        raise ValueError(
            f"The 'floor' parameter of {FUNC} must be a float in (0, 1] (the uniform share of "
            f"the batch). Got {floor!r} instead."
        )
    labels = frame[columns.label].dropna()
    if uniform.total_more == 0:  # the target is met already
        return uniform
    if len(labels) < MIN_ADAPTIVE_LABELS or labels.nunique() < 2:
        return replace(
            uniform,
            notes=(
                *uniform.notes,
                f"Planned for uniform labeling within slices: the adaptive design needs at "
                f"least {MIN_ADAPTIVE_LABELS} labels with both values to fit its models.",
            ),
        )
    m = len(frame)
    labeled = frame[columns.label].notna().to_numpy()
    if inclusion is not None:
        previous = pd.to_numeric(frame[inclusion], errors="coerce").to_numpy(dtype=np.float64)
        previous = np.where(np.isfinite(previous), previous, labeled.sum() / m)
    else:
        previous = np.full(m, labeled.sum() / m)
    state = adaptive_state(
        frame,
        columns,
        halfwidth=uniform.target,
        level=uniform.level,
        method=method,
        inclusion=inclusion,
        C=1.0,
        floor=floor,
        previous=previous,
        need=uniform,
    )
    df = np.asarray(uniform.df if uniform.df is not None else uniform.n_labeled - 1.0)
    se = uniform.halfwidth / critical_value(uniform.level, df)
    n_eff = uniform.n_labeled
    widen = np.zeros(se.shape) if uniform.widen is None else uniform.widen
    unlabeled = ~labeled
    open_items = int(unlabeled.sum())

    def worst(batch: float) -> tuple[float, FloatArray, FloatArray, Any]:
        half, p, choice = predicted_halfwidth(state, batch, se, df, n_eff, uniform.level, widen)
        return float(np.nanmax(half)), half, p, choice

    low, high = 0.0, float(open_items)
    top = worst(high)
    notes = list(uniform.notes)
    if top[0] > uniform.target:
        best = top
        notes.append(
            "Even labeling every unlabeled item leaves a predicted worst half-width of "
            f"{top[0]:.3g}, above the target."
        )
    else:
        for _ in range(STEPS):
            mid = 0.5 * (low + high)
            if worst(mid)[0] > uniform.target:
                low = mid
            else:
                high = mid
        best = worst(high)
    _, half, p, choice = best
    batch = high
    g = uniform.size
    expected = np.bincount(
        state.slice_of[unlabeled & (state.slice_of >= 0)],
        weights=p[unlabeled & (state.slice_of >= 0)],
        minlength=g,
    )
    notes.append(
        f"Planned for next_items' adaptive design: one batch of {math.ceil(batch - 1e-9)} "
        "items, spread by its residual model and slice allocation. " + choice.note()
    )
    return replace(
        uniform,
        n_more=np.ceil(expected - 1e-9).astype(np.intp),
        predicted=half,
        total_more=math.ceil(batch - 1e-9),
        item_rate=np.where(unlabeled, p, 0.0),
        notes=tuple(notes),
    )
