"""Public entry points for design-based disaggregated evaluation: :func:`domains` (estimate every
domain) and :func:`validate` (design-based cross-validation); :func:`slicewise.sample` (draw a
probability sample) is in :mod:`.sample`. Input is validated once, in :mod:`.input`;
the estimators assume clean arrays.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._typing import FloatArray, ObjectArray
from .._validation import (
    check_level,
    check_positive_int,
    check_rng,
)
from ..data.designs import (
    DomainSample,
)
from ..estimators.survey.base import labeled_effective_size
from ..exceptions import EmptyDomainWarning, SmallDomainWarning, SmoothingFallbackWarning
from ..methods.options import DEFAULTS
from .dbcv import design_cv
from .fit import (
    DIRECT,
    SMOOTHED,
    Direct,
    DomainFit,
    Method,
    fit_domains,
)
from .input import (
    SMALL_DOMAIN,
    Covariates,
    PreparedDomains,
    check_method,
    list_domains,
    prepare,
)
from .results import DomainResult, ValidationResult


def labels_mean(sample: DomainSample) -> tuple[FloatArray, FloatArray]:
    """Each domain's labels-only (Hajek) mean and Kish's labeled effective size.

    With design weights w_i = 1 / pi_i of the labeled units of domain d,
    p_d = sum w_i y_i / sum w_i and n_d* = (sum w_i)^2 / sum w_i^2 (the labeled count where the
    weights are equal, as under SRS within domains). NaN and 0 for domains without labels.
    """
    dom = sample.labeled_domain
    w = sample.weight
    n_dom = sample.n_domains
    mass = np.bincount(dom, weights=w, minlength=n_dom)
    total = np.bincount(dom, weights=w * sample.y, minlength=n_dom)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(mass > 0, total / np.where(mass > 0, mass, 1.0), np.nan)
    return mean, labeled_effective_size(sample)


def domain_result(
    fit: DomainFit,
    sample: DomainSample,
    *,
    level: float,
    labels: ObjectArray | None = None,
    domain_names: tuple[str, ...] = ("domain",),
    notes: Sequence[str] = (),
) -> DomainResult:
    """The frozen :class:`DomainResult` of one fit on ``sample`` (labels default to the codes).

    The oracle harness of ``research/`` builds its intervals through this function and
    :meth:`DomainResult.ci`, so it measures the intervals users see.
    """
    weight = fit.weight
    borrowed = np.zeros(sample.n_domains, dtype=bool) if fit.borrowed is None else fit.borrowed
    mean, n_eff = labels_mean(sample)
    return DomainResult(
        domain=np.arange(sample.n_domains).astype(object) if labels is None else labels,
        domain_names=domain_names,
        estimate=fit.estimate,
        se=fit.se,
        method=fit.method,
        level=level,
        n_labeled=sample.n_labeled,
        n_pool=sample.pool_size,
        shrinkage=weight,
        direct_estimate=fit.direct.estimate,
        direct_se=np.sqrt(fit.direct.variance),
        borrowed=borrowed,
        params={**dict(fit.params), "design": sample.family},
        notes=tuple(notes),
        bias_bound=fit.bias_bound,
        naive_estimate=mean,
        n_labeled_eff=n_eff,
    )


def wrap_fit(
    fit: DomainFit, prepared: PreparedDomains, *, level: float, notes: Sequence[str] = ()
) -> DomainResult:
    """The frozen :class:`DomainResult` of one fit on a validated problem."""
    return domain_result(
        fit,
        prepared.sample,
        level=level,
        labels=prepared.labels,
        domain_names=prepared.domain_names,
        notes=notes,
    )


def _fit_with_warnings(
    prepared: PreparedDomains, method: Method, func: str
) -> tuple[DomainFit, list[str]]:
    notes: list[str] = []
    n_d = prepared.sample.n_labeled
    empty = n_d == 0
    if empty.any():
        message = (
            f"{int(empty.sum())} domain(s) have no labeled unit, so their estimate is NaN: "
            f"{list_domains(prepared, empty)}."
        )
        warnings.warn(message, EmptyDomainWarning, stacklevel=3)
        notes.append(message)
    run = method
    if method in SMOOTHED:
        observed = int((n_d > 0).sum())
        needed = (
            prepared.problem.covariates.shape[1] if prepared.problem.covariates is not None else 1
        ) + 3
        if observed < needed:
            run = prepared.problem.direct
            message = (
                f"Method {method!r} needs at least {needed} domains with labels to estimate the "
                f"smoothing model; only {observed} have labels, so the direct {run!r} estimates "
                "are reported instead."
            )
            warnings.warn(message, SmoothingFallbackWarning, stacklevel=3)
            notes.append(message)
    fit = fit_domains(prepared.problem, prepared.sample, run)
    if run in DIRECT:
        small = (n_d > 0) & (n_d < SMALL_DOMAIN)
        if small.any():
            no_var = small & ~np.isfinite(fit.se)
            message = (
                f"{int(small.sum())} domain(s) have fewer than {SMALL_DOMAIN} labels, too few "
                "for a domain's own estimate to have a trustworthy interval"
                + (f" ({int(no_var.sum())} have no standard error at all)" if no_var.any() else "")
                + f": {list_domains(prepared, small)}. method='pp-s' borrows strength from the "
                "other domains for them."
            )
            warnings.warn(message, SmallDomainWarning, stacklevel=3)
            notes.append(message)
        degenerate = (n_d >= 2) & (fit.se == 0.0)
        if degenerate.any():
            message = (
                f"{int(degenerate.sum())} domain(s) have a zero design variance (all their "
                "labels, or residuals, agree), so their normal interval has zero width and "
                f"cannot be trusted: {list_domains(prepared, degenerate)}. method='pp-s' pools "
                "the sampling variances across domains (variance_df)."
            )
            warnings.warn(message, SmallDomainWarning, stacklevel=3)
            notes.append(message)
    floored = fit.direct.floored
    if floored is not None and floored.any():
        notes.append(
            f"In {int(floored.sum())} domain(s) the predictions fit every labeled unit (nearly) "
            f"exactly: {list_domains(prepared, floored)}. Labels cannot show a misprediction "
            "among the unlabeled units there, so the direct variance is floored at the Hajek "
            "(labels-only) one over (effective labels + 1)."
        )
    edge = float(fit.params.get("edge_mass", 0.0))
    if edge > 1e-3:
        message = (
            "The smoothing model's spread between domains may be larger than the range it "
            f"searches (edge density {edge:.2g}), so its intervals may be too narrow; compare "
            "with the direct estimates (method='greg' or 'ht')."
        )
        warnings.warn(message, SmoothingFallbackWarning, stacklevel=3)
        notes.append(message)
    return fit, notes


def domains(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    domain: str | Sequence[str],
    label: str,
    signals: str | Sequence[str] | None = None,
    inclusion: str | None = "pi",
    strata: str | None = None,
    method: Method = "pp-s",
    prediction: str | None = None,
    taxonomy: str | Sequence[str] | None = None,
    covariates: Covariates | Sequence[str] = "auto",
    direct: Direct = "greg-or-hajek",
    variance_df: float = 4.0,
    prior_scale: float = 0.25,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
) -> DomainResult:
    """Estimate the mean of every domain from a probability sample of labels.

    Parameters
    ----------
    table : DataFrame or path
        One row per pool unit; rows with a missing label are unlabeled.
    domain : str or list of str
        Domain column(s); several columns make one domain per combination (e.g. model x
        benchmark).
    label : str
        Gold label column, values in [0, 1], missing where unlabeled.
    signals : str or list of str, optional
        Auxiliary columns observed on every unit (GREG auxiliaries, PPI prediction, domain
        covariates).
    inclusion : str or None, default 'pi'
        Column of first-order inclusion probabilities in (0, 1], read on labeled rows. ``None``
        declares simple random sampling within ``strata`` (or over the whole pool).
    strata : str, optional
        Stratum column of a stratified SRS design (pi_i must equal n_h / N_h); the variance
        formulas are then those of stratified SRS. Without it, Poisson-sampling formulas are used.
    method : {'ht', 'hajek', 'ppi', 'ppi++', 'greg', 'greg-or-hajek', 'fh', 'pp-s', 'pp-ts'}, default 'pp-s'
        Direct estimators, or a smoothing model of :mod:`slicewise.smoothing` (``'fh'``: REML/EBLUP;
        ``'pp-s'``: Bayesian, exact integration; ``'pp-ts'``: ``'pp-s'`` with taxonomy effects),
        the same models as ``sw.profile(smooth='fh' | 'pp-s')``.
    prediction : str, optional
        The signal PPI and PPI++ use as prediction (default: the first signal).
    taxonomy : str or list of str, optional
        Columns constant within each domain whose levels get additive random effects (PP-TS;
        nested or crossed).
    covariates : {'auto', 'signals', 'prediction', 'none'} or list of str, default 'auto'
        Domain-level covariates of the smoothing model: the pool means of every signal, of the
        GREG prediction lambda' x, none, or the pool means of the named columns. 'auto' uses the
        signals when there are at least 10 domains per covariate, the prediction otherwise.
    direct : {'greg-or-hajek', 'greg', 'ht'}, default 'greg-or-hajek'
        Direct estimator fed to the smoothing methods. ``'greg-or-hajek'``: in domains with at
        least 20 labels, GREG's pooled-slope correction scaled per labeled unit by the domain's
        leave-one-out slope, shrunk and kept in [0, 1] (1 is GREG, 0 the Hajek mean;
        :func:`slicewise.estimators.survey.greg.greg_or_hajek`: one pooled slope made some domains
        worse than their labels-only mean); ``'greg'``: the pooled-slope GREG everywhere (the
        PP-S paper's); ``'ht'``: no signals.
    variance_df : float, default 4
        Prior degrees of freedom that pool the sampling variances across domains before
        smoothing (0 uses each domain's own design variance).
    prior_scale : float, default 0.25
        Half-Cauchy scale of every random-effect standard deviation (Bayesian methods).
    objective : {'slice', 'ensemble'}, default 'slice'
        What the smoothed methods promise (:mod:`slicewise.smoothing.objective`). ``'slice'``:
        each domain's interval covers that domain; a domain with at least 10 labels moves
        toward the model by at most 0.3 of its standard error, and every moved domain's
        interval contains its direct interval. ``'ensemble'``: the papers' estimators (every
        domain shrunk, with the model's interval): the least total error, with intervals
        that cover on average over domains; ``res.ci(robust=True)`` gives the robust
        empirical-Bayes interval of Armstrong, Kolesar and Plagborg-Moller (2022).
    level : float, default 0.95

    Returns
    -------
    DomainResult

    Notes
    -----
    Direct estimators and their design variances are documented in
    :mod:`slicewise.estimators.survey`; the smoothing model, its REML/EBLUP fit and its Bayesian
    fit in :mod:`slicewise.smoothing`. The estimand of every domain is its
    finite-pool mean. The table becomes the categorical profile problem of
    :func:`slicewise.profile` (every domain a level) and its sample is built by
    :func:`slicewise.methods.design.domain_sample`, so without ``strata``,
    ``sw.profile(table, z=domain, kind='categorical', method=m, inclusion=...)`` gives the same
    estimates, standard errors and intervals for the direct methods ``m``.

    References
    ----------
    Kawano, S., Li, Z. R. and Parker, P. A. (2026). Prediction-powered smoothing and validation
    for disaggregated AI evaluation.

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> bench = np.repeat(["a", "b", "c", "d", "e", "f"], 400)
    >>> hist = (rng.random(2400) < 0.6).astype(float)
    >>> y = np.where(rng.random(2400) < 0.8, hist, 1 - hist)
    >>> frame = pd.DataFrame({"bench": bench, "hist": hist, "correct": y})
    >>> draw = sw.sample(frame, design="stratified", strata="bench", fraction=0.1, rng=1)
    >>> labeled = draw.apply(frame, label="correct")
    >>> res = sw.domains(labeled, domain="bench", signals=["hist"], label="correct",
    ...                  strata="stratum", method="greg")
    >>> res.to_frame()[["bench", "n_labeled"]].shape
    (6, 2)
    """
    func = "domains"
    level = check_level(level, func=func)
    prepared = prepare(
        table,
        domain=domain,
        label=label,
        signals=signals,
        inclusion=inclusion,
        strata=strata,
        prediction=prediction,
        taxonomy=taxonomy,
        covariates=covariates,
        direct=direct,
        variance_df=variance_df,
        prior_scale=prior_scale,
        func=func,
        objective=objective,
    )
    checked = check_method(method, prepared, func)
    fit, notes = _fit_with_warnings(prepared, checked, func)
    return wrap_fit(fit, prepared, level=level, notes=notes)


def default_candidates(prepared: PreparedDomains) -> tuple[str, ...]:
    """HT, PPI, GREG, GREG-or-Hajek, FH, PP-S (and PP-TS with a taxonomy) -- those the data
    allow."""
    out = ["ht"]
    if prepared.signal_names:
        out += ["ppi", "greg", "greg-or-hajek"]
    out += ["fh", "pp-s"]
    if prepared.problem.taxonomy:
        out.append("pp-ts")
    return tuple(out)


def validate(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    domain: str | Sequence[str],
    label: str,
    signals: str | Sequence[str] | None = None,
    inclusion: str | None = "pi",
    strata: str | None = None,
    candidates: Sequence[str] | None = None,
    folds: int = 5,
    prediction: str | None = None,
    taxonomy: str | Sequence[str] | None = None,
    covariates: Covariates | Sequence[str] = "auto",
    direct: Direct = "greg-or-hajek",
    variance_df: float = 4.0,
    prior_scale: float = 0.25,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
) -> ValidationResult:
    """Choose a domain estimator and report its error by design-based cross-validation.

    Parameters
    ----------
    table, domain, label, signals, inclusion, strata, prediction, taxonomy, covariates, direct,
    variance_df, prior_scale, objective, level
        As in :func:`domains`.
    candidates : list of str, optional
        Methods to compare (default: HT, PPI, GREG, GREG-or-Hajek, FH, PP-S and, with a
        taxonomy, PP-TS).
    folds : int, default 5
        K, the number of folds (>= 2).
    rng : int or numpy Generator, optional
        Randomness of the fold assignment and the sample splits. None uses a fixed seed, as
        :func:`slicewise.profile` does, so the same call always returns the same choice.

    Returns
    -------
    ValidationResult
        The selected estimator's domain estimates, its reported RMSE, and every candidate's
        DB-CV, naive-CV and sample-splitting scores.

    Notes
    -----
    The DB-CV score and its corrections are documented in :func:`slicewise.domains.dbcv.design_cv`.
    """
    func = "validate"
    level = check_level(level, func=func)
    k = check_positive_int(folds, name="folds", func=func, minimum=2)
    generator = check_rng(rng, func=func, reproducible=True)
    prepared = prepare(
        table,
        domain=domain,
        label=label,
        signals=signals,
        inclusion=inclusion,
        strata=strata,
        prediction=prediction,
        taxonomy=taxonomy,
        covariates=covariates,
        direct=direct,
        variance_df=variance_df,
        prior_scale=prior_scale,
        func=func,
        objective=objective,
    )
    names = default_candidates(prepared) if candidates is None else tuple(candidates)
    if not names:
        raise ValueError(f"The 'candidates' parameter of {func} must list at least one method.")
    checked = tuple(check_method(c, prepared, func) for c in names)
    n_d = prepared.sample.n_labeled
    notes: list[str] = []
    thin = (n_d > 0) & (n_d < k)
    if thin.any():
        message = (
            f"{int(thin.sum())} domain(s) have fewer labels than cross-validation folds ({k}), "
            "so their part of the error check rests on fewer folds: "
            f"{list_domains(prepared, thin)}."
        )
        warnings.warn(message, SmallDomainWarning, stacklevel=2)
        notes.append(message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallDomainWarning)
        outcome = design_cv(prepared.problem, prepared.sample, checked, folds=k, rng=generator)
    best = int(np.nanargmin(outcome.dbcv))
    selected = checked[best]
    reported = float(outcome.dbcv[best])
    if not reported > 0:
        # DB-CV is unbiased but noisy: when the held-out noise it removes exceeds the error
        # itself, the estimate is not positive. Report the estimator's own variance-based error
        # instead of a meaningless zero, and say so.
        message = (
            f"The cross-validated error of {selected} was not positive ({reported:.3g}): "
            "with domains this small the noise of the check exceeds the error itself. The "
            f"reported RMSE is {selected}'s own standard-error-based value instead."
        )
        warnings.warn(message, SmallDomainWarning, stacklevel=2)
        notes.append(message)
        reported = float(outcome.design[best])
    result = wrap_fit(outcome.fits[best], prepared, level=level, notes=notes)
    return ValidationResult(
        candidates=checked,
        dbcv_mse=outcome.dbcv,
        naive_cv_mse=outcome.naive,
        split50_mse=outcome.split50,
        split80_mse=outcome.split80,
        design_mse=outcome.design,
        domain_mse=outcome.domain_mse,
        selected=selected,
        reported_rmse=float(np.sqrt(reported)),
        result=result,
        folds=k,
        notes=tuple(notes),
    )
