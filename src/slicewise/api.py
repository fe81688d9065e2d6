"""The public entry point :func:`profile`: validate the input once, build the problem, run it
(:func:`slicewise.methods.run.run`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from . import _hooks
from ._typing import TARGETS, FloatArray, Kind, Target
from ._validation import check_choice, check_level
from .data.files import read_table
from .data.inclusion import read_inclusion
from .data.table import MissingRule, make_table
from .inference.balance import balance_notes
from .methods.base import LabeledSet
from .methods.options import DEFAULTS, MethodOptions
from .methods.registry import METHODS, check_design_weights
from .methods.run import Problem, build_context, pool_notes, run
from .results import ProfileResult
from .sources import is_pool_source

FUNC = "profile"


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
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    primary: str | None = None,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    ppci_multiplier: float = DEFAULTS.ppci_multiplier,
    ppi_bandwidth_scale: float = DEFAULTS.ppi_bandwidth_scale,
    shrinkage: float | None = None,
    learner: str = DEFAULTS.learner,
    folds: int = DEFAULTS.folds,
    smooth: str = DEFAULTS.smooth,
    objective: str = DEFAULTS.objective,
    uncertainty: str | Sequence[str] | None = DEFAULTS.uncertainty,
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
    strata_count : int, default 5
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
    smooth : {'auto', 'fh', 'pp-s', 'none'}, default 'auto'
        Fay-Herriot smoothing of the direct estimates across disjoint domains (categorical or
        exact-level ordinal profiles; see :mod:`slicewise.methods.smoothed`), by the models of
        ``sw.domains`` under the same names: ``'fh'`` the EBLUP at the REML estimate of the
        spread between domains, ``'pp-s'`` the Bayesian model integrated exactly over it.
        ``'auto'`` smooths the ``auto`` method only, with ``'pp-s'``; ``'fh'`` and ``'pp-s'``
        smooth any method with a variance (``auto`` included); ``'none'`` never. What the
        smoothed slices report depends on ``objective``.
    objective : {'slice', 'ensemble'}, default 'slice'
        What smoothing across slices promises (:mod:`slicewise.smoothing.objective`).
        ``'slice'``: each slice's interval covers that slice; a slice with at least 10 labels
        moves toward the smoothing model by at most 0.3 of its standard error, and every
        moved slice's interval contains its own direct interval. ``'ensemble'``: the papers'
        estimators (every slice smoothed, with the model's standard error): the least total
        error, with intervals that cover on average over slices, not each slice;
        ``res.ci(robust=True)`` gives the robust empirical-Bayes interval of Armstrong,
        Kolesar and Plagborg-Moller (2022).
    uncertainty : str or list of str, optional
        Columns that say how reliable the signals are on each item (a judge's confidence):
        each enters the signals with its products with every signal, so a signal can count
        where it is reliable (:mod:`slicewise.data.uncertainty`); pass the same columns to
        :func:`slicewise.next_items`, whose residual model reads them. In-memory tables only.
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
        :mod:`slicewise.sources`; methods naive, lace, global_cv, per_signal_cv, lace_shrunk,
        lace_learned and the default auto, whose learned predictions are fitted on the labeled
        rows and applied to the pool in a streaming pass; the others need the pool in memory).
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

        scanned = profile_source(**arguments)
        if isinstance(scanned, ProfileResult):
            return scanned
        table, gold, on = scanned, None, None  # read into memory, gold labels joined
    method = check_choice(method, tuple(METHODS), name="method", func=FUNC)
    target = check_choice(target, TARGETS, name="target", func=FUNC)
    level = check_level(level, func=FUNC)
    options = MethodOptions.from_arguments(locals(), func=FUNC)
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
        uncertainty=options.uncertainty,
    )
    ctx = build_context(items, grid=grid, bandwidth=bandwidth, primary=primary)
    labeled = LabeledSet.from_table(items)
    if inclusion is not None:
        rows = items.input_rows(labeled.index)
        pi = read_inclusion(table, inclusion, rows, func=FUNC)  # type: ignore[arg-type]
        labeled = LabeledSet(index=labeled.index, y=labeled.y, pi=pi)
    notes = pool_notes(items, labeled, method, prefix="", stacklevel=3)
    balance, balance_params = balance_notes(items, items.labeled, inclusion=inclusion)
    problem = Problem(
        ctx, labeled, notes=tuple(notes), checks=tuple(balance), params=balance_params
    )
    result = run(problem, method, options, level=level, target=target)
    if labeled.pi is not None:
        result = _hooks.design_saving(result, items, ctx, labeled.pi, signals)
    return result
