"""Paired model gaps theta_a(z) - theta_b(z), estimated directly (rankings of several models:
:mod:`slicewise.models.ranking`).

Direct paired gap (LACE paper, Section 3.4, "Direct paired model gaps"). The centered augmentation
principle applies to any outcome: take the paired difference D_i = Y_ia - Y_ib on items labeled for
both models and a paired signal vector P_i (the two models' signals, or their differences, plus the
item-level signals). For any fixed b(z),

.. math::

    E[D - b(z)^\\top\\{P - \\mu_P(z)\\} \\mid Z = z] = \\theta_a(z) - \\theta_b(z),

so the LACE estimator with outcome D,

.. math::

    \\hat\\Delta(z) = \\bar D_L(z) - \\hat\\beta_D(z)^\\top\\{\\bar P_L(z) - \\bar P_T(z)\\},

is consistent, with the variance formulas of :mod:`slicewise.inference.variance` applied to D.
Its asymptotic variance is (1 - (1 - pi) R^2_D(z)) Var(D | z) / n_eff, and
Var(D | z) = Var(Y_a | z) + Var(Y_b | z) - 2 Cov(Y_a, Y_b | z): the shared item difficulty (the
covariance of the two models' correctness across items) cancels, which separate profiles cannot
exploit. D lies in [-1, 1]; the engine runs on D' = (D + 1) / 2 in [0, 1], and the estimate and the
standard error map back exactly (2 theta' - 1, 2 se').
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray, Kind, Target
from .._validation import check_choice, check_common
from ..data.pairs import PAIRED_SIGNALS, PairData, PairedSignals
from ..data.pairs import pair_data as make_pair
from ..data.panel import LabelSpec, SignalSpec, make_panel
from ..exceptions import SlicewiseWarning
from ..locality.weights import make_locality
from ..methods.base import LabeledSet, PoolContext
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.registry import METHODS
from ..methods.run import Problem, check_method_needs, pool_notes, run
from ..results import ProfileResult


class UnpairedLabelsWarning(SlicewiseWarning):
    """Some items are labeled for only one model of a pair; the direct gap estimator skips them."""


def _check_pair(model_a: object, model_b: object, *, func: str) -> None:
    for name, value in (("model_a", model_a), ("model_b", model_b)):
        if not isinstance(value, str):
            raise TypeError(
                f"The '{name}' parameter of {func} must be a model name (str). Got {value!r}."
            )
    if model_a == model_b:
        raise ValueError(
            f"The 'model_a' and 'model_b' parameters of {func} name the same model "
            f"({model_a!r}); a paired gap needs two different models."
        )


def _pair_notes(pair: PairData, a: str, b: str, *, stacklevel: int) -> list[str]:
    shared = (
        f"; the signals {list(pair.item_level)} describe the item, not the model, so they are "
        "used once rather than once per model"
        if len(pair.item_level)
        else ""
    )
    notes = [
        f"Gap {a} - {b} from the {pair.n_pairs} item(s) graded for both models, among the "
        f"{pair.table.n_pool} item(s) both were evaluated on{shared}."
    ]
    if pair.n_only_a or pair.n_only_b:
        message = (
            f"{pair.n_only_a} item(s) labeled only for {a!r} and {pair.n_only_b} only for {b!r} "
            "were not used: the direct gap estimator needs both labels of an item (they count "
            "as unlabeled pool items)."
        )
        warnings.warn(message, UnpairedLabelsWarning, stacklevel=stacklevel)
        notes.append(message)
    if pair.n_unmatched_a or pair.n_unmatched_b:
        notes.append(
            f"{pair.n_unmatched_a} row(s) of {a!r} and {pair.n_unmatched_b} of {b!r} have no row "
            "for the other model and are outside the pair pool."
        )
    if pair.n_dropped:
        notes.append(
            f"{pair.n_dropped} item(s) labeled for both were not used: they are not labeled for "
            "every ranked model."
        )
    return notes


def to_gap_scale(result: ProfileResult) -> ProfileResult:
    """Map a profile of D' = (D + 1) / 2 back to D: estimate 2 theta' - 1, se 2 se' (exact)."""
    return dataclasses.replace(
        result,
        estimate=2.0 * result.estimate - 1.0,
        se=2.0 * result.se,
        naive_estimate=2.0 * result.naive_estimate - 1.0,
        naive_se=2.0 * result.naive_se,
    )


def gap(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    model_a: str,
    model_b: str,
    label: LabelSpec,
    signals: SignalSpec = None,
    model: str | None = None,
    id: str | None = None,
    kind: Kind | None = None,
    method: str = "auto",
    paired_signals: PairedSignals = "both",
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    ppci_multiplier: float = DEFAULTS.ppci_multiplier,
    ppi_bandwidth_scale: float = DEFAULTS.ppi_bandwidth_scale,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
    target: Target = "pool",
    rng: int | np.random.Generator | None = None,
) -> ProfileResult:
    """Profile of the gap theta_a(z) - theta_b(z), estimated directly from paired differences.

    Parameters
    ----------
    table : DataFrame or path
        A long or wide model-item table (see :func:`slicewise.profile_models`).
    z : str or list of str
        Profile column(s).
    model_a, model_b : str
        The two models; the gap is a minus b.
    label, signals, model, id, kind
        As in :func:`slicewise.profile_models`.
    method : str, default 'auto'
        Any registered profile method, applied to the paired outcome.
    paired_signals : {'both', 'difference'}, default 'both'
        How model-specific signals enter: both models' columns side by side (2K columns; the
        coefficient can form any combination, the difference included, so nothing is lost), or
        their differences S_a - S_b (K columns; fewer coefficients to estimate from few pairs).
        Signal columns whose values agree for the two models (item-level signals such as
        difficulty) enter once either way.
    grid, bandwidth, nuisance_scale, ridge, C, strata_count, ppci_multiplier, ppi_bandwidth_scale
        As in :func:`slicewise.profile`. The grid is built from the Z of both models' items.
    objective : {'slice', 'ensemble'}, default 'slice'
        What smoothing the gap across disjoint slices promises, as in :func:`slicewise.profile`
        (:mod:`slicewise.smoothing.objective`).
    level : float, default 0.95
    target : {'pool', 'population'}, default 'pool'
        'pool': the realized gap sum_T w_{i,T}(z) (Y_ia - Y_ib) over the items evaluated by both;
        'population': E[Y_a - Y_b | Z = z].
    rng : int or numpy Generator, optional
        Randomness of methods that cross-fit; None uses a fixed seed (as :func:`slicewise.profile`).

    Returns
    -------
    ProfileResult
        On the gap scale [-1, 1]; ``params`` holds model_a, model_b, paired_signals and the pair
        counts, ``notes`` how many single-labeled items were not used.

    Notes
    -----
    With D = Y_a - Y_b and paired signals P (module notes),

    .. math::

        \\hat\\Delta(z) = \\bar D_L(z) - \\hat\\beta_D(z)^\\top\\{\\bar P_L(z) - \\bar P_T(z)\\},

    computed on D' = (D + 1) / 2 and mapped back exactly. The direct estimator uses only items
    labeled for both models; items labeled for one model count as unlabeled pool items (an
    :class:`UnpairedLabelsWarning` reports how many). If the two models were labeled on
    independent random subsets, the pairs are a random subset of the pool, so the estimator stays
    valid.

    References
    ----------
    LACE paper, Section 3.4 ("Direct paired model gaps").

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(1)
    >>> g = rng.integers(0, 3, 900)
    >>> easy = rng.random(900) < 0.6
    >>> ya = (easy | (rng.random(900) < 0.2)).astype(float)
    >>> yb = (easy & (rng.random(900) < 0.9)).astype(float)
    >>> frame = pd.DataFrame({"g": g, "a": ya, "b": yb, "difficulty": 1.0 - easy})
    >>> frame.loc[300:, ["a", "b"]] = np.nan
    >>> res = sw.gap(frame, z="g", model_a="a", model_b="b", label=["a", "b"],
    ...              signals=["difficulty"], kind="ordinal")
    >>> bool(np.all(res.estimate > 0))
    True
    """
    func = "gap"
    _check_pair(model_a, model_b, func=func)
    method = check_choice(method, tuple(METHODS), name="method", func=func)
    paired_signals = check_choice(paired_signals, PAIRED_SIGNALS, name="paired_signals", func=func)
    level, target = check_common(level, target, func=func)
    options = MethodOptions.from_arguments(locals(), func=func)
    panel = make_panel(
        table,
        z=z,
        label=label,
        signals=signals,
        model=model,
        id=id,
        kind=kind,
        models=[model_a, model_b],
        func=func,
        models_name="model_a/model_b",
    )
    pair = make_pair(panel, model_a, model_b, paired_signals=paired_signals, func=func)
    locality = make_locality(panel.items, grid=grid, bandwidth=bandwidth)
    ctx = PoolContext.build(pair.table, locality)
    check_method_needs(ctx, method, options)
    labeled = LabeledSet.from_table(pair.table)
    notes = _pair_notes(pair, model_a, model_b, stacklevel=2)
    prefix = f"gap {model_a} - {model_b}: "
    notes += pool_notes(pair.table, labeled, method, prefix=prefix, stacklevel=2)
    params: dict[str, Any] = {
        "estimand": "gap",
        "model_a": model_a,
        "model_b": model_b,
        "paired_signals": paired_signals,
        "signals": list(pair.table.signal_names),
        "n_pairs": pair.n_pairs,
        "n_only_a": pair.n_only_a,
        "n_only_b": pair.n_only_b,
    }
    problem = Problem(ctx, labeled, notes=tuple(notes), params=params, prefix=prefix)
    return to_gap_scale(run(problem, method, options, level=level, target=target))
