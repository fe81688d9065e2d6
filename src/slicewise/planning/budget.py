"""``sw.plan`` before any gold label: a budget from an assumed base rate and R^2 range
(:func:`budget`; module notes of :mod:`slicewise.planning.plan`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..data.table import ItemTable
from .plan import MIN_SIGMA2, _finish, _Pilot, labels_needed
from .result import PlanResult


def budget(
    pilot: _Pilot,
    target: float,
    level: float,
    method: str,
    r2: tuple[float, float],
    rate: float,
) -> PlanResult:
    """Budgeting before any label: sigma^2 = p (1 - p) (1 - R^2) at both ends of the R^2 range."""
    ctx = pilot.ctx
    pool = ctx.moments("none", np.zeros((ctx.n_pool, 0)))
    g = ctx.grid_size
    zeros = np.zeros(g)
    var_y = max(rate * (1.0 - rate), MIN_SIGMA2)
    results = []
    for value in (r2[0], r2[1]):
        sigma2 = np.full(g, max(var_y * (1.0 - value), MIN_SIGMA2))
        results.append(
            (sigma2, *labels_needed(sigma2, zeros, zeros, pool.n_eff, target=target, level=level))
        )
    (sigma2, delta, predicted), (_, optimistic, _) = results
    # No item is labeled yet (the dummy label marked them all).
    unlabeled = _Pilot(
        items=_unlabeled_view(pilot.items), ctx=ctx, labeled_rows=np.zeros(0, dtype=np.intp)
    )
    notes = [
        f"No gold label yet, so these numbers rest on assumptions: a mean label of {rate:g}, "
        f"and signals that explain between {r2[0]:.0%} (column n_more) and {r2[1]:.0%} "
        "(n_more_optimistic) of the label's variation in each slice. Plan again once the first "
        "labels are in."
    ]
    return _finish(
        unlabeled,
        ctx.locality.labels,
        zeros,
        np.full(g, np.nan),
        delta,
        predicted,
        sigma2,
        pool.n_eff,
        zeros,
        target,
        level,
        method,
        notes,
        optimistic,
    )


def _unlabeled_view(items: ItemTable) -> ItemTable:
    return replace(items, label=np.full(items.n_pool, np.nan))
