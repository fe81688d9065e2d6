"""Frozen result objects shared by every estimator: one way to ask each question."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from . import _display as display
from ._display import Displayed
from ._typing import BoolArray, FloatArray, ObjectArray
from ._validation import check_level

if TYPE_CHECKING:
    import os

    from matplotlib.axes import Axes

    from .results_worst import WorstSlices


class ConfidenceInterval(NamedTuple):
    """Pointwise interval bounds, arrays of the result's shape."""

    low: FloatArray
    high: FloatArray


def critical_value(level: float, df: FloatArray | None = None) -> Any:
    """Two-sided critical value: Student t with ``df`` where finite, else normal."""
    from scipy import stats  # lazily: scipy.stats costs ~0.6 s of start-up for every CLI call

    z = stats.norm.ppf(0.5 + level / 2.0)
    if df is None:
        return z
    df = np.asarray(df, dtype=np.float64)
    ok = np.isfinite(df) & (df > 0)
    return np.where(ok, stats.t.ppf(0.5 + level / 2.0, np.where(ok, df, 1.0)), z)


def normal_interval(
    estimate: FloatArray, se: FloatArray, level: float, df: FloatArray | None = None
) -> ConfidenceInterval:
    """Wald interval estimate +/- q se, q the normal (or, with ``df``, Student t) quantile."""
    half = critical_value(level, df) * se
    return ConfidenceInterval(low=estimate - half, high=estimate + half)


def check_bounded(bounded: object, *, func: str) -> bool:
    """Validate the ``bounded`` flag of an interval method (None is resolved by the caller)."""
    if not isinstance(bounded, bool | np.bool_):
        raise TypeError(
            f"The 'bounded' parameter of {func} must be True, False or None. Got {bounded!r} "
            "instead."
        )
    return bool(bounded)


def df_column(df: FloatArray) -> FloatArray:
    """Degrees of freedom as exported: the Student-t df, inf where the interval is normal."""
    df = np.asarray(df, dtype=np.float64)
    return np.where(np.isfinite(df) & (df > 0), df, np.inf)


def within_gap_range(estimate: Any, low: Any, high: Any) -> ConfidenceInterval:
    """A gap's interval intersected with [-1, 1], where a difference of two labels in [0, 1]
    lies (issue 31: with few labels a Student t quantile of df 1 gave +-248). Intersecting an
    interval with the parameter space never lowers its coverage; the interval still contains
    the estimate, which a linear adjustment can put slightly outside."""
    est = np.asarray(estimate, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = np.fmin(np.maximum(np.asarray(low, dtype=np.float64), -1.0), est)
        hi = np.fmax(np.minimum(np.asarray(high, dtype=np.float64), 1.0), est)
    return ConfidenceInterval(
        low=np.where(np.isnan(low), np.nan, lo), high=np.where(np.isnan(high), np.nan, hi)
    )


def _frozen(array: object, dtype: Any = np.float64) -> Any:
    out = np.array(array, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


class Report(Displayed):
    """``summary()``, ``str()``, ``to_html()``, a short ``repr`` and ``_repr_html_`` of a result
    type, drawn by the renderers :mod:`slicewise.reports.register` registers for it
    (:mod:`slicewise._display`): one shape for profiles, domains and many models."""

    def summary(self) -> str:
        """A readable report: what was estimated, the method and why, one row per slice (or
        domain, or model), warnings. The JSON-ready description is :meth:`to_dict`."""
        return display.text(self)

    def __str__(self) -> str:
        return self.summary()

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        title: str | None = None,
        label: str | None = None,
        context: Mapping[str, object] | None = None,
    ) -> str:
        """Write a self-contained HTML report to ``path`` (if given) and return its text.

        One file with inline CSS and figures (no network): the estimate with its band, the
        per-slice table, what the method chose and why, every warning and note, a data summary
        and how to reproduce it. ``label`` names the measured column; ``context`` adds rows
        such as ``{'data': 'items.csv', 'signals': 'judge, conf', 'command': '...'}``.
        """
        return display.html(self, path, title=title, label=label, context=context)


@dataclass(frozen=True, eq=False, repr=False)
class ProfileResult(Report):
    """An estimated profile theta(z) on a grid, with its uncertainty and diagnostics.

    Attributes
    ----------
    z : ndarray of object, shape (G,) or (G, q)
        Grid points as the user sees them (numbers, ordinal levels or category names).
    estimate, se : ndarray of shape (G,)
        Point estimate and standard error for :attr:`target` (se is NaN where a method has no
        variance formula or the neighbourhood is too small; see the method's documentation).
    method : str
    target : {'pool', 'population'}
    level : float
        Default confidence level of :meth:`ci` and :meth:`to_frame`.
    naive_estimate, naive_se : ndarray of shape (G,)
        The labels-only local mean on the same labeled set and grid, for comparison.
    n_labeled_eff, n_pool_eff : ndarray of shape (G,)
        Effective sample sizes 1 / sum w^2 of the labeled set and of the pool.
    labeled_mass : ndarray of shape (G,)
        Local labeled fraction of the kernel mass, sum_L k_i(z) / sum_T k_i(z).
    r2, gain : ndarray of shape (G,)
        Estimated local R^2(z) of the adjustment and predicted gain 1 / (1 - (1 - pi) R^2): the
        asymptotic variance ratio naive / method from the in-sample R^2. The precision actually
        reported is :attr:`realized_gain` = naive_se^2 / se^2, which also carries the
        small-sample factor for coefficients fitted on the same labels and the variance floors,
        so it can be below 1 where ``gain`` is above 1 (the result's notes say where).
    n_equivalent : ndarray of shape (G,)
        Gold labels the labels-only smoother would need for the same precision at z
        (n_labeled_eff x gain, the predicted gain).
    borrowed : ndarray of bool, shape (G,)
        True where the estimate leans on strength borrowed from other grid points or domains.
    z_names : tuple of str
    kind : str
    n_labeled, n_pool : int
    params : mapping
        Tuning values actually used (bandwidths, ridge, ...).
    notes : tuple of str
        Human-readable remarks (choices made automatically and why, warnings).
    df : ndarray of shape (G,), optional
        Degrees of freedom of each point's interval (Student t); NaN means a normal interval.
    bias_bound : ndarray of shape (G,), optional
        Bound on the bias of a smoothed estimate, added to the half-width of every interval
        (0 where the estimate is direct; :mod:`slicewise.smoothing.objective`).
    unit_labels : bool, default False
        True when the estimate is a mean of labels that all lie in [0, 1] (not a gap): its
        intervals are then the Wilson-type ones of :meth:`ci` by default.
    """

    z: ObjectArray
    estimate: FloatArray
    se: FloatArray
    method: str
    target: str
    level: float
    naive_estimate: FloatArray
    naive_se: FloatArray
    n_labeled_eff: FloatArray
    n_pool_eff: FloatArray
    labeled_mass: FloatArray
    r2: FloatArray
    gain: FloatArray
    n_equivalent: FloatArray
    borrowed: BoolArray
    z_names: tuple[str, ...]
    kind: str
    n_labeled: int
    n_pool: int
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    df: FloatArray | None = None
    bias_bound: FloatArray | None = None
    unit_labels: bool = False

    def __post_init__(self) -> None:
        for name in (
            "estimate",
            "se",
            "naive_estimate",
            "naive_se",
            "n_labeled_eff",
            "n_pool_eff",
            "labeled_mass",
            "r2",
            "gain",
            "n_equivalent",
        ):
            object.__setattr__(self, name, _frozen(getattr(self, name)))
        object.__setattr__(self, "borrowed", _frozen(self.borrowed, dtype=bool))
        df = np.full(self.estimate.shape, np.nan) if self.df is None else self.df
        object.__setattr__(self, "df", _frozen(df))
        bound = np.zeros(self.estimate.shape) if self.bias_bound is None else self.bias_bound
        object.__setattr__(self, "bias_bound", _frozen(bound))
        object.__setattr__(self, "z", _frozen(self.z, dtype=object))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        check_level(self.level, func="ProfileResult")

    @property
    def size(self) -> int:
        """G, the number of grid points."""
        return int(self.estimate.shape[0])

    @property
    def realized_gain(self) -> FloatArray:
        """naive_se^2 / se^2: the variance ratio of the reported intervals (NaN where undefined).

        Unlike the predicted :attr:`gain`, it includes the small-sample factors and floors of
        both variances; below 1 the labels-only interval is the shorter one.
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(
                self.se > 0, self.naive_se**2 / np.where(self.se > 0, self.se, 1.0) ** 2, np.nan
            )
        out: FloatArray = np.where(np.isfinite(ratio), ratio, np.nan)
        return out

    def ci(
        self, level: float | None = None, *, bounded: bool | None = None, robust: bool = False
    ) -> ConfidenceInterval:
        """Pointwise intervals at ``level`` (default: the result's own level).

        Parameters
        ----------
        level : float, optional
        bounded : bool, optional
            True: a Wilson-type score interval with the Student t quantile q of :attr:`df` (normal
            where it is NaN) and the effective sample size n* = p(1 - p) / se^2 (p the naive
            estimate), always inside [0, 1] (:mod:`slicewise.inference.bounded`). Not clipping:
            the interval is that of a proportion with the reported precision. Only for a mean of
            labels in [0, 1]; a gap (:func:`slicewise.gap`, in [-1, 1]) raises ValueError.
            False: estimate +/- q se (it can leave [0, 1]).
            None (default): True for a mean of labels in [0, 1] (:attr:`unit_labels`), False
            for a gap between models. The symmetric interval misses slices whose mean is near 0 or 1 far more often
            than its level says (measured on PSN-IRT by difficulty, truth about 0.97 with some 150
            effective labels: 0.88 for the gold-only mean over 400 label draws; the Wilson-type
            interval 0.95), because its standard error shrinks with the estimate.

        robust : bool, default False
            For a profile smoothed under ``objective='ensemble'``: the robust empirical-Bayes
            interval of Armstrong, Kolesar and Plagborg-Moller (2022,
            :mod:`slicewise.inference.robust_eb`), which covers at ``level`` on average over the
            slices whatever the distribution of their departures from the smoothing model
            (NaN at slices that were not smoothed).

        Where an estimate moved toward the smoothing model under ``objective='slice'``, both
        kinds are widened by its :attr:`bias_bound` b so that they contain the slice's direct
        interval: +/- b on each side, or for the bounded kind from the lower bound at
        estimate - b to the upper bound at estimate + b.
        """
        from .inference.bounded import interval_bounds

        func = "ProfileResult.ci"
        lvl = self.level if level is None else check_level(level, func=func)
        if robust:
            return robust_ci(self, lvl, f"robust_se_{self.target}", bounded, func)
        crit = critical_value(lvl, self.df)
        bound = np.zeros(self.size) if self.bias_bound is None else self.bias_bound
        if not self.bounded_intervals(bounded, func=func):
            low, high = interval_bounds(self.estimate, self.se, crit, bound)
            if self.params.get("estimand") == "gap":
                return within_gap_range(self.estimate, low, high)
            return ConfidenceInterval(low=low, high=high)
        if self.params.get("estimand") == "gap":
            raise ValueError(
                f"The 'bounded' parameter of {func} keeps intervals inside [0, 1] for a mean of "
                "labels in [0, 1]; this result is a gap between two models, in [-1, 1]. Got "
                "bounded=True."
            )
        low, high = interval_bounds(
            self.estimate,
            self.se,
            crit,
            bound,
            naive_estimate=self.naive_estimate,
            n_labeled_eff=self.n_labeled_eff,
        )
        return ConfidenceInterval(low=low, high=high)

    def bounded_intervals(self, bounded: bool | None = None, *, func: str = "ci") -> bool:
        """Whether :meth:`ci` with ``bounded`` gives the Wilson-type intervals (None: the default,
        True for a mean of labels in [0, 1])."""
        if bounded is None:
            return self.unit_labels and self.params.get("estimand") != "gap"
        return check_bounded(bounded, func=func)

    def worst(self, level: float = 0.95, k: int | None = None) -> WorstSlices:
        """The slices where the model is worst, with family-wise confidence ``level``.

        Family-wise (simultaneous) intervals over every slice, at Šidák's per-interval level
        1 - level^(1/J) for the J slices with an interval (of the same kind as :meth:`ci`:
        Wilson-type for a mean of labels, widened by any bias bound), and the slices that could
        be among the ``k`` lowest (default 1): those with fewer than ``k`` other slices wholly
        below them. With probability at least ``level`` every interval covers its slice, and
        then the candidates include the true worst slices. Higher labels are better.
        See :mod:`slicewise.inference.worst` for why Šidák's level is the max-|t| one here.

        Parameters
        ----------
        level : float, default 0.95
        k : int, optional
            How many worst slices are asked about (default 1).

        Returns
        -------
        WorstSlices
        """
        from .results_worst import worst_slices

        return worst_slices(self, level=level, k=k)

    def with_level(self, level: float) -> ProfileResult:
        """The same result reporting intervals at another level (a new object)."""
        return dataclasses.replace(self, level=check_level(level, func="with_level"))

    def z_frame(self) -> pd.DataFrame:
        """The grid as a frame: one column ``z``, or one column per profile dimension."""
        if self.z.ndim == 1:
            return pd.DataFrame({"z": self.z})
        return pd.DataFrame({name: self.z[:, d] for d, name in enumerate(self.z_names)})

    def to_frame(self, level: float | None = None, *, bounded: bool | None = None) -> pd.DataFrame:
        """Tidy table: one row per grid point.

        Columns: z (or one column per profile dimension), estimate, se, df (of the interval's
        Student t; inf where it is normal), bias_bound, lower, upper (of :meth:`ci` with ``bounded``),
        naive_estimate, naive_se, n_labeled_eff, n_pool_eff, labeled_mass, r2, gain (predicted),
        realized_gain (naive_se^2 / se^2), n_equivalent, borrowed.
        """
        interval = self.ci(level, bounded=bounded)
        frame = self.z_frame()
        frame["estimate"] = self.estimate
        frame["se"] = self.se
        frame["df"] = df_column(np.full(self.size, np.nan) if self.df is None else self.df)
        frame["bias_bound"] = self.bias_bound
        frame["lower"] = interval.low
        frame["upper"] = interval.high
        frame["naive_estimate"] = self.naive_estimate
        frame["naive_se"] = self.naive_se
        frame["n_labeled_eff"] = self.n_labeled_eff
        frame["n_pool_eff"] = self.n_pool_eff
        frame["labeled_mass"] = self.labeled_mass
        frame["r2"] = self.r2
        frame["gain"] = self.gain
        frame["realized_gain"] = self.realized_gain
        frame["n_equivalent"] = self.n_equivalent
        frame["borrowed"] = self.borrowed
        return frame

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (method, target, level, sizes, params, notes)."""
        return {
            "method": self.method,
            "target": self.target,
            "level": self.level,
            "kind": self.kind,
            "z": list(self.z_names),
            "n_labeled": self.n_labeled,
            "n_pool": self.n_pool,
            "params": {k: _jsonable(v) for k, v in self.params.items()},
            "notes": list(self.notes),
        }

    def plot(
        self,
        ax: Axes | None = None,
        *,
        naive: bool = False,
        truth: FloatArray | None = None,
        level: float | None = None,
    ) -> Axes:
        """Draw the profile with its pointwise band (needs matplotlib: ``slicewise[plot]``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        naive : bool
            Also draw the labels-only profile with its band.
        truth : array of shape (G,), optional
            A known profile to overlay (simulations, fully labeled tables).
        level : float, optional
            Interval level (default: the result's own).
        """
        out: Axes = display.plot(self, ax=ax, naive=naive, truth=truth, level=level)
        return out


def robust_ci(
    result: Any, level: float, se_key: str, bounded: bool | None, func: str
) -> ConfidenceInterval:
    """``ci(robust=True)`` of a profile or domain result (see :meth:`ProfileResult.ci`)."""
    from .inference.robust_eb import robust_interval

    if result.params.get("objective") != "ensemble" or se_key not in result.params:
        raise ValueError(
            f"The 'robust' parameter of {func} gives the robust empirical-Bayes interval of an "
            "estimate smoothed under objective='ensemble'; this result was "
            + (
                "smoothed under objective='slice', whose intervals already cover each slice"
                if result.params.get("objective") == "slice"
                else "not smoothed"
            )
            + ". Got robust=True."
        )
    use = result.bounded_intervals(bounded, func=func)
    low, high = robust_interval(
        result.estimate,
        np.asarray(result.params[se_key], dtype=np.float64),
        np.asarray(result.params["robust_m2"], dtype=np.float64),
        level,
        naive_estimate=result.naive_estimate if use else None,
        n_labeled_eff=result.n_labeled_eff if use else None,
    )
    return ConfidenceInterval(low=low, high=high)


def _jsonable(value: Any) -> Any:
    """Plain JSON values; non-finite floats become the strings 'inf', '-inf' or 'nan'."""
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value
