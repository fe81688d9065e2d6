"""Design-based direct estimators as profile methods, and the one bridge from a profile problem to
the domain estimators: HT, Hajek, PPI, PPI++, GREG and GREG-or-Hajek.

A categorical profile whose labeled items carry inclusion probabilities pi_i *is* a domain
problem: every level is a domain U_d, the labeled items of a level are its sample s_d, and a
direct estimator of the domain mean is a function of the design-weighted sums
sum_{s_d} a_i / pi_i (:mod:`slicewise.estimators.survey`). :func:`domain_sample` turns a pool
context and a labeled set into that :class:`~slicewise.data.designs.DomainSample` (uniform
pi_i = n / M, simple random sampling of L from T, when no probabilities are given), and
:func:`fit_direct_method` fits one of the direct estimators on it through the same function,
:func:`slicewise.domains.fit.fit_direct`, that :func:`slicewise.domains` uses, so
``sw.profile(..., method='greg', inclusion='pi')`` and ``sw.domains(..., method='greg')`` give
the same estimates and design variances (tests/domains/test_domains_engine.py).

Continuous and ordinal profiles have overlapping kernel neighbourhoods, not domains, and these
methods refuse them: a domain's pool size N_d, its PPI mean of predictions and GREG's pooled
domain-intercept regression have no kernel-weighted counterpart with the same variance
formulas. The one that has is the Hajek mean, whose kernel-weighted version is the
design-weighted local mean: ``method='naive'`` with ``inclusion=`` (its variance is
:mod:`slicewise.inference.variance`'s design variance), which the error message names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray
from ..data.designs import DesignFamily, DomainSample
from ..estimators.survey.base import DirectFit
from ..estimators.survey.direct import DIRECT, DomainProblem, fit_direct
from ..estimators.survey.ht import hajek
from .base import LabeledSet, MethodFit, PoolContext, labeled_sizes
from .options import MethodOptions

#: The design-based direct methods, in the order of ``sw.methods()``.
DESIGN_METHODS: tuple[str, ...] = DIRECT


@dataclass(frozen=True, eq=False)
class SamplingDesign:
    """How the labeled set was drawn from the pool, for the design variances.

    Attributes
    ----------
    family : {'stratified', 'poisson'}
        'stratified': stratified simple random sampling without replacement (one stratum, the
        whole pool, is SRS); 'poisson': independent draws with the given pi_i.
    strata : ndarray of int, shape (M,)
        Stratum code of every pool item (all zeros: one stratum).
    """

    family: DesignFamily
    strata: IntArray


def default_design(ctx: PoolContext, labeled: LabeledSet) -> SamplingDesign:
    """The design a profile assumes: Poisson sampling with the labeled set's known inclusion
    probabilities, or simple random sampling of L from T (one stratum) without them."""
    family: DesignFamily = "stratified" if labeled.pi is None else "poisson"
    return SamplingDesign(family=family, strata=np.zeros(ctx.n_pool, dtype=np.intp))


def domain_codes(ctx: PoolContext) -> tuple[IntArray, int]:
    """Domain code of every pool item (its category) and the number of domains (categories)."""
    levels = ctx.table.levels
    n_dom = int(levels.size) if levels is not None else int(ctx.locality.size)
    return ctx.table.z[:, 0].astype(np.intp), n_dom


def domain_sample(
    ctx: PoolContext, labeled: LabeledSet, design: SamplingDesign | None = None
) -> DomainSample:
    """The labeled set of a categorical profile as a domain sample (every category a domain).

    Inclusion probabilities are the labeled set's own when it carries them; otherwise
    pi_i = n_h / N_h within the design's strata (n / M under simple random sampling).
    """
    design = default_design(ctx, labeled) if design is None else design
    codes, n_dom = domain_codes(ctx)
    strata = design.strata
    n_strata = int(strata.max()) + 1 if strata.size else 1
    big_n = np.bincount(strata, minlength=n_strata).astype(np.float64)
    small_n = np.bincount(strata[labeled.index], minlength=n_strata).astype(np.float64)
    if labeled.pi is None:
        pi = (small_n / big_n)[strata[labeled.index]]
    else:
        pi = np.asarray(labeled.pi, dtype=np.float64)
    return DomainSample(
        domain=codes,
        n_domains=n_dom,
        index=np.asarray(labeled.index, dtype=np.intp),
        y=np.asarray(labeled.y, dtype=np.float64),
        pi=pi,
        family=design.family,
        strata=strata[labeled.index],
        stratum_pool=big_n,
        stratum_sample=small_n,
        pool_size=np.bincount(codes, minlength=n_dom).astype(np.float64),
    )


def prediction_column(ctx: PoolContext) -> int:
    """The signal PPI and PPI++ use as prediction: the primary judge signal, else the first."""
    return 0 if ctx.primary is None else ctx.primary


def domain_problem(ctx: PoolContext) -> DomainProblem:
    """The pool side of the direct estimators: raw signals as GREG auxiliaries, the prediction
    of PPI (:func:`prediction_column`)."""

    def compute() -> DomainProblem:
        signals = ctx.table.signals
        prediction = signals[:, prediction_column(ctx)] if signals.shape[1] else None
        return DomainProblem(auxiliaries=signals, prediction=prediction, covariates=None)

    return ctx.cached(("domain problem",), compute)


def check_categorical(ctx: PoolContext, method: str) -> None:
    """Raise when ``method`` (a design-based direct method) is asked for on an ordered profile."""
    kind = ctx.locality.kind
    if kind == "categorical":
        return
    raise ValueError(
        f"Method {method!r} needs a categorical profile: each level is a domain, whose pool size "
        f"and design-weighted labeled sums define the estimator; the profile is {kind}. Pass "
        "kind='categorical' if each value of Z is a domain, or use method='naive' with "
        "inclusion= for the design-weighted (Hajek) local mean on an ordered profile."
    )


def population_variance(sample: DomainSample) -> FloatArray:
    """Variance of the finite-pool domain mean around the superpopulation mean E[Y | Z = d].

    The Horvitz-Thompson estimate of sum_{U_d} Var(Y_i) / N_d^2 from the Hajek-weighted label
    variance, as the design-weighted local mean does (:mod:`slicewise.inference.variance`):

    .. math::

        \\frac{1}{N_d}\\,\\frac{\\sum_{s_d} w_i (y_i - \\bar y_{w,d})^2 / \\sum_{s_d} w_i}
        {1 - \\sum_{s_d} w_i^2 / (\\sum_{s_d} w_i)^2},\\qquad w_i = 1 / \\pi_i ;

    NaN for domains with fewer than 2 labels.
    """
    n_dom = sample.n_domains
    d = sample.labeled_domain
    w = sample.weight
    mass = np.bincount(d, weights=w, minlength=n_dom)
    square = np.bincount(d, weights=w * w, minlength=n_dom)
    ok = (sample.n_labeled >= 2) & (mass > 0)
    safe = np.where(ok, mass, 1.0)
    mean = np.bincount(d, weights=w * sample.y, minlength=n_dom) / safe
    spread = np.bincount(d, weights=w * (sample.y - mean[d]) ** 2, minlength=n_dom) / safe
    correction = 1.0 - square / safe**2
    size = np.where(sample.pool_size > 0, sample.pool_size, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = spread / np.where(correction > 0, correction, np.nan) / size
    return np.where(ok, out, np.nan)


def _jsonable(value: object) -> object:
    return value.tolist() if isinstance(value, np.ndarray) else value


def direct_method_fit(
    ctx: PoolContext, labeled: LabeledSet, sample: DomainSample, direct: DirectFit
) -> MethodFit:
    """A direct domain fit as a :class:`MethodFit` on the profile's grid.

    var_pool is the design variance (the estimand is the finite-pool domain mean);
    var_population adds :func:`population_variance`. r2 = 1 - V / V_Hajek compares the design
    variance with the labels-only (Hajek) one on the same sample (the share of the label variance
    the signals remove; it is negative where the estimator is less precise than the Hajek mean,
    as Horvitz-Thompson is when the domain's sample weights do not add up to N_d), and the gain
    1 / (1 - (1 - f_d) r2) uses the domain's labeled fraction f_d. Intervals are normal
    (``df`` None), as those of :func:`slicewise.domains`.
    """
    grid = ctx.locality.grid[:, 0].astype(np.intp)
    variance = direct.variance[grid]
    labels_only = hajek(sample).variance[grid]
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(np.isfinite(variance) & (labels_only > 0), 1.0 - variance / labels_only, 0.0)
    _, fraction = labeled_sizes(ctx, labeled)
    fraction = np.clip(np.nan_to_num(fraction), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = 1.0 / (1.0 - (1.0 - fraction) * r2)
    params: dict[str, object] = {
        "estimand": "domain mean",
        "design": sample.family,
        **{key: _jsonable(value) for key, value in direct.params.items()},
    }
    notes: tuple[str, ...] = ()
    if labeled.pi is None:
        notes = (
            f"No inclusion probabilities were given, so the labels are taken as a simple random "
            f"sample of the pool: pi_i = n / M = {labeled.n} / {ctx.n_pool} for every labeled "
            "item (inclusion= names a column of known probabilities).",
        )
    return MethodFit(
        estimate=direct.estimate[grid],
        var_pool=variance,
        var_population=variance + population_variance(sample)[grid],
        r2=r2,
        gain=gain,
        borrowed=np.zeros(grid.size, dtype=bool),
        params=params,
        notes=notes,
    )


def fit_direct_method(
    ctx: PoolContext, labeled: LabeledSet, options: MethodOptions, method: str
) -> MethodFit:
    """Fit the design-based direct estimator ``method`` on a categorical profile."""
    check_categorical(ctx, method)
    if method in ("ppi", "ppi++", "greg", "greg-or-hajek") and ctx.table.signals.shape[1] == 0:
        raise ValueError(
            f"Method {method!r} needs at least one cheap signal; pass signals=[...] (got none)."
        )
    sample = labeled.memo(("domain sample", ctx), lambda: domain_sample(ctx, labeled))
    direct = fit_direct(domain_problem(ctx), sample, method)
    return direct_method_fit(ctx, labeled, sample, direct)


def _fitter(method: str) -> Callable[[PoolContext, LabeledSet, MethodOptions], MethodFit]:
    def fit(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
        return fit_direct_method(ctx, labeled, options, method)

    fit.__name__ = f"fit_{method.replace('+', 'p').replace('-', '_')}"
    fit.__doc__ = f"The design-based direct method {method!r} (:func:`fit_direct_method`)."
    return fit


fit_ht = _fitter("ht")
fit_hajek = _fitter("hajek")
fit_ppi = _fitter("ppi")
fit_ppi_plus_plus = _fitter("ppi++")
fit_greg = _fitter("greg")
fit_greg_or_hajek = _fitter("greg-or-hajek")
