"""The public entry point :func:`profile`: validate once, build the pool context, fit, wrap."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ._threads import one_blas_thread
from ._typing import TARGETS, FloatArray, Kind, Target
from ._validation import (
    check_choice,
    check_level,
    check_nonnegative,
    check_positive_int,
    check_rng,
    check_scale,
)
from .data.files import read_table
from .data.inclusion import read_inclusion
from .data.table import ItemTable, MissingRule, make_table
from .estimators.learned import LEARNERS
from .exceptions import (
    ConstantSignalWarning,
    EmptyNeighbourhoodWarning,
    FullyLabeledWarning,
    SparseNeighbourhoodWarning,
)
from .inference.balance import balance_notes
from .locality.weights import make_locality
from .methods.base import LabeledSet, MethodFit, MethodOptions, PoolContext, labeled_sizes
from .methods.registry import METHODS, check_design_weights
from .methods.smoothing import smooth_fit
from .results import ProfileResult
from .sources import is_pool_source

FUNC = "profile"
SMOOTHING = ("auto", "fh", "none")


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
    if options.smooth == "fh" and method != "auto" and ctx.features.shape[1] == 0:
        raise ValueError(
            "The 'smooth' parameter is 'fh', whose synthetic regression across domains is fitted "
            "on the cheap signals, but no signals were given; pass signals=[...] or "
            "smooth='none'."
        )


def build_context(
    table: ItemTable,
    *,
    grid: Any = None,
    bandwidth: Any = None,
    primary: str | None = None,
) -> PoolContext:
    """Locality, standardised signals and caches for a validated table."""
    locality = make_locality(table, grid=grid, bandwidth=bandwidth)
    primary_index = None
    if primary is not None:
        if primary not in table.signal_names:
            raise ValueError(
                f"The 'primary' parameter of {FUNC} must name one of the signals "
                f"{list(table.signal_names)}. Got {primary!r} instead."
            )
        primary_index = table.signal_names.index(primary)
    return PoolContext.build(table, locality, primary=primary_index)


def fit_with_warnings(
    ctx: PoolContext, labeled: LabeledSet, method: str, options: MethodOptions, target: Target
) -> tuple[MethodFit, MethodFit, list[str]]:
    """Fit ``method`` and naive on one labeled set; warn once about empty or sparse points.

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
        notes=(*notes, *_gain_notes(ctx, fit.gain, variance, naive_var)),
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
        f"{_format_points(list(ctx.locality.labels), odd)}. With this few labels, fitting the "
        "adjustment costs more precision than the signals give back (columns gain and "
        "realized_gain give the numbers).",
    ]


def _check_shrinkage(value: object, func: str) -> float:
    if isinstance(value, int | float) and (value >= 0 or math.isinf(value)) and value == value:
        return float(value)
    raise ValueError(
        f"The 'shrinkage' parameter of {func} must be a float >= 0 (inf pools the coefficient). "
        f"Got {value!r} instead."
    )


def make_options(
    *,
    ridge: float = 0.3,
    nuisance_scale: float = 1.0,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = 1.0,
    strata: int = 5,
    ppci_multiplier: float = 1.0,
    ppi_bandwidth_scale: float = 1.0,
    shrinkage: float | None = None,
    learner: str = "logistic",
    folds: int = 5,
    smooth: str = "auto",
    rng: int | np.random.Generator | None = None,
    func: str = FUNC,
) -> MethodOptions:
    """Validate every method option once (see :func:`profile` for their meaning)."""
    return MethodOptions(
        ridge=check_nonnegative(ridge, name="ridge", func=func),
        nuisance_scale=check_scale(nuisance_scale, func=func),
        coef=coef,
        logistic_c=check_nonnegative(C, name="C", func=func, strict=True),
        ppci_multiplier=check_nonnegative(
            ppci_multiplier, name="ppci_multiplier", func=func, strict=True
        ),
        strata=check_positive_int(strata, name="strata", func=func),
        ppi_bandwidth_scale=check_nonnegative(
            ppi_bandwidth_scale, name="ppi_bandwidth_scale", func=func, strict=True
        ),
        shrinkage=None if shrinkage is None else _check_shrinkage(shrinkage, func),
        learner=check_choice(learner, LEARNERS, name="learner", func=func),
        folds=check_positive_int(folds, name="folds", func=func, minimum=2),
        smooth=check_choice(smooth, SMOOTHING, name="smooth", func=func),
        rng=check_rng(rng, func=func, reproducible=True),
    )


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


def profile(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None = None,
    label: str,
    kind: Kind | None = None,
    method: str = "auto",
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = 1.0,
    ridge: float = 0.3,
    primary: str | None = None,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = 1.0,
    strata: int = 5,
    ppci_multiplier: float = 1.0,
    ppi_bandwidth_scale: float = 1.0,
    shrinkage: float | None = None,
    learner: str = "logistic",
    folds: int = 5,
    smooth: str = "auto",
    level: float = 0.95,
    target: Target = "pool",
    id: str | None = None,
    missing: MissingRule = "impute",
    inclusion: str | None = None,
    rng: int | np.random.Generator | None = None,
    gold: pd.DataFrame | str | os.PathLike[str] | None = None,
    on: str | Sequence[str] | None = None,
    progress: bool = False,
) -> ProfileResult:
    """Estimate a model's performance profile theta(z) across a profile axis.

    Parameters
    ----------
    table : DataFrame or path
        One row per pool item (CSV, Parquet, JSON or JSON Lines paths are read). Rows with a missing
        label are the unlabeled pool items.
    z : str or list of str
        Profile column(s); several columns make a continuous profile in R^q.
    signals : str or list of str, optional
        Cheap-signal columns (missing values: see ``missing``). Not needed by
        ``method='naive'``.
    label : str
        Gold label column (values in [0, 1], missing where unlabeled).
    kind : {'continuous', 'ordinal', 'categorical'}, optional
        Locality rule; inferred from the dtype when omitted (see :func:`make_table`).
    method : str, default 'auto'
        Any name listed by :func:`slicewise.methods`. The default ``'auto'`` chooses among naive,
        pooled, shrunk-local and learned control variates by cross-validated variance, and
        smooths disjoint domains (see :func:`slicewise.methods.borrowing.fit_auto`); ``'lace'``
        is the paper's estimator.
    grid : int or array-like, optional
        Grid points (see :func:`slicewise.locality.weights.make_locality`).
    bandwidth : float or list of float, optional
        Profile bandwidth h per dimension (continuous; default
        1.5 x 1.06 x sd(Z) x M^(-1/5)) or triangular half-width b_ord (ordinal; default 1).
    nuisance_scale : float, default 1
        Nuisance bandwidth for the local coefficient as a multiple of h (b = scale x h >= h;
        ``inf`` pools the coefficient over all of Z).
    ridge : float, default 0.3
        Ridge penalty lambda on the standardised-signal covariance.
    primary : str, optional
        The primary judge signal (methods that use one signal).
    coef : array or callable, optional
        Supplied coefficient beta(z) in raw signal units for ``method='lace_oracle'``.
    C : float, default 1
        Inverse L2 regularisation of the logistic predictors (plug-in, augmented plug-in, scalar
        prediction CV, PPCI and StratPPI composites), on standardised covariates.
    strata : int, default 5
        Number of equal-width strata in Z for ``method='strat_ppi'``.
    ppci_multiplier : float, default 1
        Multiplier of the L-curve Tikhonov parameter for ``method='ppci'``.
    ppi_bandwidth_scale : float, default 1
        Local-linear bandwidth of ``method='local_ppi'`` as a multiple of h.
    shrinkage : float, optional
        kappa of the shrunk coefficient (``lace_shrunk``, ``lace_learned``, ``auto``): the local
        coefficient gets weight n_eff / (n_eff + kappa) against the pooled one; 0 is LACE, inf the
        pooled coefficient. Chosen by cross-validated variance when omitted.
    learner : {'logistic', 'boosting'}, default 'logistic'
        Learner of the cross-fitted prediction (``lace_learned``, ``auto``).
    folds : int, default 5
        Cross-fitting and cross-validation folds of L (``lace_learned``, ``lace_shrunk``, ``auto``).
    smooth : {'auto', 'fh', 'none'}, default 'auto'
        Fay-Herriot smoothing of the direct estimates across disjoint domains (categorical or
        exact-level ordinal profiles; see :mod:`slicewise.methods.smoothing`). ``'auto'`` smooths
        the ``auto`` method only, ``'fh'`` any method with a variance, ``'none'`` never.
    level : float, default 0.95
        Confidence level of the reported intervals.
    target : {'pool', 'population'}, default 'pool'
        ``'pool'``: the realized full-pool profile sum_T w_{i,T}(z) Y_i (randomness only from which
        items were labeled). ``'population'``: theta(z) = E[Y | Z = z], adding the pool's own
        sampling variance.
    id : str, optional
        Item id column (checked for duplicates). The items are put in id order (without ids, in
        a lexicographic order of Z, signals and label) before anything is fitted, so the result
        does not depend on the order of the rows.
    missing : {'impute', 'error'}, default 'impute'
        Missing signal values. ``'impute'``: a signal column with missing values gets its pool
        mean there plus a missingness-indicator signal (1 where missing), said in the notes; no
        label is used, so the centered control variates stay unbiased. ``'error'``: raise.
    inclusion : str, optional
        Column of known inclusion probabilities in (0, 1], read on labeled rows: labeled item i
        gets design weight 1 / pi_i (Hajek local means, design variances; see
        :mod:`slicewise.inference.variance`). Supported by the methods marked in
        ``sw.methods()["inclusion"]``, the default ``auto`` included (its candidates are compared
        by design-based variances, :mod:`slicewise.inference.cv_variance`). Without it the labels are taken as a simple random sample
        of the pool, and a balance test of the labeled against the pool signal means within
        slices of Z warns (:class:`~slicewise.exceptions.LabelSelectionWarning`) when they are
        not (:mod:`slicewise.inference.balance`).
    rng : int or numpy Generator, optional
        Randomness of the methods that cross-fit (``auto``, the learned and prediction-based
        methods). None uses a fixed seed, so the same call always returns the same profile.
    gold : DataFrame or path, optional
        Gold labels in a separate table, joined to the pool by the key column(s) ``on`` (the
        rules of ``slicewise join``: every key names exactly one pool row); its ``label`` column
        is the label. ``table`` may then also be a Parquet file, folder or glob, a DuckDB
        relation or (connection, query) pair, or a Spark DataFrame, scanned out of core (see
        :mod:`slicewise.sources`; methods naive, lace, global_cv, per_signal_cv).
    on : str or list of str, optional
        Key column(s) of ``gold`` and of the pool.
    progress : bool, default False
        Show a progress bar while an out-of-core pool is scanned.

    Returns
    -------
    ProfileResult

    Notes
    -----
    LACE (Section 3.3 of the LACE paper):

    .. math::

        \\hat\\theta(z) = \\bar Y_L(z) - \\hat\\beta(z)^\\top\\{\\bar S_L(z) - \\bar S_T(z)\\},\\quad
        \\hat\\beta(z) = \\{\\hat\\Sigma_{SS,T}(z) + \\lambda I\\}^{-1}\\hat\\Sigma_{SY,L}(z).

    Variances and the predicted gain 1 / (1 - (1 - pi) R^2(z)) are documented in
    :mod:`slicewise.inference.variance`.

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> level = rng.integers(1, 6, 2000)
    >>> y = (rng.random(2000) < 0.9 - 0.1 * level).astype(float)
    >>> judge = y + rng.normal(0, 0.5, 2000)
    >>> y[rng.permutation(2000)[200:]] = np.nan
    >>> frame = pd.DataFrame({"level": level, "judge": judge, "correct": y})
    >>> res = sw.profile(frame, z="level", signals=["judge"], label="correct", kind="ordinal")
    >>> res.to_frame()[["z", "estimate"]].shape
    (5, 2)
    """
    if gold is not None or on is not None or is_pool_source(table):
        arguments = dict(locals())
        from .sources.profile import profile_source

        return profile_source(**arguments)
    method = check_choice(method, tuple(METHODS), name="method", func=FUNC)
    target = check_choice(target, TARGETS, name="target", func=FUNC)
    level = check_level(level, func=FUNC)
    options = make_options(
        ridge=ridge,
        nuisance_scale=nuisance_scale,
        coef=coef,
        C=C,
        strata=strata,
        ppci_multiplier=ppci_multiplier,
        ppi_bandwidth_scale=ppi_bandwidth_scale,
        shrinkage=shrinkage,
        learner=learner,
        folds=folds,
        smooth=smooth,
        rng=rng,
        func=FUNC,
    )
    if inclusion is not None:
        check_design_weights(method, inclusion=inclusion, func=FUNC)
        table = read_table(table) if isinstance(table, str | os.PathLike) else table
    items = make_table(
        table,
        z=z,
        signals=signals,
        label=label,
        kind=kind,
        id=id,
        missing=missing,
        canonical=True,
        func=FUNC,
    )
    ctx = build_context(items, grid=grid, bandwidth=bandwidth, primary=primary)
    check_method_needs(ctx, method, options)

    labeled = LabeledSet.from_table(items)
    if inclusion is not None:
        rows = items.input_rows(labeled.index)
        pi = read_inclusion(table, inclusion, rows, func=FUNC)  # type: ignore[arg-type]
        labeled = LabeledSet(index=labeled.index, y=labeled.y, pi=pi)
    notes = pool_notes(items, labeled, method, prefix="", stacklevel=3)
    balance, balance_params = balance_notes(items, items.labeled, inclusion=inclusion)
    fit, naive, fit_notes = fit_with_warnings(ctx, labeled, method, options, target)
    if options.smooth == "fh" and method != "auto":
        smoothed = smooth_fit(ctx, labeled, fit, options)
        fit_notes = [*fit_notes, *smoothed.notes[len(fit.notes) :]]
        fit = smoothed
    params: dict[str, Any] = {
        "bandwidth": ctx.locality.bandwidth.tolist(),
        "kind": ctx.locality.kind,
        **balance_params,
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
        notes=[*notes, *fit_notes, *balance],
    )
