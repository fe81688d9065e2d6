"""Deployment-weighted scores psi = E_Q[theta(Z)] from the profile's influence representation.

LACE paper, Section 3.4 ("Deployment-weighted scores"): a user deploys on a distribution Q of Z that
differs from the benchmark's P. With r_Q(z) = dQ_Z / dP_Z,

.. math::

    \\psi = E_Q[\\theta(Z)] = E_P[r_Q(Z)\\, Y],

and the centered augmentation still applies with importance weights: for any fixed f,
E_P[r_Q(Z){Y - f(S, Z)}] + E_P[r_Q(Z) f(S, Z)] = psi.

* **Discrete Z** (categorical, ordinal): Q is a vector of level frequencies q_g and
  psi_hat = sum_g q_g theta_hat(g), with theta_hat the profile. Its variance comes from the
  item-level influence values of the profile (:mod:`slicewise.inference.influence`):
  V = sum_{i in L} {sum_g q_g phi_i(g)}^2, which is sum_g q_g^2 V(g) for disjoint groups and adds
  the covariances of overlapping ordinal neighbourhoods otherwise. It is not a reweighted global
  mean: each level keeps its own coefficient and its own labeled fraction.
* **Continuous Z**: the item-level centered form with weights r_i = r_Q(Z_i) normalised within
  each sample, omega_{i,A} = r_i / sum_{l in A} r_l,

  .. math::

      \\hat\\psi = \\sum_{i\\in L}\\omega_{i,L}\\{Y_i - f_i\\} + \\sum_{i\\in T}\\omega_{i,T} f_i ,

  the one-"grid point" case of the engine with kernel column r, so its variance is the engine's:
  (1 - pi_r) kappa sum_L omega_{i,L}^2 (e_i - ebar)^2 with e = Y - f and pi_r = sum_L r / sum_T r.
  ``method='lace'`` uses f_i = beta_hat(Z_i)' X_i with the profile's local ridge coefficient
  interpolated from the grid to Z_i by kernel weights (treated as fixed: first-order adaptivity);
  ``'global_cv'`` one ridge coefficient fitted under the weights omega; ``'naive'`` f = 0 (the
  Hajek importance-weighted labeled mean). Since f of ``lace`` and ``global_cv`` is fitted on
  the same labels, the residual variance is the one given the labeled set where that is the
  larger (:func:`slicewise.inference.calibration.given_set_factor`, calibrated on the
  standardised signals, as the profile's variance is).

The pool target is the realized weighted mean: sum_g q_g theta_T(g), or sum_T r_i Y_i / sum_T r_i;
the population target E_Q[theta(Z)] treats Q (and r_Q) as given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .._display import Displayed
from .._typing import FloatArray, IntArray, Kind, ObjectArray, Target
from .._validation import check_choice, check_common, check_level
from ..data.table import make_table
from ..estimators.centered import CoefficientFit, ridge_coefficient
from ..inference.influence import dense_rows
from ..methods.base import GivenSet, LabeledSet, MethodFit, PoolContext, linear_fit
from ..methods.control_variates import LinearPieces, linear_pieces
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.run import build_context, check_method_needs, fit_with_warnings, pool_notes
from ..moments.sums import LabeledMoments, PoolMoments
from ..results import ConfidenceInterval, normal_interval
from .deploy_mix import DeploySpec, continuous_ratio, discrete_weights
from .influence import (
    INFLUENCE_METHODS,
    InfluenceMethod,
    InfluencePieces,
    influence_pieces,
    scaled_influence,
)

FUNC = "deployment_score"


@dataclass(frozen=True, eq=False, repr=False)
class DeploymentScore(Displayed):
    """A deployment-weighted score psi = E_Q[theta(Z)] with its uncertainty.

    Attributes
    ----------
    estimate, se : float
        psi_hat and its standard error for :attr:`target`.
    naive_estimate, naive_se : float
        The same weighting applied to the labels-only profile (discrete Z) or the Hajek
        importance-weighted labeled mean (continuous Z).
    method, target, kind : str
    level : float
    cells : ndarray of object
        Discrete Z: the grid levels. Continuous Z: the grid points, each standing for the items
        nearest to it.
    cell_weight : ndarray
        Deployment mass of each cell (q_g; continuous: sum of omega_{i,T} over the cell).
    cell_estimate, cell_se : ndarray
        theta_hat(g) and its se (discrete); the cell's weighted score (continuous, se NaN).
    cell_contribution : ndarray
        Each cell's additive share of psi_hat (they sum to :attr:`estimate`).
    n_labeled, n_pool : int
    params : mapping
    notes : tuple of str
    """

    estimate: float
    se: float
    naive_estimate: float
    naive_se: float
    method: str
    target: str
    level: float
    kind: str
    cells: ObjectArray
    cell_weight: FloatArray
    cell_estimate: FloatArray
    cell_se: FloatArray
    cell_contribution: FloatArray
    n_labeled: int
    n_pool: int
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("cell_weight", "cell_estimate", "cell_se", "cell_contribution"):
            arr = np.array(getattr(self, name), dtype=np.float64, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        cells = np.array(self.cells, dtype=object, copy=True)
        cells.setflags(write=False)
        object.__setattr__(self, "cells", cells)
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        check_level(self.level, func="DeploymentScore")

    def ci(self, level: float | None = None) -> ConfidenceInterval:
        """Normal interval estimate +/- z se at ``level`` (default: the result's level)."""
        lvl = self.level if level is None else check_level(level, func="DeploymentScore.ci")
        return normal_interval(np.asarray(self.estimate), np.asarray(self.se), lvl)

    def to_frame(self, level: float | None = None) -> pd.DataFrame:
        """One row: estimate, se, lower, upper, naive_estimate, naive_se, method, target, sizes."""
        interval = self.ci(level)
        return pd.DataFrame(
            {
                "estimate": [self.estimate],
                "se": [self.se],
                "lower": [float(interval.low)],
                "upper": [float(interval.high)],
                "naive_estimate": [self.naive_estimate],
                "naive_se": [self.naive_se],
                "method": [self.method],
                "target": [self.target],
                "n_labeled": [self.n_labeled],
                "n_pool": [self.n_pool],
            }
        )

    def contributions(self) -> pd.DataFrame:
        """Per-level (per-cell) table: cell, weight, estimate, se, contribution."""
        return pd.DataFrame(
            {
                "cell": self.cells,
                "weight": self.cell_weight,
                "estimate": self.cell_estimate,
                "se": self.cell_se,
                "contribution": self.cell_contribution,
            }
        )


def deployment_score(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    label: str,
    deploy: DeploySpec,
    signals: str | Sequence[str] | None = None,
    kind: Kind | None = None,
    method: InfluenceMethod = "auto",
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    ratio_bandwidth: float | Sequence[float] | None = None,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
    target: Target = "pool",
    id: str | None = None,
) -> DeploymentScore:
    """Score under a deployment distribution Q of Z: psi = E_Q[theta(Z)], with its interval.

    Parameters
    ----------
    table : DataFrame or path
        One row per pool item, as for :func:`slicewise.profile`.
    z : str or list of str
    label : str
    deploy : mapping, Series, callable or array-like
        Categorical or ordinal Z: a mapping level -> target frequency (nonnegative, normalised to
        sum to one; unnamed levels get 0) or a sample of deployment levels (their frequencies).
        Continuous Z: a density ratio function r_Q(z) = dQ/dP (called once with the pool's Z,
        shape (M,) for one column or (M, q)), or a sample of deployment Z values (shape (N,) or
        (N, q)), turned into r_Q by the ratio of kernel densities
        (:mod:`slicewise.estimators.density_ratio`).
    signals : str or list of str, optional
    kind : {'continuous', 'ordinal', 'categorical'}, optional
    method : {'auto', 'lace', 'global_cv', 'naive'}, default 'auto'
        The profile method (discrete Z) or the augmentation (continuous Z; module notes). A
        centered method with an explicit coefficient, whose item-level influence values give the
        variance; ``'auto'`` chooses one of them as :func:`slicewise.profile` does (naive, pooled,
        local or shrunk-local coefficient) and refits it on all labels, or uses ``'lace'`` where it
        chooses a learned prediction (:mod:`slicewise.models.influence`; the notes say which).
    grid, bandwidth, nuisance_scale, ridge
        As in :func:`slicewise.profile`. Discrete Z: the grid must hold every level with positive
        weight (the default grid holds all). Continuous Z: the grid carries the local coefficient
        of ``method='lace'`` and the cells of :meth:`DeploymentScore.contributions`.
    ratio_bandwidth : float or list of float, optional
        Kernel bandwidth of the density-ratio estimate from a deployment sample (default: the
        profile bandwidth h).
    objective : {'slice', 'ensemble'}, default 'slice'
        Accepted as in :func:`slicewise.profile`. The score is one weighted average over
        slices, which every slice's own (unsmoothed) estimate gives without bias; smoothing
        across slices would only add bias to it, so both objectives report the same score, and
        the notes say so.
    level : float, default 0.95
    target : {'pool', 'population'}, default 'pool'
    id : str, optional

    Returns
    -------
    DeploymentScore

    Notes
    -----
    Discrete Z:

    .. math::

        \\hat\\psi = \\sum_g q_g \\hat\\theta(g),\\qquad
        \\widehat V = \\sum_{i \\in L}\\Big\\{\\sum_g q_g \\phi_i(g)\\Big\\}^2 ,

    with phi_i(g) the scaled influence values of the profile (module notes of
    :mod:`slicewise.inference.influence`); the population target adds the pool-sampling part.
    Continuous Z: the importance-weighted centered form of the module notes, with the engine's
    variance for a single kernel column r_Q(Z_i). When every item is labeled both reduce exactly
    to the plain weighted average (sum_g q_g Ybar_T(g), or sum_T r_i Y_i / sum_T r_i).

    References
    ----------
    LACE paper, Section 3.4 ("Deployment-weighted scores") and Section 2 (importance weighting by
    r_Q(z) = dQ_Z / dP_Z).

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> g = rng.choice(["chat", "code", "math"], 1500)
    >>> y = (rng.random(1500) < np.where(g == "math", 0.4, 0.8)).astype(float)
    >>> frame = pd.DataFrame({"task": g, "judge": y + rng.normal(0, 0.7, 1500), "y": y})
    >>> frame.loc[300:, "y"] = np.nan
    >>> res = sw.deployment_score(frame, z="task", signals="judge", label="y",
    ...                           deploy={"chat": 0.7, "code": 0.3})
    >>> round(float(res.cell_weight.sum()), 6)
    1.0
    """
    method = check_choice(method, INFLUENCE_METHODS, name="method", func=FUNC)
    level, target = check_common(level, target, func=FUNC)
    options = MethodOptions.from_arguments(
        {"ridge": ridge, "nuisance_scale": nuisance_scale, "objective": objective}, func=FUNC
    )
    items = make_table(table, z=z, signals=signals, label=label, kind=kind, id=id, func=FUNC)
    ctx = build_context(items, grid=grid, bandwidth=bandwidth)
    check_method_needs(ctx, method, options)
    labeled = LabeledSet.from_table(items)
    notes = pool_notes(items, labeled, method, prefix="", stacklevel=3)
    notes.append(
        "The score is one weighted average over slices, estimated from every slice's own "
        "(unsmoothed) estimate, which has no bias for it: its interval covers the score under "
        f"either objective (objective={options.objective!r} asked)."
    )
    params: dict[str, Any] = {
        "objective": options.objective,
        "ridge": options.ridge,
        "nuisance_scale": options.nuisance_scale,
        "bandwidth": ctx.locality.bandwidth.tolist(),
        "kind": ctx.locality.kind,
    }
    resolved = influence_pieces(ctx, labeled, method, options, func=FUNC)
    params |= resolved.params
    if ctx.locality.kind == "continuous":
        ratio, ratio_notes = continuous_ratio(ctx, deploy, ratio_bandwidth)
        return _continuous_score(
            ctx,
            labeled,
            ratio,
            method,
            resolved,
            options,
            target,
            level,
            params,
            [*notes, *resolved.notes, *ratio_notes],
        )
    q, weight_notes = discrete_weights(ctx, deploy)
    fit, naive, fit_notes = fit_with_warnings(
        ctx, labeled, method, options, target, fit=resolved.fit
    )
    est, se, cell_se, var_notes = _weighted(fit, resolved.pieces, target, q)
    naive_pieces = linear_pieces(ctx, labeled, "naive", options)
    naive_est, naive_se, _, _ = _weighted(naive, naive_pieces, target, q)
    return DeploymentScore(
        estimate=est,
        se=se,
        naive_estimate=naive_est,
        naive_se=naive_se,
        method=method,
        target=target,
        level=level,
        kind=ctx.locality.kind,
        cells=ctx.locality.labels,
        cell_weight=q,
        cell_estimate=fit.estimate,
        cell_se=cell_se,
        cell_contribution=np.where(q > 0, q * np.nan_to_num(fit.estimate), 0.0),
        n_labeled=labeled.n,
        n_pool=items.n_pool,
        params=params,
        notes=(*notes, *resolved.notes, *weight_notes, *fit_notes, *var_notes),
    )


def _weighted(
    fit: MethodFit, pieces: LinearPieces, target: Target, q: FloatArray
) -> tuple[float, float, FloatArray, list[str]]:
    """sum_g q_g theta_hat(g) and its influence-based standard error."""
    variance = fit.var_pool if target == "pool" else fit.var_population
    used = q > 0
    notes: list[str] = []
    if not np.all(np.isfinite(fit.estimate[used])):
        return (
            float("nan"),
            float("nan"),
            np.sqrt(variance),
            ["A level with positive deployment weight has no labeled item: the score is NaN."],
        )
    estimate = float(np.sum(q[used] * fit.estimate[used]))
    if not np.all(np.isfinite(variance[used])):
        notes.append(
            "A level with positive deployment weight has too few labels for a variance: se is NaN."
        )
        return estimate, float("nan"), np.sqrt(variance), notes
    phi, psi = scaled_influence(pieces, fit, target)
    total = float(np.sum((phi @ q) ** 2))
    if psi is not None:
        total += float(np.sum((psi @ q) ** 2))
    return estimate, float(np.sqrt(total)), np.sqrt(variance), notes


def _item_coefficients(ctx: PoolContext, coef: FloatArray) -> FloatArray:
    """The grid coefficient interpolated to every item: sum_g k_i(g) c(g) / sum_g k_i(g)."""
    k = dense_rows(ctx.kernel(1.0))
    mass = k.sum(axis=1)
    nearest = np.argmax(k, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            mass[:, None] > 0, (k @ coef) / np.where(mass > 0, mass, 1.0)[:, None], coef[nearest]
        )
    return np.asarray(out, dtype=np.float64)


def _nearest_cell(ctx: PoolContext) -> IntArray:
    z = ctx.table.z / ctx.locality.bandwidth
    grid = ctx.locality.grid / ctx.locality.bandwidth
    dist = ((z[:, None, :] - grid[None, :, :]) ** 2).sum(axis=2)
    return np.asarray(np.argmin(dist, axis=1), dtype=np.intp)


def _continuous_score(
    ctx: PoolContext,
    labeled: LabeledSet,
    ratio: FloatArray,
    method: str,
    resolved: InfluencePieces,
    options: MethodOptions,
    target: Target,
    level: float,
    params: dict[str, Any],
    notes: list[str],
) -> DeploymentScore:
    if not ratio[labeled.index].sum() > 0:
        raise ValueError(
            f"The deployment weights of {FUNC} are zero on every labeled item, so the labels "
            "carry no information about the deployment score."
        )
    kernel = ratio.reshape(-1, 1)
    # auto: its chosen candidate's form; a local or shrunk coefficient is interpolated as lace's
    form = "lace" if resolved.chosen == "lace_shrunk" else resolved.chosen
    if form == "lace":
        item_coef = _item_coefficients(ctx, resolved.pieces.coef.coef)
        x = np.einsum("ik,ik->i", item_coef, ctx.features).reshape(-1, 1)
    elif form == "global_cv":
        x = ctx.features
    else:
        x = np.zeros((ctx.n_pool, 0))
    pool = PoolMoments.compute(kernel, x)
    lab = LabeledMoments.compute(pool, labeled.index, labeled.y, x)
    if form == "lace":
        coef = CoefficientFit.fixed(np.ones((1, 1)))
    elif form == "global_cv":
        coef = ridge_coefficient(pool, lab, options.ridge)
    else:
        coef = CoefficientFit.fixed(np.zeros((1, 0)))
    given = None
    if x.shape[1]:  # the prediction (lace) or the coefficient (global_cv) is fitted on these
        # labels: the variance given the labeled set, calibrated on the standardised signals
        given = GivenSet(
            labeled,
            x[labeled.index],
            ctx.features[labeled.index],
            (ratio @ ctx.features / ratio.sum()).reshape(1, -1),
        )
    fit = linear_fit(pool, lab, coef, given=given)
    naive_x = np.zeros((ctx.n_pool, 0))
    naive_pool = PoolMoments.compute(kernel, naive_x)
    naive_lab = LabeledMoments.compute(naive_pool, labeled.index, labeled.y, naive_x)
    naive = linear_fit(naive_pool, naive_lab, CoefficientFit.fixed(np.zeros((1, 0))))
    var = fit.var_pool if target == "pool" else fit.var_population
    naive_var = naive.var_pool if target == "pool" else naive.var_population
    # additive cell shares: sum_L omega_L (Y - f) + sum_T omega_T f over the items nearest each cell
    f_item = x @ coef.coef[0] if x.shape[1] else np.zeros(ctx.n_pool)
    omega_t = ratio / ratio.sum()
    r_lab = ratio[labeled.index]
    omega_l = r_lab / r_lab.sum()
    cell = _nearest_cell(ctx)
    g = ctx.grid_size
    weight = np.asarray(np.bincount(cell, weights=omega_t, minlength=g), dtype=np.float64)
    share = np.asarray(
        np.bincount(cell, weights=omega_t * f_item, minlength=g)
        + np.bincount(
            cell[labeled.index], weights=omega_l * (labeled.y - f_item[labeled.index]), minlength=g
        ),
        dtype=np.float64,
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        cell_est = np.where(weight > 0, share / np.where(weight > 0, weight, 1.0), np.nan)
    params = {**params, "effective_labeled": float(1.0 / np.sum(omega_l**2))}
    return DeploymentScore(
        estimate=float(fit.estimate[0]),
        se=float(np.sqrt(var[0])),
        naive_estimate=float(naive.estimate[0]),
        naive_se=float(np.sqrt(naive_var[0])),
        method=method,
        target=target,
        level=level,
        kind="continuous",
        cells=ctx.locality.labels,
        cell_weight=weight,
        cell_estimate=cell_est,
        cell_se=np.full(g, np.nan),
        cell_contribution=share,
        n_labeled=labeled.n,
        n_pool=ctx.n_pool,
        params=params,
        notes=tuple(notes),
    )
