"""Shared plumbing of the multi-model entry points (profile_models, gap, rank_models, deploy).

Validation of ``level`` and ``target``, the pool-level warnings, and one fit on a prepared context
whose warnings are re-emitted with a prefix naming the model or pair. Method options are validated
by :func:`slicewise.api.make_options`, as in :func:`slicewise.profile`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._typing import TARGETS, Target
from ._validation import check_choice, check_level
from .api import fit_with_warnings, wrap_result
from .data.table import ItemTable
from .exceptions import ConstantSignalWarning, FullyLabeledWarning, SlicewiseWarning
from .methods.base import LabeledSet, MethodOptions, PoolContext
from .results import ProfileResult


def check_common(level: object, target: object, *, func: str) -> tuple[float, Target]:
    """Validate ``level`` and ``target``."""
    return check_level(level, func=func), check_choice(target, TARGETS, name="target", func=func)


def pool_notes(
    table: ItemTable, labeled: LabeledSet, method: str, *, prefix: str, stacklevel: int
) -> list[str]:
    """Warn (once each) about constant signals and a fully labeled pool, as profile() does."""
    notes: list[str] = []
    if method == "naive":
        return notes
    sd = table.signals.std(axis=0) if table.signals.shape[1] else np.zeros(0)
    constant = [n for n, s in zip(table.signal_names, sd, strict=True) if s == 0]
    if constant:
        message = (
            f"{prefix}signal column(s) {constant} are constant over the pool and carry no "
            "information."
        )
        warnings.warn(message, ConstantSignalWarning, stacklevel=stacklevel)
        notes.append(message)
    if labeled.n == table.n_pool:
        message = (
            f"{prefix}every one of the {table.n_pool} items is labeled, so the cheap signals "
            f"cannot add information: {method} reduces to the naive local mean there."
        )
        warnings.warn(message, FullyLabeledWarning, stacklevel=stacklevel)
        notes.append(message)
    return notes


def fit_profile(
    ctx: PoolContext,
    labeled: LabeledSet,
    *,
    method: str,
    options: MethodOptions,
    target: Target,
    level: float,
    params: dict[str, Any],
    notes: Sequence[str],
    prefix: str,
    stacklevel: int,
) -> ProfileResult:
    """Fit ``method`` and naive on one labeled set and wrap a ProfileResult.

    Warnings of :func:`slicewise.api.fit_with_warnings` are re-emitted with ``prefix`` (the model
    or pair they concern) and the caller's ``stacklevel``.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SlicewiseWarning)
        fit, naive, fit_notes = fit_with_warnings(ctx, labeled, method, options, target)
    for item in caught:
        if issubclass(item.category, SlicewiseWarning):
            warnings.warn(f"{prefix}{item.message}", item.category, stacklevel=stacklevel)
        else:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    return wrap_result(
        ctx,
        labeled,
        fit,
        naive,
        method=method,
        target=target,
        level=level,
        params={
            **params,
            "bandwidth": ctx.locality.bandwidth.tolist(),
            "kind": ctx.locality.kind,
        },
        notes=[*notes, *(f"{prefix}{n}" for n in fit_notes)],
    )
