"""The one smoothing step of profiles and domains: fit the area-level model, then apply the objective.

:func:`smooth` takes the direct estimates of D disjoint slices (a profile's categorical or
exact-level ordinal grid points, or the domains of :func:`slicewise.domains`), their standard
errors, the sampling variances the model is given, the domain covariates and the taxonomy
levels; fits the area-level model ``'fh'`` or ``'pp-s'`` (:func:`.area.fit_area_model`) on the
slices with a direct estimate and a positive sampling variance; and combines the two under the
objective (:func:`.objective.borrow`). :mod:`slicewise.methods.smoothed` (``sw.profile``'s
``smooth=``) and :mod:`.domains` (``sw.domains``) differ only in what they feed it: the
profile's cross-fitted direct estimate and a synthetic covariate, or a domain's design-based
direct estimate, its pooled variance and the pool means of the auxiliaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .._typing import FloatArray, IntArray
from .area import Model, fit_area_model
from .linear_mixed import AreaModel, indicator_levels
from .objective import Borrowing, Objective, borrow


@dataclass(frozen=True, eq=False)
class Smoothing:
    """One smoothing step on D slices.

    Attributes
    ----------
    model : {'fh', 'pp-s'}
    objective : {'slice', 'ensemble'}
    smoothed, smoothed_se : ndarray of shape (D,)
        The model's estimate and standard error (NaN on slices it did not fit).
    weight : ndarray of shape (D,)
        The model's shrinkage weight of each slice's own direct estimate (NaN where not fitted).
    reported : Borrowing
        What is reported under the objective.
    robust_m2, robust_se : ndarray of shape (D,)
        The robust empirical-Bayes interval's inputs (:func:`.objective.robust_critical`):
        the mean square (1 - w) / w of the normalised bias and the standard error w sqrt(psi)
        of the smoothed estimate given the truth (NaN where not fitted).
    params : dict
        Variance components and fit diagnostics of the model.
    """

    model: Model
    objective: Objective
    smoothed: FloatArray
    smoothed_se: FloatArray
    weight: FloatArray
    reported: Borrowing
    robust_m2: FloatArray
    robust_se: FloatArray
    params: dict[str, Any] = field(default_factory=dict)


def full_rank_columns(x: FloatArray) -> FloatArray:
    """Drop columns of x that are (numerically) linear combinations of earlier ones."""
    keep: list[int] = []
    for j in range(x.shape[1]):
        trial = x[:, [*keep, j]]
        if (
            np.linalg.matrix_rank(trial, tol=1e-8 * max(1.0, float(np.abs(trial).max())))
            == len(keep) + 1
        ):
            keep.append(j)
    out: FloatArray = x[:, keep]
    return out


def observed_slices(direct: FloatArray, psi: FloatArray, x: FloatArray) -> IntArray:
    """The slices the model is fitted on: a direct estimate, psi > 0 and finite covariates."""
    ok = np.isfinite(direct) & np.isfinite(psi) & (psi > 0) & np.all(np.isfinite(x), axis=1)
    return np.flatnonzero(ok)


def smooth(
    direct: FloatArray,
    direct_se: FloatArray,
    psi: FloatArray,
    x: FloatArray,
    n_labeled: FloatArray,
    *,
    model: Model,
    objective: Objective,
    critical: FloatArray | float,
    taxonomy: Sequence[IntArray] = (),
    taxonomy_names: Sequence[str] = (),
    prior_scale: float = 0.25,
) -> Smoothing | None:
    """Fit the area-level model on the observed slices and report under ``objective``.

    Parameters
    ----------
    direct, direct_se : ndarray of shape (D,)
        Direct estimates and the standard errors of their intervals.
    psi : ndarray of shape (D,)
        Sampling variances given to the model (floored or pooled by the caller).
    x : ndarray of shape (D, p)
        Intercept and domain covariates; columns that are linear combinations of earlier ones
        on the observed slices are dropped.
    n_labeled : ndarray of shape (D,)
        Effective labeled sizes (the objective's cap depends on them).
    model : {'fh', 'pp-s'}
    objective : {'slice', 'ensemble'}
    critical : float or ndarray of shape (D,)
        Critical value of the direct intervals (to flag disagreement).
    taxonomy, taxonomy_names
        Level codes per slice of the additive taxonomy effects (PP-TS).
    prior_scale : float
        Half-Cauchy scale of the Bayesian fit.

    Returns
    -------
    Smoothing or None
        None when fewer observed slices than covariates plus two are available.
    """
    idx = observed_slices(direct, psi, x)
    if idx.size == 0:
        return None
    x_obs = full_rank_columns(x[idx])
    if idx.size <= x_obs.shape[1] + 1:
        return None
    if taxonomy:
        z, column_level = indicator_levels([c[idx] for c in taxonomy], list(taxonomy_names))
    else:
        z, column_level = np.zeros((idx.size, 0)), np.zeros(0, dtype=np.intp)
    area_model = AreaModel(
        y=direct[idx],
        psi=psi[idx],
        x=x_obs,
        z=z,
        column_level=column_level,
        level_names=tuple(taxonomy_names),
    )
    # many small dense matrices: a multithreaded BLAS only adds synchronisation
    with threadpool_limits(1, user_api="blas"):
        fit = fit_area_model(area_model, model, prior_scale=prior_scale)
    d = direct.size
    smoothed, smoothed_se, weight = (np.full(d, np.nan) for _ in range(3))
    smoothed[idx], smoothed_se[idx], weight[idx] = fit.estimate, fit.se, fit.weight
    reported = borrow(
        direct, direct_se, smoothed, smoothed_se, weight, n_labeled, critical, objective
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        own = np.clip(weight, 0.0, 1.0)
        robust_m2 = np.where(own > 0, (1.0 - own) / own, np.inf)
    return Smoothing(
        model=model,
        objective=objective,
        smoothed=smoothed,
        smoothed_se=smoothed_se,
        weight=weight,
        reported=reported,
        robust_m2=np.where(np.isfinite(weight), robust_m2, np.nan),
        robust_se=own * np.sqrt(psi),
        params={**dict(fit.params), "components": list(area_model.component_names)},
    )
