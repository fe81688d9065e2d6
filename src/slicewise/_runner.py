"""Shared plumbing of the multi-model entry points (profile_models, gap, rank_models, deploy).

Validation of ``level`` and ``target``, and one fit on a prepared context whose warnings are
re-emitted with a prefix naming the model or pair. Method options and the pool-level warnings come
from :func:`slicewise.api.make_options` and :func:`slicewise.api.pool_notes`, as in
:func:`slicewise.profile`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ._typing import TARGETS, Target
from ._validation import check_choice, check_level
from .api import fit_with_warnings, wrap_result
from .exceptions import SlicewiseWarning
from .methods.base import LabeledSet, MethodOptions, PoolContext
from .results import ProfileResult


def check_common(level: object, target: object, *, func: str) -> tuple[float, Target]:
    """Validate ``level`` and ``target``."""
    return check_level(level, func=func), check_choice(target, TARGETS, name="target", func=func)


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
