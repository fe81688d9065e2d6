"""From a labeled sample to domain estimates: a direct estimator, optionally smoothed.

``fit_domains(problem, sample, method)`` is the one function the public API, design-based
cross-validation and the oracle harness call, so all three fit exactly the same estimators.

Methods: ``'ht'``, ``'hajek'``, ``'ppi'``, ``'ppi++'``, ``'greg'``, ``'greg-or-hajek'`` (direct,
design-based variances); ``'fh'`` (REML/EBLUP with the Prasad-Rao MSE, taxonomy levels if given);
``'pp-s'`` (Bayesian Fay-Herriot on GREG, exact integration); ``'pp-ts'`` (the same with additive
taxonomy effects). The models are those of :mod:`slicewise.smoothing.area`, and the smoothing
step that of :mod:`slicewise.smoothing.step`, which profiles use too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .._typing import BoolArray, FloatArray
from ..data.designs import DomainSample
from ..estimators.survey.base import DirectFit, pool_means, pooled_variance
from ..estimators.survey.direct import DIRECT, Direct, DomainProblem, fit_direct
from ..estimators.survey.greg import greg
from ..smoothing.area import Model
from ..smoothing.step import smooth

Method = Literal["ht", "hajek", "ppi", "ppi++", "greg", "greg-or-hajek", "fh", "pp-s", "pp-ts"]
METHODS: tuple[Method, ...] = (
    "ht",
    "hajek",
    "ppi",
    "ppi++",
    "greg",
    "greg-or-hajek",
    "fh",
    "pp-s",
    "pp-ts",
)
SMOOTHED: tuple[str, ...] = ("fh", "pp-s", "pp-ts")
#: The area-level model of each smoothed method (:mod:`.area`); ``'pp-ts'`` is ``'pp-s'`` with
#: the taxonomy levels as additive random effects.
SMOOTHING_MODEL: dict[str, Model] = {"fh": "fh", "pp-s": "pp-s", "pp-ts": "pp-s"}
__all__ = ["DIRECT", "Direct", "DomainProblem", "fit_direct"]


@dataclass(frozen=True, eq=False)
class DomainFit:
    """Domain estimates of one method on one sample.

    Attributes
    ----------
    method : str
    estimate, se : ndarray of shape (D,)
    weight : ndarray of shape (D,)
        Weight of the domain's own direct estimate (1 for direct methods).
    direct : DirectFit
        The direct estimator underneath (itself for direct methods).
    psi : ndarray of shape (D,)
        Sampling variances given to the smoothing model (the direct variances for direct methods).
    params : mapping
    bias_bound : ndarray of shape (D,), optional
        The realised shift from the direct estimate under the slice objective
        (:mod:`.objective`), which widens the interval.
    borrowed : ndarray of bool, shape (D,), optional
        Domains that lean on the others (:class:`.objective.Borrowing`; None: none).
    """

    method: str
    estimate: FloatArray
    se: FloatArray
    weight: FloatArray
    direct: DirectFit
    psi: FloatArray
    params: Mapping[str, Any] = field(default_factory=dict)
    bias_bound: FloatArray | None = None
    borrowed: BoolArray | None = None


def _check_observed(
    method: str, sample: DomainSample, direct: DirectFit, psi: FloatArray, n_observed: int
) -> None:
    """Raise a clear error when too few domains have a direct estimate with a sampling variance.

    The smoothing model needs each domain's direct estimate and its sampling variance psi_d > 0;
    with one label per domain no domain has a variance of its own, and none can be pooled.
    """
    if n_observed >= 2:
        return
    labeled = int(np.sum(sample.n_labeled >= 1))
    multi = int(np.sum(sample.n_labeled >= 2))
    finite = int(np.sum(np.isfinite(direct.estimate)))
    raise ValueError(
        f"Method {method!r} smooths the domains' direct estimates by their sampling variances, "
        f"which needs at least 2 domains with a positive sampling variance; got {n_observed}. "
        f"{labeled} of {sample.n_domains} domains have labels ({finite} with a direct estimate), "
        f"but only {multi} have 2 or more labels, and a variance is estimated (or pooled across "
        "domains) only from domains with at least 2 labels. Label at least 2 units in more "
        "domains, or use a direct method ('ht', 'hajek', 'greg')."
    )


def design_matrix(problem: DomainProblem, sample: DomainSample, direct: DirectFit) -> FloatArray:
    """Intercept plus the domain covariates (D x p)."""
    n_dom = sample.n_domains
    if problem.covariates is not None:
        cov = problem.covariates
    elif problem.auxiliaries.shape[1]:
        slope = direct.params.get("slope")
        if slope is None:
            slope = greg(sample, problem.auxiliaries).params["slope"]
        fitted = problem.auxiliaries @ np.asarray(slope)
        cov = pool_means(sample.domain, fitted[:, None], n_dom)
    else:
        cov = np.zeros((n_dom, 0))
    return np.column_stack([np.ones(n_dom), cov])


def fit_domains(problem: DomainProblem, sample: DomainSample, method: str) -> DomainFit:
    """Fit ``method`` on ``sample``.

    Parameters
    ----------
    problem : DomainProblem
    sample : DomainSample
    method : str
        One of :data:`METHODS`.

    Returns
    -------
    DomainFit
        Domains without labeled units have NaN estimates (smoothed methods exclude them from the
        fit); the caller warns.

    Notes
    -----
    Smoothed methods use the direct estimator ``problem.direct`` with sampling variances
    pooled across domains (``variance_df``), the design matrix from :func:`design_matrix`, and
    the area-level model of :mod:`.linear_mixed`: ``'fh'`` at the REML estimate,
    ``'pp-s'``/``'pp-ts'`` integrated over the posterior of the variance components.
    """
    if method in DIRECT:
        fit = fit_direct(problem, sample, method)
        ones = np.where(np.isfinite(fit.estimate), 1.0, np.nan)
        return DomainFit(
            method=method,
            estimate=fit.estimate,
            se=np.sqrt(fit.variance),
            weight=ones,
            direct=fit,
            psi=fit.variance,
            params=dict(fit.params),
        )
    direct = fit_direct(problem, sample, problem.direct)
    psi = pooled_variance(sample, direct.variance, problem.variance_df)
    x_full = design_matrix(problem, sample, direct)
    use_taxonomy = method == "pp-ts" or (method == "fh" and bool(problem.taxonomy))
    names = problem.taxonomy_names if use_taxonomy else ()
    observed = np.isfinite(direct.estimate) & np.isfinite(psi) & (psi > 0)
    _check_observed(method, sample, direct, psi, int(observed.sum()))
    direct_se = np.sqrt(direct.variance)
    direct_se = np.where(np.isfinite(direct_se), direct_se, np.sqrt(psi))
    step = smooth(
        direct.estimate,
        direct_se,
        psi,
        x_full,
        sample.n_labeled.astype(np.float64),
        model=SMOOTHING_MODEL[method],
        objective=problem.objective,
        critical=1.959963984540054,  # flags disagreement beyond the direct 95% interval
        taxonomy=problem.taxonomy if use_taxonomy else (),
        taxonomy_names=names,
        prior_scale=problem.prior_scale,
    )
    if step is None:
        raise ValueError(
            f"Method {method!r} needs more observed domains than domain covariates: "
            f"{int(observed.sum())} domains with labels for {x_full.shape[1]} columns "
            "(intercept included)."
        )
    reported = step.reported
    return DomainFit(
        method=method,
        estimate=reported.estimate,
        se=reported.se,
        weight=reported.own_weight,
        direct=direct,
        psi=psi,
        params={
            "direct": problem.direct,
            **step.params,
            "objective": problem.objective,
            "smoothed_estimate": step.smoothed.tolist(),
            "smoothed_se": step.smoothed_se.tolist(),
            "shrinkage_weight": step.weight.tolist(),
            "moved": reported.moved.tolist(),
            "capped": reported.capped.tolist(),
            "disagree": reported.disagree.tolist(),
            "robust_m2": step.robust_m2.tolist(),
            "robust_se": step.robust_se.tolist(),
        },
        bias_bound=reported.bias_bound,
        borrowed=reported.borrowed,
    )
