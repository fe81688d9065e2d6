"""The one pipeline every profile runs through: context, method fit, naive companion, result.

:func:`run` fits a registered method on a :class:`Problem` (a pool context and a labeled set, with
the notes and parameters the caller's input gave) under validated
:class:`~slicewise.methods.options.MethodOptions`, and wraps the frozen
:class:`~slicewise.results.ProfileResult`. :func:`slicewise.profile`, :func:`slicewise.select`,
the multi-model functions (:mod:`slicewise.models.profiles`, :mod:`slicewise.models.gaps`,
:mod:`slicewise.models.deploy`, :mod:`slicewise.models.cascade`), the out-of-core sources and the study engine
all call it (or its two halves, :func:`fit_with_warnings` and :func:`wrap_result`, when they
score many label draws on one context).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._threads import one_blas_thread
from .._typing import BoolArray, FloatArray, Target
from .._validation import signal_index
from ..data.table import ItemTable
from ..exceptions import (
    ConstantSignalWarning,
    EmptyNeighbourhoodWarning,
    FullyLabeledWarning,
    InSampleFitWarning,
    SlicewiseWarning,
    SparseNeighbourhoodWarning,
)
from ..locality.weights import make_locality
from ..results import ProfileResult
from ..smoothing.area import MODELS as SMOOTHING_MODELS
from .base import SIGNALS_PER_LABEL, LabeledSet, MethodFit, PoolContext, labeled_sizes
from .design import check_categorical
from .options import MethodOptions
from .registry import METHODS
from .smoothed import smooth_fit

FUNC = "profile"


@dataclass(frozen=True, eq=False)
class Problem:
    """What one profile is estimated from.

    Attributes
    ----------
    ctx : PoolContext
        The pool, its locality and the pool-side caches.
    labeled : LabeledSet
        Positions and labels of the labeled items (with inclusion probabilities if known).
    notes : tuple of str
        Notes about the input (imputed signals, constant signals, ...), reported first.
    checks : tuple of str
        Notes of the checks of the labels' design (the balance check), reported after the
        method's own notes.
    params : dict
        Parameters about the input reported in the result (model name, balance statistics).
    prefix : str
        Names the model or pair in warnings and notes of the multi-model functions ("" for one
        profile).
    """

    ctx: PoolContext
    labeled: LabeledSet
    notes: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    prefix: str = ""


def run(
    problem: Problem,
    method: str,
    options: MethodOptions,
    *,
    level: float,
    target: Target,
    stacklevel: int = 3,
) -> ProfileResult:
    """Fit ``method`` (and the naive companion) on ``problem`` and wrap the result.

    The smoothing of disjoint domains asked by ``options.smooth`` ('fh' or 'pp-s') is applied to
    any method with a variance (``auto`` smooths within its own fit). Warnings name the problem's
    ``prefix`` and point at the caller ``stacklevel`` frames up.
    """
    ctx, labeled = problem.ctx, problem.labeled
    check_method_needs(ctx, method, options)
    if labeled.n < 2:
        raise ValueError(
            f"{problem.prefix}{method} needs at least 2 gold labels for an estimate with an "
            f"interval (a variance needs two); the label column '{ctx.table.label_name}' has "
            f"{labeled.n} labeled item(s) of {ctx.n_pool}. Label at least one more item."
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SlicewiseWarning)
        fit, naive, fit_notes = fit_with_warnings(ctx, labeled, method, options, target)
        if options.smooth in SMOOTHING_MODELS and method != "auto":
            smoothed = smooth_fit(ctx, labeled, fit, options)
            fit_notes = [*fit_notes, *smoothed.notes[len(fit.notes) :]]
            fit = smoothed
    for item in caught:
        if issubclass(item.category, SlicewiseWarning):
            message = f"{problem.prefix}{item.message}"
            warnings.warn(message, item.category, stacklevel=stacklevel)
        else:
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    params: dict[str, Any] = {
        **problem.params,
        "bandwidth": ctx.locality.bandwidth.tolist(),
        "kind": ctx.locality.kind,
        "objective": options.objective,
    }
    return wrap_result(
        ctx,
        labeled,
        fit,
        naive,
        method=method,
        target=target,
        level=level,
        params=params,
        notes=[*problem.notes, *(f"{problem.prefix}{n}" for n in fit_notes), *problem.checks],
    )


def _format_points(labels: Sequence[object], mask: np.ndarray) -> str:
    points = [labels[int(i)] for i in np.flatnonzero(mask)]
    shown = ", ".join(f"{p:.4g}" if isinstance(p, float) else str(p) for p in points[:8])
    return shown + (f", ... ({len(points)} in all)" if len(points) > 8 else "")


def check_method_needs(ctx: PoolContext, method: str, options: MethodOptions) -> None:
    """Raise a clear error when the table or options lack what ``method`` needs."""
    spec = METHODS[method]
    if "signals" in spec.needs and ctx.features.shape[1] == 0:
        raise ValueError(
            f"Method {method!r} needs at least one cheap signal; pass signals=[...] (got none)."
        )
    if "primary" in spec.needs and ctx.primary is None:
        raise ValueError(
            f"Method {method!r} needs the primary judge signal: pass primary='<column>' naming "
            f"one of the signals {list(ctx.table.signal_names)}."
        )
    if "coef" in spec.needs and options.coef is None:
        raise ValueError(
            f"Method {method!r} needs a supplied coefficient: pass coef= (shape (G, K) in raw "
            "signal units, or a function of the grid point)."
        )
    if ctx.locality.kind == "categorical" and options.nuisance_scale not in (1.0, np.inf):
        raise ValueError(
            "The 'nuisance_scale' parameter must be 1 (within-category coefficients) or inf (one "
            f"pooled coefficient) for a categorical profile. Got {options.nuisance_scale!r} instead."
        )
    if "continuous" in spec.needs and ctx.locality.kind == "categorical":
        raise ValueError(
            f"Method {method!r} needs an ordered profile (continuous or ordinal Z); the profile "
            "is categorical."
        )
    if "categorical" in spec.needs:
        check_categorical(ctx, method)
    if options.smooth in SMOOTHING_MODELS and method != "auto" and ctx.features.shape[1] == 0:
        raise ValueError(
            f"The 'smooth' parameter is {options.smooth!r}, whose synthetic regression across "
            "domains is fitted on the cheap signals, but no signals were given; pass "
            "signals=[...] or smooth='none'."
        )


def build_context(
    table: ItemTable,
    *,
    grid: Any = None,
    bandwidth: Any = None,
    primary: str | None = None,
    func: str = FUNC,
) -> PoolContext:
    """Locality, standardised signals and caches for a validated table."""
    primary_index = signal_index(primary, table.signal_names, func=func)
    locality = make_locality(table, grid=grid, bandwidth=bandwidth)
    return PoolContext.build(table, locality, primary=primary_index)


def fit_with_warnings(
    ctx: PoolContext,
    labeled: LabeledSet,
    method: str,
    options: MethodOptions,
    target: Target,
    *,
    fit: MethodFit | None = None,
) -> tuple[MethodFit, MethodFit, list[str]]:
    """Fit ``method`` and naive on one labeled set; warn once about empty or sparse points.

    ``fit``: the method's fit when the caller already has it (the deployment score and the
    gap ranking refit ``auto``'s chosen candidate, :mod:`slicewise.models.influence`); only
    naive is fitted then.

    ``auto`` without signals is naive (its note says so): there is nothing to borrow from, and
    the smoothing of disjoint domains needs the signals for its synthetic regression. The fits
    run BLAS on one thread (:func:`~slicewise._threads.one_blas_thread`): their products have
    G rows, too thin for threads, and auto's labeled-side products took 11 s of processor time
    with two threads on two busy cores where one thread needs 0.3 s.
    """
    if method == "auto" and ctx.features.shape[1] == 0 and options.smooth != "none":
        options = replace(options, smooth="none")
    with one_blas_thread():
        # the method first: its pass over the pool also gives the kernel masses naive needs
        if fit is None:
            fit = METHODS[method].fit(ctx, labeled, options)
        naive = fit if method == "naive" else METHODS["naive"].fit(ctx, labeled, options)
    notes = list(fit.notes)
    labels = list(ctx.locality.labels)
    empty = ~np.isfinite(naive.estimate)
    if empty.any():
        message = (
            f"{int(empty.sum())} grid point(s) have no labeled weight, so their estimate is NaN: "
            f"{_format_points(labels, empty)}."
        )
        warnings.warn(message, EmptyNeighbourhoodWarning, stacklevel=3)
        notes.append(message)
    outside = np.isfinite(fit.estimate) & ((fit.estimate < 0.0) | (fit.estimate > 1.0))
    if outside.any():
        notes.append(
            f"{int(outside.sum())} grid point(s) have estimates outside [0, 1]: "
            f"{_format_points(labels, outside)}. The adjustment by the signals is linear and is "
            "not clipped; with more labels there such estimates move back inside."
        )
    variance = fit.var_pool if target == "pool" else fit.var_population
    sparse = np.isfinite(fit.estimate) & ~np.isfinite(variance) & METHODS[method].variance
    if sparse.any():
        message = (
            f"{int(sparse.sum())} grid point(s) have too few labeled items for a variance "
            f"estimate, so their se is NaN: {_format_points(labels, sparse)}."
        )
        warnings.warn(message, SparseNeighbourhoodWarning, stacklevel=3)
        notes.append(message)
    crowded = np.zeros(len(labels), dtype=bool) if fit.crowded is None else fit.crowded
    if crowded.any():
        message = (
            f"At {int(crowded.sum())} grid point(s) {method} fitted its adjustment on fewer than "
            f"{1.0 / SIGNALS_PER_LABEL:g} labeled items per signal: "
            f"{_format_points(labels, crowded)}. An adjustment fitted on the same labels it "
            "corrects pulls the estimate off by a share of its error that grows with the signals "
            "per label (about a quarter at 0.1-0.2 signals per label, over a third above 0.2, "
            "measured on real data), which the interval does not include. method='auto' fits "
            "each label's adjustment without that label and is not pulled off this way."
        )
        warnings.warn(message, InSampleFitWarning, stacklevel=3)
        notes.append(message)
    return fit, naive, notes


def wrap_result(
    ctx: PoolContext,
    labeled: LabeledSet,
    fit: MethodFit,
    naive: MethodFit,
    *,
    method: str,
    target: Target,
    level: float,
    params: dict[str, Any],
    notes: Sequence[str],
) -> ProfileResult:
    """Assemble the frozen result from a method fit and the naive fit on the same labels."""
    pool = ctx.moments("none", np.zeros((ctx.n_pool, 0)))
    variance = fit.var_pool if target == "pool" else fit.var_population
    naive_var = naive.var_pool if target == "pool" else naive.var_population
    n_lab_eff, labeled_mass = labeled_sizes(ctx, labeled)
    z_names = ctx.table.z_names
    return ProfileResult(
        z=ctx.locality.labels,
        estimate=fit.estimate,
        se=np.sqrt(variance),
        method=method,
        target=target,
        level=level,
        naive_estimate=naive.estimate,
        naive_se=np.sqrt(naive_var),
        n_labeled_eff=n_lab_eff,
        n_pool_eff=pool.n_eff,
        labeled_mass=labeled_mass,
        r2=fit.r2,
        gain=fit.gain,
        n_equivalent=n_lab_eff * fit.gain,
        borrowed=fit.borrowed,
        z_names=z_names,
        kind=ctx.locality.kind,
        n_labeled=labeled.n,
        n_pool=ctx.n_pool,
        params={**params, **fit.params},
        notes=(
            *notes,
            *_gain_notes(ctx, fit.gain, variance, naive_var),
            *_floor_notes(ctx, fit.floored),
        ),
        df=fit.df,
        bias_bound=fit.bias_bound,
        unit_labels=bool(np.all((labeled.y >= 0.0) & (labeled.y <= 1.0))),
    )


def _gain_notes(
    ctx: PoolContext, gain: FloatArray, variance: FloatArray, naive_var: FloatArray
) -> list[str]:
    """Say where the predicted gain is above 1 but the reported se exceeds naive_se."""
    with np.errstate(invalid="ignore"):
        odd = np.isfinite(variance) & np.isfinite(naive_var) & (gain > 1.0) & (variance > naive_var)
    if not odd.any():
        return []
    return [
        f"At {int(odd.sum())} grid point(s) the gold-only interval is narrower than this "
        f"estimate's although the signals looked useful there: "
        f"{_format_points(list(ctx.locality.labels), odd)}. Either the labels there fell "
        "unevenly over the signals' values, which makes this estimate less certain, or there "
        "are too few of them to fit the adjustment without losing more precision than the "
        "signals give back (the result's gain columns give the numbers).",
    ]


def _floor_notes(ctx: PoolContext, floored: BoolArray | None) -> list[str]:
    """Say where the variance is the residual floor, not the residuals' own."""
    if floored is None or not floored.any():
        return []
    return [
        f"At {int(floored.sum())} grid point(s) the signals predicted every labeled item "
        f"(nearly) exactly: {_format_points(list(ctx.locality.labels), floored)}. Labels cannot "
        "show a misprediction among the unlabeled items there, so the variance is floored at "
        "the gold-only one over (effective labels + 1), as if one more labeled item had a "
        "residual the signals do not explain (realized_gain shows it).",
    ]


def _sentence(prefix: str, text: str) -> str:
    """``prefix + text``, or ``text`` capitalised when there is no prefix."""
    return prefix + text if prefix else text[:1].upper() + text[1:]


def pool_notes(
    table: ItemTable, labeled: LabeledSet, method: str, *, prefix: str, stacklevel: int
) -> list[str]:
    """The table's own notes (imputed signals); warn (once each) about constant signals and a
    fully labeled pool. Returns the messages.

    ``prefix`` names the model or pair the table belongs to (empty for a single profile).
    """
    notes: list[str] = [_sentence(prefix, note) for note in table.notes]
    if method == "naive":
        return notes
    sd = table.signal_moments[1]
    constant = [n for n, s in zip(table.signal_names, sd, strict=True) if s == 0]
    if constant:
        message = _sentence(
            prefix,
            f"signal column(s) {constant} are constant over the pool and carry no information.",
        )
        warnings.warn(message, ConstantSignalWarning, stacklevel=stacklevel)
        notes.append(message)
    if labeled.n == table.n_pool:
        message = _sentence(
            prefix,
            f"every one of the {table.n_pool} items is labeled, so the cheap signals cannot add "
            f"information: {method} reduces to the naive local mean there.",
        )
        warnings.warn(message, FullyLabeledWarning, stacklevel=stacklevel)
        notes.append(message)
    return notes
