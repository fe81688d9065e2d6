"""Cascaded raters: cheap signals on the pool, an expensive rater on a subset, gold on a nested one.

The estimator and its derivation are in :mod:`slicewise.estimators.cascade`, the variance in
:mod:`slicewise.inference.cascade_variance` (LACE paper, Appendix F and the Conclusion's
"Cascaded raters").
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray, Kind, Target
from .._validation import check_common
from ..data.column_stats import standardize
from ..data.files import read_table
from ..data.table import make_table
from ..estimators.cascade import CascadeMoments, cascade_estimate, rater_r2
from ..estimators.centered import CoefficientFit
from ..exceptions import SparseNeighbourhoodWarning
from ..inference.cascade_variance import break_even, cascade_variance
from ..methods.base import LabeledSet, MethodFit
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.run import build_context, fit_with_warnings, pool_notes, wrap_result
from ..results import ProfileResult

FUNC = "cascade"


def _rater_columns(
    frame: pd.DataFrame,
    rater: str | Sequence[str],
    *,
    reserved: Sequence[str],
    labeled: np.ndarray,
) -> tuple[FloatArray, IntArray, tuple[str, ...]]:
    """Validate the rater columns; return the values on R, the positions of R and the names."""
    names = [rater] if isinstance(rater, str) else list(rater)
    if not names or not all(isinstance(n, str) for n in names):
        raise ValueError(
            f"The 'rater' parameter of {FUNC} must be a column name or a non-empty list of "
            f"column names. Got {rater!r} instead."
        )
    missing = [n for n in names if n not in frame.columns]
    if missing:
        raise ValueError(
            f"The 'rater' parameter of {FUNC} names column(s) {missing} that are not in the "
            f"table. Available columns: {list(frame.columns)[:30]}."
        )
    clash = [n for n in names if n in reserved]
    if clash:
        raise ValueError(
            f"Rater column(s) {clash} are also used as `z`, `signals` or `label`; the expensive "
            "rater must be its own column(s)."
        )
    values = np.empty((len(frame), len(names)))
    for j, name in enumerate(names):
        column = pd.to_numeric(frame[name], errors="coerce")
        bad = column.isna() & frame[name].notna()
        if bad.any():
            raise ValueError(
                f"Rater column '{name}' has {int(bad.sum())} non-numeric values; it must be "
                "numeric (missing where the rater was not run)."
            )
        values[:, j] = np.asarray(column, dtype=np.float64)
    infinite = np.isinf(values)
    if infinite.any():
        raise ValueError(
            f"Rater columns {names} have {int(infinite.sum())} infinite values; rater scores must "
            "be finite where present."
        )
    present = ~np.isnan(values)
    partial = present.any(axis=1) & ~present.all(axis=1)
    if partial.any():
        raise ValueError(
            f"{int(partial.sum())} rows have some but not all of the rater columns {names}; the "
            "rater set R is where every rater column is present."
        )
    in_r = present.all(axis=1)
    not_nested = labeled & ~in_r
    if not_nested.any():
        rows = np.flatnonzero(not_nested)[:5].tolist()
        raise ValueError(
            f"Rater column(s) {names} are missing on {int(not_nested.sum())} gold-labeled rows "
            f"(e.g. rows {rows}); the gold-labeled set L must be nested in the rater set R."
        )
    index = np.flatnonzero(in_r)
    return values[index], np.asarray(index, dtype=np.intp), tuple(names)


def _fixed(value: Any, *, g: int, k: int, scale: FloatArray, name: str) -> FloatArray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 1:
        arr = np.broadcast_to(arr, (g, arr.size))
    if arr.shape != (g, k) or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"The 'coef' parameter of {FUNC} must give {name} as {k} finite numbers per grid point "
            f"(shape ({g}, {k}) or ({k},), raw units). Got shape {np.shape(value)}."
        )
    return np.asarray(arr * scale, dtype=np.float64)


def cascade(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None,
    rater: str | Sequence[str],
    label: str,
    kind: Kind | None = None,
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    coef: tuple[Any, Any] | None = None,
    level: float = 0.95,
    target: Target = "pool",
    id: str | None = None,
) -> ProfileResult:
    """Profile from cascaded raters: signals on T, an expensive rater on R, gold labels on L.

    Parameters
    ----------
    table : DataFrame or path
        One row per pool item.
    z : str or list of str
        Profile column(s).
    signals : str, list of str or None
        Cheap signals S, observed on every item.
    rater : str or list of str
        The expensive rater X (e.g. a strong LLM judge's score): present on a simple random
        subset R of the pool, missing elsewhere.
    label : str
        Gold label Y, present on a simple random subset L of R (L must be nested in R).
    kind, grid, bandwidth, nuisance_scale, ridge
        As in :func:`slicewise.profile`; the ridge penalty and nuisance bandwidth apply to both
        coefficients.
    coef : (b, c), optional
        Fixed coefficients in raw units instead of the fitted ones (simulations): b over
        (rater columns..., signal columns...) with shape (G, K_X + K_S) or (K_X + K_S,), c over the
        signals with shape (G, K_S) or (K_S,).
    level : float, default 0.95
    target : {'pool', 'population'}, default 'pool'
    id : str, optional

    Returns
    -------
    ProfileResult
        ``method='cascade'``; ``r2`` is the estimated local R^2 of Y on (X, S); ``gain`` is the
        estimated variance ratio naive / cascade; ``params`` holds the level-wise variances,
        pi_{L|R}, pi_{R|T}, the local R^2 of Y on S and of each rater column on S, and the sizes.

    Notes
    -----
    With V = (X, S) (:mod:`slicewise.estimators.cascade`),

    .. math::

        \\hat\\theta(z) = \\bar Y_L(z) - \\hat b(z)^\\top\\{\\bar V_L(z) - \\bar V_R(z)\\}
                        - \\hat c(z)^\\top\\{\\bar S_R(z) - \\bar S_T(z)\\},

    exactly unbiased for the pool profile with fixed coefficients in the group case, and its
    variance is Var(A) + Var(B) of :mod:`slicewise.inference.cascade_variance`. With a rater that
    carries no information beyond S, b_hat ~ (0, c_hat) and the estimator is LACE on (Y, S) up to
    second-order terms. Use :func:`cascade_break_even` to decide whether the rater is worth its
    cost.

    References
    ----------
    LACE paper, Appendix F and Conclusion ("Cascaded raters").

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 3, 3000)
    >>> y = (rng.random(3000) < 0.3 + 0.2 * g).astype(float)
    >>> frame = pd.DataFrame({"g": g, "cheap": y + rng.normal(0, 1.5, 3000),
    ...                       "judge": y + rng.normal(0, 0.4, 3000), "y": y})
    >>> frame.loc[1000:, "judge"] = np.nan
    >>> frame.loc[200:, "y"] = np.nan
    >>> res = sw.cascade(frame, z="g", signals="cheap", rater="judge", label="y", kind="ordinal")
    >>> bool(np.all(res.gain > 1))
    True
    """
    level, target = check_common(level, target, func=FUNC)
    options = MethodOptions(func=FUNC, ridge=ridge, nuisance_scale=nuisance_scale)
    frame = read_table(table) if isinstance(table, str | os.PathLike) else table
    items = make_table(frame, z=z, signals=signals, label=label, kind=kind, id=id, func=FUNC)
    reserved = [*items.z_names, *items.signal_names, items.label_name]
    rater_raw, rater_index, rater_names = _rater_columns(
        frame, rater, reserved=reserved, labeled=items.labeled
    )
    ctx = build_context(items, grid=grid, bandwidth=bandwidth)
    labeled = LabeledSet.from_table(items)
    notes = pool_notes(items, labeled, "cascade", prefix="", stacklevel=3)
    rater_std, _, rater_scale = standardize(rater_raw)
    position = np.full(items.n_pool, -1, dtype=np.intp)
    position[rater_index] = np.arange(rater_index.size)
    label_in_r = position[labeled.index]
    scale = options.nuisance_scale
    kernel = ctx.kernel(1.0)
    kernel_b = kernel if scale == 1.0 else ctx.kernel(scale)
    pool_t = ctx.moments("signals", nuisance_scale=scale)
    moments = CascadeMoments.compute(
        pool_t=pool_t,
        kernel=kernel,
        kernel_b=kernel_b,
        signals=ctx.features,
        rater=rater_std,
        rater_index=rater_index,
        label_index=label_in_r,
        label=labeled.y,
    )
    g, kx, ks = ctx.grid_size, len(rater_names), ctx.features.shape[1]
    if coef is None:
        b_fit, c_fit = moments.coefficients(options.ridge)
    else:
        if not (isinstance(coef, tuple | list) and len(coef) == 2):
            raise ValueError(
                f"The 'coef' parameter of {FUNC} must be a pair (b, c) of coefficient arrays. "
                f"Got {type(coef).__name__} instead."
            )
        v_scale = np.concatenate([rater_scale, ctx.signal_scale])
        b_fit = CoefficientFit.fixed(_fixed(coef[0], g=g, k=kx + ks, scale=v_scale, name="b"))
        c_fit = CoefficientFit.fixed(_fixed(coef[1], g=g, k=ks, scale=ctx.signal_scale, name="c"))
    estimate = cascade_estimate(moments, b_fit.coef, c_fit.coef)
    variance = cascade_variance(moments, b_fit, c_fit)
    _, naive, naive_notes = fit_with_warnings(ctx, labeled, "naive", options, target)
    naive_var = naive.var_pool if target == "pool" else naive.var_population
    var = variance.pool if target == "pool" else variance.population
    sparse = np.isfinite(estimate) & ~np.isfinite(var)
    if sparse.any():
        message = (
            f"{int(sparse.sum())} grid point(s) have too few labeled items for a cascade "
            "variance, so their se is NaN."
        )
        warnings.warn(message, SparseNeighbourhoodWarning, stacklevel=2)
        notes.append(message)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(var > 0, naive_var / np.where(var > 0, var, 1.0), np.nan)
    if rater_index.size == items.n_pool:
        notes.append("The rater is present on every item (R = T): the level-2 term vanishes.")
    fit = MethodFit(
        estimate=estimate,
        var_pool=variance.pool,
        var_population=variance.population,
        r2=variance.r2_y_xs,
        gain=gain,
        borrowed=np.zeros(g, dtype=bool),
        params={
            "ridge": options.ridge,
            "nuisance_scale": scale,
            "rater": list(rater_names),
            "n_rater": int(rater_index.size),
            "var_level1": variance.level1,
            "var_level2": variance.level2,
            "fraction_label_in_rater": variance.fraction_lr,
            "fraction_rater_in_pool": variance.fraction_rt,
            "r2_y_xs": variance.r2_y_xs,
            "r2_y_s": variance.r2_y_s,
            "r2_x_s": rater_r2(moments),
            "fixed_coef": coef is not None,
        },
    )
    params = {"bandwidth": ctx.locality.bandwidth.tolist(), "kind": ctx.locality.kind}
    return wrap_result(
        ctx,
        labeled,
        fit,
        naive,
        method="cascade",
        target=target,
        level=level,
        params=params,
        notes=[*notes, *naive_notes],
    )


@dataclass(frozen=True, eq=False)
class CascadePlan:
    """When the middle rater pays for itself (see :func:`cascade_break_even`).

    Attributes
    ----------
    cost_ratio : ndarray
        rho = cost_rater / cost_label.
    break_even : ndarray
        rho*: the cascade beats two-level LACE at equal budget iff rho < rho*.
    pays : ndarray of bool
        rho < rho*.
    rater_per_label : ndarray
        Optimal rater calls per gold label N_R / n (1 when the rater does not pay).
    efficiency : ndarray
        Variance of LACE / variance of the optimally allocated cascade at equal budget.
    """

    cost_ratio: FloatArray
    break_even: FloatArray
    pays: np.ndarray
    rater_per_label: FloatArray
    efficiency: FloatArray

    def to_frame(self) -> pd.DataFrame:
        """One row per input element: cost_ratio, break_even, pays, rater_per_label, efficiency."""
        shape = np.broadcast(self.cost_ratio, self.break_even).shape
        return pd.DataFrame(
            {
                name: np.broadcast_to(getattr(self, name), shape).reshape(-1)
                for name in ("cost_ratio", "break_even", "pays", "rater_per_label", "efficiency")
            }
        )


def cascade_break_even(
    *,
    r2_y_xs: float | FloatArray,
    r2_y_s: float | FloatArray,
    cost_rater: float,
    cost_label: float,
) -> CascadePlan:
    """Does the expensive middle rater pay for itself? Break-even cost ratio and efficiency.

    Parameters
    ----------
    r2_y_xs : float or array
        Local R^2 of the gold label on the rater and the cheap signals (e.g. the ``r2`` of a
        :func:`cascade` result, or ``params['r2_y_xs']``).
    r2_y_s : float or array
        Local R^2 of the gold label on the cheap signals alone (``params['r2_y_s']``, or the
        ``r2`` of ``sw.profile(method='lace')``).
    cost_rater, cost_label : float
        Cost of one rater call and of one gold label (any unit, > 0). Cheap signals are free.

    Returns
    -------
    CascadePlan

    Notes
    -----
    With a = 1 - R^2_{Y|XS}, d = R^2_{Y|XS} - R^2_{Y|S} and rho = cost_rater / cost_label, the
    variance x budget of LACE is proportional to a + d and that of the optimally allocated
    cascade to (sqrt(a) + sqrt(d rho))^2 (rater calls per gold label sqrt(d / (a rho))), so the
    middle level pays iff

    .. math::

        \\rho < \\rho^* = \\frac{\\sqrt{1 - R^2_{Y\\mid S}} - \\sqrt{1 - R^2_{Y\\mid XS}}}
                              {\\sqrt{1 - R^2_{Y\\mid S}} + \\sqrt{1 - R^2_{Y\\mid XS}}} .

    Derivation and the large-pool approximation: :func:`slicewise.inference.cascade_variance.
    break_even`. R^2 values are clipped to [0, 1] and d to >= 0. The R^2 of the rater on the cheap
    signals (reported by :func:`cascade` as ``params['r2_x_s']``) is not needed: what X adds beyond
    S is d; a rater that S nearly determines has d ~ 0 and never pays.

    References
    ----------
    LACE paper, Appendix F and Conclusion ("Cascaded raters"); Cochran (1977), double sampling.

    Examples
    --------
    >>> import slicewise as sw
    >>> plan = sw.cascade_break_even(r2_y_xs=0.8, r2_y_s=0.3, cost_rater=1.0, cost_label=20.0)
    >>> round(float(plan.break_even), 3), bool(plan.pays)
    (0.303, True)
    """
    for name, value in (("cost_rater", cost_rater), ("cost_label", cost_label)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ValueError(
                f"The '{name}' parameter of cascade_break_even must be a positive finite number. "
                f"Got {value!r} instead."
            )
        if not np.isfinite(value):
            raise ValueError(
                f"The '{name}' parameter of cascade_break_even must be finite. Got {value!r}."
            )
    r_xs = np.asarray(r2_y_xs, dtype=np.float64)
    r_s = np.asarray(r2_y_s, dtype=np.float64)
    if not (np.all(np.isfinite(r_xs)) and np.all(np.isfinite(r_s))):
        raise ValueError(
            "The 'r2_y_xs' and 'r2_y_s' parameters of cascade_break_even must be finite."
        )
    plan = break_even(r_xs, r_s, np.asarray(float(cost_rater) / float(cost_label)))
    return CascadePlan(
        cost_ratio=plan.cost_ratio,
        break_even=plan.break_even,
        pays=np.asarray(plan.cost_ratio < plan.break_even),
        rater_per_label=plan.rater_per_label,
        efficiency=plan.efficiency,
    )
