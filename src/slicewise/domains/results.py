"""Frozen results of domain estimation and design-based validation (same conventions as
:class:`slicewise.results.ProfileResult`: read-only arrays, ``level=0.95``, ``ci``, ``to_frame``,
``plot``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import _display as display
from .._display import Displayed
from .._typing import BoolArray, FloatArray, ObjectArray
from .._validation import check_level
from ..results import (
    ConfidenceInterval,
    Report,
    _frozen,
    _jsonable,
    check_bounded,
    critical_value,
    robust_ci,
)

if TYPE_CHECKING:
    import os

    from matplotlib.axes import Axes


def domain_interval(
    estimate: FloatArray,
    se: FloatArray,
    level: float,
    *,
    bias_bound: FloatArray | None = None,
    naive_estimate: FloatArray | None = None,
    n_labeled_eff: FloatArray | None = None,
) -> ConfidenceInterval:
    """The interval of every domain estimate: one rule for results and the oracle harness.

    Parameters
    ----------
    estimate, se : ndarray of shape (D,)
    level : float
    bias_bound : ndarray of shape (D,), optional
        Bias bound b of smoothed estimates (0 elsewhere).
    naive_estimate, n_labeled_eff : ndarray of shape (D,), optional
        Each domain's labels-only mean and labeled effective size: given, the interval is the
        Wilson-type one of :func:`slicewise.inference.bounded.interval_bounds`; otherwise
        estimate +/- (z se + b).

    Returns
    -------
    ConfidenceInterval
        NaN where the domain has no estimate or no standard error.

    Notes
    -----
    Where a domain's labels all agree (fewer than one effective labeled item on the minority
    side, n* min(p, 1 - p) < 1, with at least 2 labeled items), a design variance can be 0
    (Horvitz-Thompson, Hajek) or collapse toward it, and the Wilson-type interval would shrink to a
    point. Its standard error is then floored at the Agresti-Coull "plus two" value
    (:func:`slicewise.inference.variance.plus_two_variance`), as profiles floor theirs
    (:func:`slicewise.inference.variance.degenerate_floor`), so n* is at most n_L + 2. A single
    labeled item has no design variance at all: its (model-based) interval is kept. Where every
    label of a domain is 1 (0) the interval reaches 1 (0) (:func:`interval_bounds`; measured:
    PSN-IRT's model_3 answers all 14,042 MMLU items correctly; with 281-1,404 labels, all 1, and
    the GREG estimate 0.999 or so, it covered 0.53-0.55 over 200 draws without this).
    """
    from ..inference.bounded import interval_bounds

    bound = np.zeros(np.shape(estimate)) if bias_bound is None else bias_bound
    crit = critical_value(level)
    if naive_estimate is None:
        low, high = interval_bounds(estimate, se, crit, bound)
    else:
        n_l = np.asarray(n_labeled_eff, dtype=np.float64)
        low, high = interval_bounds(
            estimate,
            np.maximum(se, _degenerate_floor(naive_estimate, n_l)),
            crit,
            bound,
            naive_estimate=naive_estimate,
            n_labeled_eff=n_l,
        )
    ok = np.isfinite(estimate) & np.isfinite(se)
    return ConfidenceInterval(low=np.where(ok, low, np.nan), high=np.where(ok, high, np.nan))


def _degenerate_floor(naive_estimate: FloatArray, n_labeled_eff: FloatArray) -> FloatArray:
    """Standard-error floor of :func:`domain_interval` (0 where the labels do not all agree)."""
    from ..inference.variance import plus_two_variance

    p = np.clip(np.asarray(naive_estimate, dtype=np.float64), 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        minority = n_labeled_eff * np.minimum(p, 1.0 - p)
        degenerate = (n_labeled_eff >= 2.0) & (minority < 1.0)
    value = np.sqrt(plus_two_variance(n_labeled_eff, p))
    out: FloatArray = np.where(degenerate & np.isfinite(value), value, 0.0)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class DomainResult(Report):
    """Estimated domain means with their uncertainty and shrinkage diagnostics.

    Attributes
    ----------
    domain : ndarray of object, shape (D,) or (D, r)
        Domain labels (one column per domain column).
    domain_names : tuple of str
    estimate, se : ndarray of shape (D,)
        Point estimate and standard error. The standard error is the direct design-based one
        wherever it exists, smoothed domains included (their interval adds :attr:`bias_bound`);
        a smoothed domain without one (a single label) reports the model's: root Prasad-Rao MSE
        for ``'fh'``, posterior sd for ``'pp-s'`` and ``'pp-ts'``. NaN for domains without labels.
    method : str
    level : float
        Default level of :meth:`ci` and :meth:`to_frame`.
    n_labeled, n_pool : ndarray of shape (D,)
    shrinkage : ndarray of shape (D,)
        Weight of the domain's own direct estimate (1 for direct methods, -> 1 as n_d grows).
    direct_estimate, direct_se : ndarray of shape (D,)
        The direct estimate underneath (itself for direct methods).
    borrowed : ndarray of bool, shape (D,)
        True where the estimate leans on other domains: the smoothed point is reported and the
        domain's own direct estimate has shrinkage weight below 0.5, or it has no direct
        standard error (:class:`slicewise.smoothing.objective.Borrowing`, the rule of profiles too).
    params : mapping
    notes : tuple of str
    bias_bound : ndarray of shape (D,), optional
        Bias bound of a smoothed estimate, added to the interval's half-width (0 for domains
        that report their direct estimate; :mod:`slicewise.smoothing.objective`).
    naive_estimate : ndarray of shape (D,), optional
        Each domain's labels-only mean (Hajek: design-weighted mean of its labels), which sets
        the variance p(1 - p) of the bounded intervals.
    n_labeled_eff : ndarray of shape (D,), optional
        Each domain's labeled effective size, Kish's (sum w)^2 / sum w^2 of the design
        weights w = 1 / pi of its labeled units (the labeled count under SRS within domains).
    """

    domain: ObjectArray
    domain_names: tuple[str, ...]
    estimate: FloatArray
    se: FloatArray
    method: str
    level: float
    n_labeled: FloatArray
    n_pool: FloatArray
    shrinkage: FloatArray
    direct_estimate: FloatArray
    direct_se: FloatArray
    borrowed: BoolArray
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    bias_bound: FloatArray | None = None
    naive_estimate: FloatArray | None = None
    n_labeled_eff: FloatArray | None = None

    def __post_init__(self) -> None:
        bound = np.zeros(self.estimate.shape) if self.bias_bound is None else self.bias_bound
        object.__setattr__(self, "bias_bound", bound)
        for name in ("naive_estimate", "n_labeled_eff"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full(self.estimate.shape, np.nan))
        for name in (
            "estimate",
            "se",
            "bias_bound",
            "naive_estimate",
            "n_labeled_eff",
            "n_labeled",
            "n_pool",
            "shrinkage",
            "direct_estimate",
            "direct_se",
        ):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "borrowed", _frozen(self.borrowed, dtype=bool))
        object.__setattr__(self, "domain", _frozen(self.domain, dtype=object))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        check_level(self.level, func="DomainResult")

    @property
    def size(self) -> int:
        """D, the number of domains."""
        return int(self.estimate.shape[0])

    def ci(
        self, level: float | None = None, *, bounded: bool | None = None, robust: bool = False
    ) -> ConfidenceInterval:
        """Intervals at ``level`` (default: the result's own).

        Parameters
        ----------
        level : float, optional
        bounded : bool, optional
            True: the Wilson-type score interval of a mean of labels in [0, 1] with the
            effective sample size n* = p(1 - p) / se^2, p the domain's labels-only (Hajek) mean
            (:mod:`slicewise.inference.bounded`), always inside [0, 1]. False: the normal
            interval estimate +/- z se. None (default): True where the result carries the
            labels-only means (every result of :func:`slicewise.domains`, whose labels are in
            [0, 1]), False otherwise. The normal interval misses domains whose mean is near 0
            or 1 far more often than its level says, because its standard error shrinks with
            the estimate (measured, default method, 200 draws: LMArena pairs at 10-27 labels
            covered 0.919 on average and 56 of 298 pairs below 0.90, the Wilson-type interval
            0.961 and none; docs/results/per_slice_domains.md).
        robust : bool, default False
            For a smoothed method under ``objective='ensemble'``: the robust empirical-Bayes
            interval (:meth:`slicewise.ProfileResult.ci`, :mod:`slicewise.inference.robust_eb`).

        Notes
        -----
        Where a smoothed estimate is reported, both kinds are widened by its :attr:`bias_bound`
        b so that they contain the domain's direct interval (+/- b, or for the bounded kind from
        the lower bound at estimate - b to the upper bound at estimate + b; see
        :mod:`slicewise.smoothing.objective`). The rule is :func:`domain_interval`, which the
        oracle harness of ``research/`` calls too, and profiles use the same bounds
        (:func:`slicewise.inference.bounded.interval_bounds`).
        """
        func = "DomainResult.ci"
        lvl = self.level if level is None else check_level(level, func=func)
        if robust:
            return robust_ci(self, lvl, "robust_se", bounded, func)
        use = self.bounded_intervals(bounded, func=func)
        if use and not self.has_labels_mean:
            raise ValueError(
                f"The 'bounded' parameter of {func} needs each domain's labels-only mean and "
                "labeled effective size, which this result does not carry (it was not built by "
                "slicewise.domains). Got bounded=True."
            )
        return domain_interval(
            self.estimate,
            self.se,
            lvl,
            bias_bound=self.bias_bound,
            naive_estimate=self.naive_estimate if use else None,
            n_labeled_eff=self.n_labeled_eff if use else None,
        )

    @property
    def has_labels_mean(self) -> bool:
        """Whether the result carries the labels-only means the bounded intervals need."""
        return self.naive_estimate is not None and bool(np.any(np.isfinite(self.naive_estimate)))

    def bounded_intervals(self, bounded: bool | None = None, *, func: str = "ci") -> bool:
        """Whether :meth:`ci` with ``bounded`` gives the Wilson-type intervals."""
        if bounded is None:
            return self.has_labels_mean
        return check_bounded(bounded, func=func)

    def with_level(self, level: float) -> DomainResult:
        """The same result reporting intervals at another level (a new object)."""
        return dataclasses.replace(self, level=check_level(level, func="with_level"))

    def _domain_columns(self) -> dict[str, Any]:
        if self.domain.ndim == 1:
            return {self.domain_names[0] if self.domain_names else "domain": self.domain}
        return {name: self.domain[:, j] for j, name in enumerate(self.domain_names)}

    def to_frame(self, level: float | None = None, *, bounded: bool | None = None) -> pd.DataFrame:
        """Tidy table, one row per domain.

        Columns: the domain column(s), estimate, se, df (inf: the interval is normal or
        Wilson-type with the normal quantile), bias_bound (added to the half-width of smoothed estimates), lower, upper (of
        :meth:`ci` with ``bounded``), n_labeled, n_pool, shrinkage, direct_estimate, direct_se,
        naive_estimate (the labels-only mean), n_labeled_eff, borrowed, method.
        """
        interval = self.ci(level, bounded=bounded)
        frame = pd.DataFrame(self._domain_columns())
        frame["estimate"] = self.estimate
        frame["se"] = self.se
        frame["df"] = np.full(self.size, np.inf)
        frame["bias_bound"] = self.bias_bound
        frame["lower"] = interval.low
        frame["upper"] = interval.high
        frame["n_labeled"] = self.n_labeled.astype(np.int64)
        frame["n_pool"] = self.n_pool.astype(np.int64)
        frame["shrinkage"] = self.shrinkage
        frame["direct_estimate"] = self.direct_estimate
        frame["direct_se"] = self.direct_se
        frame["naive_estimate"] = self.naive_estimate
        frame["n_labeled_eff"] = self.n_labeled_eff
        frame["borrowed"] = self.borrowed
        frame["method"] = self.method
        return frame

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (method, level, sizes, params, notes)."""
        return {
            "method": self.method,
            "level": self.level,
            "domains": self.size,
            "domain_columns": list(self.domain_names),
            "n_labeled": int(np.nansum(self.n_labeled)),
            "n_pool": int(np.nansum(self.n_pool)),
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "notes": list(self.notes),
        }

    def plot(
        self,
        ax: Axes | None = None,
        *,
        direct: bool = True,
        truth: FloatArray | None = None,
        level: float | None = None,
    ) -> Axes:
        """Forest plot of the domain estimates (needs matplotlib: ``slicewise[plot]``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        direct : bool
            Also mark the direct estimates (hollow circles) where they differ.
        truth : array of shape (D,), optional
            Known domain means to overlay (fully labeled tables).
        level : float, optional
        """
        out: Axes = display.plot(self, ax=ax, direct=direct, truth=truth, level=level)
        return out


@dataclass(frozen=True, eq=False, repr=False)
class ValidationResult(Displayed):
    """Design-based cross-validation of several domain estimators.

    The per-domain interface (``estimate``, ``se``, ``ci``, ``to_frame``, ``plot``) is that of
    the selected estimator refitted on the full sample; :meth:`scores` compares all candidates.

    Attributes
    ----------
    candidates : tuple of str
    dbcv_mse : ndarray of shape (C,)
        DB-CV estimate of each candidate's full-sample MSE, averaged over domains.
    naive_cv_mse, split50_mse, split80_mse : ndarray of shape (C,)
        Uncorrected K-fold CV and 50/50, 80/20 sample-splitting scores, for comparison.
    design_mse : ndarray of shape (C,)
        Mean of each candidate's own reported se^2.
    domain_mse : ndarray of shape (C, D)
        Per-domain DB-CV MSE estimates.
    selected : str
        Candidate with the smallest DB-CV MSE.
    reported_rmse : float
        sqrt of the selected candidate's DB-CV MSE: the error DB-CV reports.
    result : DomainResult
        The selected candidate fitted on the full sample.
    folds : int
    notes : tuple of str
    """

    candidates: tuple[str, ...]
    dbcv_mse: FloatArray
    naive_cv_mse: FloatArray
    split50_mse: FloatArray
    split80_mse: FloatArray
    design_mse: FloatArray
    domain_mse: FloatArray
    selected: str
    reported_rmse: float
    result: DomainResult
    folds: int
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in (
            "dbcv_mse",
            "naive_cv_mse",
            "split50_mse",
            "split80_mse",
            "design_mse",
            "domain_mse",
        ):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    @property
    def estimate(self) -> FloatArray:
        """Estimates of the selected candidate."""
        return self.result.estimate

    @property
    def se(self) -> FloatArray:
        """Standard errors of the selected candidate."""
        return self.result.se

    @property
    def level(self) -> float:
        """Default interval level."""
        return self.result.level

    def ci(self, level: float | None = None, *, bounded: bool | None = None) -> ConfidenceInterval:
        """Intervals of the selected candidate (see :meth:`DomainResult.ci`)."""
        return self.result.ci(level, bounded=bounded)

    def to_frame(self, level: float | None = None, *, bounded: bool | None = None) -> pd.DataFrame:
        """Per-domain table of the selected candidate, with its DB-CV MSE per domain."""
        frame = self.result.to_frame(level, bounded=bounded)
        frame["dbcv_mse"] = self.domain_mse[self.candidates.index(self.selected)]
        return frame

    def scores(self) -> pd.DataFrame:
        """One row per candidate: DB-CV, naive CV, 50/50 and 80/20 split scores (as RMSE)."""

        def root(a: FloatArray) -> FloatArray:
            out: FloatArray = np.sqrt(np.maximum(a, 0.0))
            return out

        return pd.DataFrame(
            {
                "method": list(self.candidates),
                "dbcv_rmse": root(self.dbcv_mse),
                "naive_cv_rmse": root(self.naive_cv_mse),
                "split50_rmse": root(self.split50_mse),
                "split80_rmse": root(self.split80_mse),
                "reported_se_rms": root(self.design_mse),
                "selected": [c == self.selected for c in self.candidates],
            }
        )

    def __str__(self) -> str:
        scores = self.scores().to_string(index=False, float_format=lambda v: f"{v:.4f}")
        return f"Design-based cross-validation chose {self.selected}\n{scores}\n\n{self.result}"

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        title: str | None = None,
        label: str | None = None,
        context: Mapping[str, object] | None = None,
    ) -> str:
        """The HTML report of the selected estimator (see :meth:`DomainResult.to_html`)."""
        return self.result.to_html(path, title=title, label=label, context=context)

    def plot(self, ax: Axes | None = None, *, level: float | None = None) -> Axes:
        """Forest plot of the selected candidate (see :meth:`DomainResult.plot`)."""
        return self.result.plot(ax, level=level)
