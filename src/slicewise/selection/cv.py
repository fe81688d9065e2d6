"""Within-L K-fold cross-validation of a method's tuning parameter (LACE paper, Appendix H.1).

The labeled set L is split into K approximately outcome-balanced folds. For every candidate value
and held-out fold the method is fitted with gold labels from the other folds only: the held-out
items stay in the pool as unlabeled items, so the pool, its kernels and its cached pool-side sums
do not change and one :class:`~slicewise.methods.base.PoolContext` serves every fit. A candidate is
scored against the held-out fold's own h-smoothed gold profile, and the value with the smallest
mean score is refitted on all of L.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._display import Displayed
from .._typing import TARGETS, FloatArray, IntArray, Kind, Target
from .._validation import check_choice, check_level, check_positive_int
from ..data.folds import balanced_folds
from ..data.table import MissingRule, make_table
from ..methods.base import LabeledSet, PoolContext
from ..methods.options import DEFAULTS, MethodOptions, check_values
from ..methods.registry import METHODS
from ..methods.run import build_context, check_method_needs, fit_with_warnings, wrap_result
from ..moments.kernel_ops import column_sums, take_rows, weighted_sums
from ..results import ProfileResult

FUNC = "select"
#: Smallest number of labeled items per fold.
MIN_PER_FOLD = 2


@dataclass(frozen=True, eq=False, repr=False)
class SelectionResult(Displayed):
    """The outcome of :func:`select`.

    Attributes
    ----------
    method : str
    parameter : str
        The tuned option of :class:`~slicewise.methods.base.MethodOptions` (for example 'ridge',
        'C', 'ppci_multiplier', 'strata_count' or 'ppi_bandwidth_scale').
    chosen : float or int
        The selected value (an int for 'strata_count').
    grid : ndarray of shape (P,)
        The candidate values, in the order given.
    scores : ndarray of shape (P, K)
        CV score of every candidate on every held-out fold (NaN for a fold without any usable
        grid point).
    fold_sizes : ndarray of int, shape (K,)
        Labeled items per fold.
    result : ProfileResult
        The method refitted on all of L with the chosen value.
    """

    method: str
    parameter: str
    chosen: float | int
    grid: FloatArray
    scores: FloatArray
    fold_sizes: IntArray
    result: ProfileResult

    def __post_init__(self) -> None:
        for name in ("grid", "scores", "fold_sizes"):
            array = np.array(getattr(self, name), copy=True)
            array.setflags(write=False)
            object.__setattr__(self, name, array)

    @property
    def mean_score(self) -> FloatArray:
        """Score of every candidate averaged over the folds (ignoring NaN folds), shape (P,)."""
        with np.errstate(invalid="ignore"):
            counts = np.isfinite(self.scores).sum(axis=1)
            totals = np.where(np.isfinite(self.scores), self.scores, 0.0).sum(axis=1)
            return np.asarray(
                np.where(counts > 0, totals / np.maximum(counts, 1), np.nan), dtype=np.float64
            )

    @property
    def curve(self) -> pd.DataFrame:
        """The CV curve: one row per candidate; columns param, fold_1 ... fold_K, mean."""
        frame = pd.DataFrame({"param": self.grid})
        if self.parameter == "strata_count":
            frame["param"] = frame["param"].astype(int)
        for k in range(self.scores.shape[1]):
            frame[f"fold_{k + 1}"] = self.scores[:, k]
        frame["mean"] = self.mean_score
        return frame


def _check_grid(values: object, parameter: str, method: str) -> FloatArray:
    """Validate candidate values of ``parameter`` by its declared constraint."""
    return check_values(values, parameter, func=FUNC, argument="param_grid")


def _candidate(options: MethodOptions, parameter: str, value: float) -> MethodOptions:
    typed: float | int = int(value) if parameter == "strata_count" else float(value)
    changes: dict[str, Any] = {parameter: typed}
    return dataclasses.replace(options, **changes)


def fold_scores(
    ctx: PoolContext,
    labeled: LabeledSet,
    held: np.ndarray,
    method: str,
    candidates: list[MethodOptions],
    rng: np.random.Generator,
) -> FloatArray:
    """Scores of every candidate for one held-out fold (see :func:`select`)."""
    train = LabeledSet(index=labeled.index[~held], y=labeled.y[~held])
    rows = take_rows(ctx.kernel(1.0), labeled.index[held])
    mass = column_sums(rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        gold = np.where(
            mass > 0,
            weighted_sums(rows, labeled.y[held].reshape(-1, 1))[:, 0] / np.where(mass > 0, mass, 1),
            np.nan,
        )
    fit = METHODS[method].fit
    estimates = np.vstack(
        [
            fit(ctx, train, dataclasses.replace(option, rng=copy.deepcopy(rng))).estimate
            for option in candidates
        ]
    )
    usable = (mass > 0) & np.all(np.isfinite(estimates), axis=0)
    if not usable.any():
        return np.full(len(candidates), np.nan)
    weight = mass[usable] / mass[usable].sum()
    return np.asarray(((estimates[:, usable] - gold[usable]) ** 2) @ weight, dtype=np.float64)


def select(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None,
    label: str,
    method: str,
    param_grid: Sequence[float] | FloatArray | None = None,
    folds: int = 3,
    kind: Kind | None = None,
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    primary: str | None = None,
    level: float = 0.95,
    target: Target = "pool",
    rng: int | np.random.Generator | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    ppci_multiplier: float = DEFAULTS.ppci_multiplier,
    ppi_bandwidth_scale: float = DEFAULTS.ppi_bandwidth_scale,
    id: str | None = None,
    missing: MissingRule = "impute",
) -> SelectionResult:
    """Choose a method's tuning parameter by within-L K-fold cross-validation, then refit.

    Parameters
    ----------
    table, z, signals, label, kind, grid, bandwidth, primary, level, target, id, missing
        As in :func:`slicewise.profile`.
    method : str
        A method with a tuning parameter (see ``sw.methods()["tunable"]``).
    param_grid : sequence of float, optional
        Candidate values of the method's tuning parameter; default the LACE paper's grid for that
        parameter (``sw.methods()["default_grid"]``).
    folds : int, default 3
        Number of folds K of L.
    rng : int or numpy Generator, optional
        Randomness of the folds and of methods that cross-fit. The refit on all of L uses the
        same stream as :func:`slicewise.profile` with the same ``rng`` would, so with an int seed
        the refit equals ``profile(..., <parameter>=chosen, rng=seed)``.
    nuisance_scale, ridge, coef, C, strata_count, ppci_multiplier, ppi_bandwidth_scale
        The method's other options, as in :func:`slicewise.profile`; the tuned one is replaced by
        each candidate in turn.

    Returns
    -------
    SelectionResult

    Raises
    ------
    ValueError
        For a method without a tuning parameter, an invalid ``param_grid`` or ``folds``, fewer
        than two labeled items per fold, or when no held-out fold has kernel mass at any grid
        point; and for every invalid input that :func:`slicewise.profile` rejects.

    Notes
    -----
    Folds are approximately outcome-balanced (:func:`balanced_folds`). For candidate value v and
    held-out fold k, the method is fitted with the labels of L \\ L_k (the items of L_k become
    unlabeled pool items) giving :math:`\\hat\\theta^{(-k)}_v(z)`, and compared with the held-out
    gold profile, the naive local mean of L_k at the profile bandwidth h,
    :math:`\\bar Y_{L_k}(z) = \\sum_{L_k} k_i(z) Y_i / m_k(z)`, where
    :math:`m_k(z) = \\sum_{i\\in L_k} k_i(z)` is the held-out fold's kernel mass (the unnormalised
    profile weights; group counts for categorical profiles). The score is the kernel-mass-weighted
    squared distance

    .. math::

        \\mathrm{CV}_k(v) = \\frac{\\sum_{z\\in Z_k} m_k(z)\\{\\hat\\theta^{(-k)}_v(z)
            - \\bar Y_{L_k}(z)\\}^2}{\\sum_{z\\in Z_k} m_k(z)},\\qquad
        \\mathrm{CV}(v) = \\frac1K\\sum_k \\mathrm{CV}_k(v),

    over the grid points Z_k with held-out mass m_k(z) > 0 at which every candidate's estimate
    is finite (points without held-out mass are skipped; a fold with none is left out of the
    mean). The chosen value minimises CV(v) (the first in grid order on a tie) and is refitted on
    all of L. Every candidate of a fold is fitted with an identical random stream (common random
    numbers for cross-fitting), and gold labels outside L never enter.

    References
    ----------
    LACE paper, Appendix H.1 ("Within-L three-fold cross-validation").

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> level = rng.integers(1, 6, 3000)
    >>> y = (rng.random(3000) < 0.9 - 0.1 * level).astype(float)
    >>> frame = pd.DataFrame({"level": level, "noise": rng.normal(size=3000), "correct": y})
    >>> frame.loc[rng.permutation(3000)[600:], "correct"] = np.nan
    >>> sel = sw.select(frame, z="level", signals=["noise"], label="correct", method="lace",
    ...                 kind="ordinal", rng=1)
    >>> sel.parameter, sel.curve.shape
    ('ridge', (5, 5))
    """
    method = check_choice(method, tuple(METHODS), name="method", func=FUNC)
    spec = METHODS[method]
    if spec.tunable is None:
        tunable = [name for name, s in METHODS.items() if s.tunable is not None]
        raise ValueError(
            f"The 'method' parameter of {FUNC} must name a method with a tuning parameter "
            f"({', '.join(repr(t) for t in tunable)}). Got {method!r}, which has none."
        )
    parameter = spec.tunable
    candidates_grid = _check_grid(
        spec.grid if param_grid is None else param_grid, parameter, method
    )
    folds = check_positive_int(folds, name="folds", func=FUNC, minimum=2)
    target = check_choice(target, TARGETS, name="target", func=FUNC)
    level = check_level(level, func=FUNC)
    # select's own `folds` are the selection folds, not the methods' cross-fitting folds
    arguments = {k: v for k, v in locals().items() if k != "folds"}
    options = MethodOptions.from_arguments(arguments, func=FUNC)
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
    ctx = build_context(items, grid=grid, bandwidth=bandwidth, primary=primary, func=FUNC)
    check_method_needs(ctx, method, options)
    labeled = LabeledSet.from_table(items)
    if labeled.n < MIN_PER_FOLD * folds:
        raise ValueError(
            f"The 'folds' parameter of {FUNC} needs at least {MIN_PER_FOLD} labeled items per "
            f"fold: {labeled.n} labeled items cannot fill {folds} folds."
        )

    generator = options.rng if options.rng is not None else np.random.default_rng()
    fold_rng, *fit_rngs = generator.spawn(folds + 1)
    fold = balanced_folds(labeled.y, folds, fold_rng)
    candidates = [_candidate(options, parameter, v) for v in candidates_grid]
    scores = np.column_stack(
        [
            fold_scores(ctx, labeled, fold == k, method, candidates, fit_rngs[k])
            for k in range(folds)
        ]
    )
    usable = np.isfinite(scores).any(axis=0)
    if not usable.any():
        raise ValueError(
            f"No held-out fold of {FUNC} has kernel mass at a grid point with a finite estimate, "
            "so no candidate can be scored; use a coarser grid or more labels."
        )
    mean = np.nanmean(scores[:, usable], axis=1)
    best = int(np.argmin(mean))
    chosen_options = candidates[best]
    fit, naive, notes = fit_with_warnings(ctx, labeled, method, chosen_options, target)
    result = wrap_result(
        ctx,
        labeled,
        fit,
        naive,
        method=method,
        target=target,
        level=level,
        params={"bandwidth": ctx.locality.bandwidth.tolist(), "kind": ctx.locality.kind},
        notes=[*items.notes, *notes],
    )
    chosen_value: float | int = getattr(chosen_options, parameter)
    return SelectionResult(
        method=method,
        parameter=parameter,
        chosen=chosen_value,
        grid=candidates_grid,
        scores=scores,
        fold_sizes=np.bincount(fold, minlength=folds),
        result=result,
    )
