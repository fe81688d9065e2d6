"""Public entry points for design-based disaggregated evaluation: :func:`sample` (draw a
probability sample), :func:`domains` (estimate every domain), :func:`validate` (design-based
cross-validation). Input is validated once here; the estimators assume clean arrays.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ._typing import FloatArray, IntArray, ObjectArray
from ._validation import (
    check_choice,
    check_level,
    check_nonnegative,
    check_positive_int,
    check_rng,
    column_list,
    format_examples,
)
from .data.designs import (
    ALLOCATIONS,
    SAMPLERS,
    Allocation,
    DesignSample,
    DomainSample,
    SamplerName,
    draw,
)
from .data.files import read_table
from .data.table import ItemTable, _check_columns, _numeric
from .estimators.survey.base import pool_means
from .exceptions import EmptyDomainWarning, SmallDomainWarning, SmoothingFallbackWarning
from .methods.base import LabeledSet
from .methods.design import SamplingDesign, domain_sample
from .methods.run import Problem, build_context
from .results_domain import DomainResult, ValidationResult
from .selection.dbcv import design_cv
from .smoothing.domains import (
    DIRECT,
    METHODS,
    SMOOTHED,
    Direct,
    DomainFit,
    DomainProblem,
    Method,
    fit_domains,
)

Covariates = Literal["auto", "signals", "prediction", "none"]
COVARIATE_MODES: tuple[Covariates, ...] = ("auto", "signals", "prediction", "none")
#: The direct estimators the smoothing methods can take (``direct=``).
DIRECT_CHOICES: tuple[Direct, ...] = ("greg-or-hajek", "greg", "ht")
#: Direct intervals on fewer labels than this are flagged (normal approximation, binary labels).
SMALL_DOMAIN = 10


def _frame(table: pd.DataFrame | str | os.PathLike[str], func: str) -> pd.DataFrame:
    frame = read_table(table) if isinstance(table, str | os.PathLike) else table
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"The 'table' parameter of {func} must be a pandas DataFrame or a path to a CSV, "
            f"Parquet or JSON Lines file. Got {type(table).__name__} instead."
        )
    if len(frame) == 0:
        raise ValueError(f"The table passed to {func} has no rows.")
    return frame


def _codes(frame: pd.DataFrame, columns: list[str], *, role: str) -> tuple[IntArray, ObjectArray]:
    """Integer codes of the combinations of ``columns`` and their labels (D,) or (D, r)."""
    for col in columns:
        missing = int(frame[col].isna().sum())
        if missing:
            raise ValueError(
                f"{role} column '{col}' has {missing} missing values; every row needs a {role}."
            )
    if len(columns) == 1:
        codes, uniques = pd.factorize(frame[columns[0]], sort=True)
        return codes.astype(np.intp), np.asarray(uniques, dtype=object)
    keys = frame[columns].astype(str).agg("\x1f".join, axis=1)
    codes, uniques = pd.factorize(keys, sort=True)
    first = np.unique(codes, return_index=True)[1]
    labels = frame[columns].to_numpy(dtype=object)[first]
    return codes.astype(np.intp), labels


def _signals(frame: pd.DataFrame, columns: list[str]) -> FloatArray:
    out = np.empty((len(frame), len(columns)))
    for j, col in enumerate(columns):
        values = _numeric(frame[col], role="Signal")
        bad = ~np.isfinite(values)
        if bad.any():
            raise ValueError(
                f"Signal column '{col}' has {int(bad.sum())} missing or non-finite values; cheap "
                "signals must be observed (finite) on every item."
            )
        out[:, j] = values
    return out


@dataclass(frozen=True, eq=False)
class PreparedDomains:
    """A validated domain problem: the pool side, the labeled sample and display labels.

    Attributes
    ----------
    problem : DomainProblem
        What the domain estimators read besides the sample (auxiliaries, prediction, domain
        covariates, taxonomy, smoothing settings).
    sample : DomainSample
        The labeled sample, built from ``engine`` and ``design`` by
        :func:`slicewise.methods.design.domain_sample`, the one bridge from a profile problem to
        the domain estimators that the design-based profile methods use too.
    labels : ndarray of object
    domain_names, signal_names : tuple of str
    engine : Problem
        The same data as a categorical profile problem (every domain a level, the labeled set
        with its inclusion probabilities; None under simple random sampling within strata).
    design : SamplingDesign
        The design family and the stratum of every pool unit.
    """

    problem: DomainProblem
    sample: DomainSample
    labels: ObjectArray
    domain_names: tuple[str, ...]
    signal_names: tuple[str, ...]
    engine: Problem
    design: SamplingDesign


def prepare(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    domain: str | Sequence[str],
    label: str,
    signals: str | Sequence[str] | None,
    inclusion: str | None,
    strata: str | None,
    prediction: str | None,
    taxonomy: str | Sequence[str] | None,
    covariates: Covariates | Sequence[str],
    direct: Direct,
    variance_df: float,
    prior_scale: float,
    func: str,
) -> PreparedDomains:
    """Validate a domain table and its options once (shared by :func:`domains` and :func:`validate`)."""
    direct = check_choice(direct, DIRECT_CHOICES, name="direct", func=func)
    variance_df = check_nonnegative(variance_df, name="variance_df", func=func)
    prior_scale = check_nonnegative(prior_scale, name="prior_scale", func=func, strict=True)
    frame = _frame(table, func)
    dom_cols = column_list(domain, name="domain", func=func)
    if not dom_cols:
        raise ValueError(f"The 'domain' parameter of {func} must name at least one column.")
    sig_cols = column_list(signals, name="signals", func=func)
    tax_cols = column_list(taxonomy, name="taxonomy", func=func)
    if not isinstance(label, str):
        raise TypeError(f"The 'label' parameter of {func} must be a column name. Got {label!r}.")
    for name, cols in (("domain", dom_cols), ("signals", sig_cols), ("taxonomy", tax_cols)):
        _check_columns(frame, cols, name=name, func=func)
    _check_columns(frame, [label], name="label", func=func)
    if label in sig_cols:
        raise ValueError(
            f"The label column '{label}' is also listed in `signals`; a gold label cannot be its "
            "own cheap signal."
        )
    codes, labels = _codes(frame, dom_cols, role="domain")
    n_dom = labels.shape[0]
    y = _numeric(frame[label], role="Label")
    present = ~np.isnan(y)
    outside = present & ~((y >= 0.0) & (y <= 1.0))
    if outside.any():
        raise ValueError(
            f"Label column '{label}' has {int(outside.sum())} values outside [0, 1] (e.g. "
            f"{format_examples(np.unique(y[outside]).tolist())}); gold labels must be binary or a score "
            "rescaled into [0, 1]."
        )
    if not present.any():
        raise ValueError(
            f"Label column '{label}' has no labeled rows (all {len(frame)} values are missing); "
            "at least one gold label is needed."
        )
    aux = _signals(frame, sig_cols)
    index = np.flatnonzero(present)
    if strata is not None:
        _check_columns(frame, [strata], name="strata", func=func)
        st_codes, st_labels = _codes(frame, [strata], role="strata")
    else:
        st_codes, st_labels = np.zeros(len(frame), dtype=np.intp), np.array(["all"], dtype=object)
    n_strata = st_labels.shape[0]
    big_n = np.bincount(st_codes, minlength=n_strata).astype(np.float64)
    small_n = np.bincount(st_codes[index], minlength=n_strata).astype(np.float64)
    pi: FloatArray | None = None  # simple random sampling within strata: n_h / N_h
    family: Literal["stratified", "poisson"] = "stratified"
    if inclusion is not None:
        _check_columns(frame, [inclusion], name="inclusion", func=func)
        raw = _numeric(frame[inclusion], role="Inclusion-probability")[index]
        missing = ~np.isfinite(raw)
        if missing.any():
            raise ValueError(
                f"Inclusion-probability column '{inclusion}' has {int(missing.sum())} missing or "
                "non-finite values on labeled rows; every labeled unit needs its inclusion "
                "probability."
            )
        bad = (raw <= 0.0) | (raw > 1.0)
        if bad.any():
            raise ValueError(
                f"Inclusion-probability column '{inclusion}' has {int(bad.sum())} values outside "
                f"(0, 1] on labeled rows (e.g. {format_examples(np.unique(raw[bad]).tolist())}); "
                "inclusion probabilities must lie in (0, 1]."
            )
        pi = raw
        family = "poisson"
        if strata is not None:
            family = "stratified"
            expected = (small_n / big_n)[st_codes[index]]
            off = np.abs(pi - expected) > 1e-6 * np.maximum(expected, 1e-12) + 1e-9
            if off.any():
                h = int(st_codes[index][np.flatnonzero(off)[0]])
                raise ValueError(
                    f"Inclusion-probability column '{inclusion}' disagrees with the stratified "
                    f"design given by `strata` column '{strata}': in stratum {st_labels[h]!r} "
                    f"n_h / N_h = {int(small_n[h])} / {int(big_n[h])} = "
                    f"{small_n[h] / big_n[h]:.6g}, but {int(off.sum())} labeled rows have other "
                    f"values (e.g. {float(pi[np.flatnonzero(off)[0]]):.6g}). Stratified SRS needs "
                    "pi_i = n_h / N_h; omit `strata` to use the Poisson variance formulas."
                )
    pred = None
    if prediction is not None:
        if prediction not in sig_cols:
            raise ValueError(
                f"The 'prediction' parameter of {func} must name one of the signals {sig_cols}. "
                f"Got {prediction!r} instead."
            )
        pred = aux[:, sig_cols.index(prediction)]
    elif sig_cols:
        pred = aux[:, 0]
    tax_codes = []
    for col in tax_cols:
        level_codes, _ = _codes(frame, [col], role="taxonomy")
        per_domain = pd.DataFrame({"d": codes, "t": level_codes}).groupby("d")["t"].nunique()
        mixed = per_domain[per_domain > 1]
        if len(mixed):
            examples = format_examples([_label_text(labels[int(i)]) for i in mixed.index])
            raise ValueError(
                f"Taxonomy column '{col}' takes several values within {len(mixed)} domain(s) "
                f"(e.g. {examples}); a taxonomy level must be constant within every domain."
            )
        first = np.zeros(n_dom, dtype=np.intp)
        first[codes[::-1]] = level_codes[::-1]
        tax_codes.append(first)
    cov = _covariates(frame, covariates, codes, n_dom, aux, sig_cols, func)
    engine = _engine_problem(codes, labels, dom_cols, aux, sig_cols, y, label, index, pi)
    design = SamplingDesign(family=family, strata=st_codes)
    sample = domain_sample(engine.ctx, engine.labeled, design)
    problem = DomainProblem(
        auxiliaries=aux,
        prediction=pred,
        covariates=cov,
        taxonomy=tuple(tax_codes),
        taxonomy_names=tuple(tax_cols),
        direct=direct,
        variance_df=variance_df,
        prior_scale=prior_scale,
    )
    return PreparedDomains(
        problem=problem,
        sample=sample,
        labels=labels,
        domain_names=tuple(dom_cols),
        signal_names=tuple(sig_cols),
        engine=engine,
        design=design,
    )


def _engine_problem(
    codes: IntArray,
    labels: ObjectArray,
    dom_cols: list[str],
    aux: FloatArray,
    sig_cols: list[str],
    y: FloatArray,
    label: str,
    index: IntArray,
    pi: FloatArray | None,
) -> Problem:
    """The validated domain table as the categorical profile problem of the profile pipeline:
    every domain a level (in the order of the domain codes), the raw signals, the labeled set
    with its inclusion probabilities."""
    levels = np.empty(labels.shape[0], dtype=object)
    levels[:] = [_label_text(value) for value in labels]
    items = ItemTable(
        z=codes.astype(np.float64).reshape(-1, 1),
        kind="categorical",
        z_names=(" x ".join(dom_cols),),
        levels=levels,
        signals=aux,
        signal_names=tuple(sig_cols),
        label=y,
        label_name=label,
    )
    labeled = LabeledSet(index=index.astype(np.intp), y=y[index], pi=pi)
    return Problem(build_context(items), labeled)


def _covariates(
    frame: pd.DataFrame,
    covariates: Covariates | Sequence[str],
    codes: IntArray,
    n_dom: int,
    aux: FloatArray,
    sig_cols: list[str],
    func: str,
) -> FloatArray | None:
    if isinstance(covariates, str):
        mode = check_choice(covariates, COVARIATE_MODES, name="covariates", func=func)
        if mode == "auto":
            mode = "signals" if n_dom >= 10 * (len(sig_cols) + 1) else "prediction"
        if mode == "none" or not sig_cols:
            return np.zeros((n_dom, 0))
        if mode == "signals":
            return pool_means(codes, aux, n_dom)
        return None
    cols = column_list(covariates, name="covariates", func=func)
    _check_columns(frame, cols, name="covariates", func=func)
    return pool_means(codes, _signals(frame, cols), n_dom)


def _label_text(value: object) -> str:
    if isinstance(value, np.ndarray):
        return "/".join(str(v) for v in value)
    return str(value)


def _list_domains(prepared: PreparedDomains, mask: np.ndarray) -> str:
    names = [_label_text(prepared.labels[int(i)]) for i in np.flatnonzero(mask)]
    shown = ", ".join(names[:8])
    return shown + (f", ... ({len(names)} in all)" if len(names) > 8 else "")


def _check_method(method: str, prepared: PreparedDomains, func: str) -> Method:
    checked = check_choice(method, METHODS, name="method", func=func)
    if checked in ("ppi", "ppi++", "greg", "greg-or-hajek") and not prepared.signal_names:
        raise ValueError(
            f"Method {checked!r} needs at least one cheap signal; pass signals=[...] (got none)."
        )
    if checked == "pp-ts" and not prepared.problem.taxonomy:
        raise ValueError(
            "Method 'pp-ts' needs at least one taxonomy level; pass taxonomy=[...] naming "
            "columns that are constant within each domain (e.g. the benchmark of a task type)."
        )
    if checked in SMOOTHED and prepared.problem.direct != "ht" and not prepared.signal_names:
        raise ValueError(
            f"Method {checked!r} smooths GREG estimates by default, which need signals; pass "
            "signals=[...] or direct='ht'."
        )
    return checked


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
    square = np.bincount(dom, weights=w * w, minlength=n_dom)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(mass > 0, total / np.where(mass > 0, mass, 1.0), np.nan)
        n_eff = np.where(square > 0, mass**2 / np.where(square > 0, square, 1.0), 0.0)
    return mean, n_eff


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
            f"{_list_domains(prepared, empty)}."
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
                + f": {_list_domains(prepared, small)}. method='pp-s' borrows strength from the "
                "other domains for them."
            )
            warnings.warn(message, SmallDomainWarning, stacklevel=3)
            notes.append(message)
        degenerate = (n_d >= 2) & (fit.se == 0.0)
        if degenerate.any():
            message = (
                f"{int(degenerate.sum())} domain(s) have a zero design variance (all their "
                "labels, or residuals, agree), so their normal interval has zero width and "
                f"cannot be trusted: {_list_domains(prepared, degenerate)}. method='pp-s' pools "
                "the sampling variances across domains (variance_df)."
            )
            warnings.warn(message, SmallDomainWarning, stacklevel=3)
            notes.append(message)
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
    )
    checked = _check_method(method, prepared, func)
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
    level: float = 0.95,
    rng: int | np.random.Generator | None = None,
) -> ValidationResult:
    """Choose a domain estimator and report its error by design-based cross-validation.

    Parameters
    ----------
    table, domain, label, signals, inclusion, strata, prediction, taxonomy, covariates, direct,
    variance_df, prior_scale, level
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
    The DB-CV score and its corrections are documented in :func:`slicewise.selection.dbcv.design_cv`.
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
    )
    names = default_candidates(prepared) if candidates is None else tuple(candidates)
    if not names:
        raise ValueError(f"The 'candidates' parameter of {func} must list at least one method.")
    checked = tuple(_check_method(c, prepared, func) for c in names)
    n_d = prepared.sample.n_labeled
    notes: list[str] = []
    thin = (n_d > 0) & (n_d < k)
    if thin.any():
        message = (
            f"{int(thin.sum())} domain(s) have fewer labels than cross-validation folds ({k}), "
            "so their part of the error check rests on fewer folds: "
            f"{_list_domains(prepared, thin)}."
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


def sample(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    design: SamplerName = "stratified",
    strata: str | None = None,
    budget: int | None = None,
    fraction: float | None = None,
    allocation: Allocation = "proportional",
    neyman: str | None = None,
    shares: Mapping[Any, float] | None = None,
    size: str | None = None,
    minimum: int = 2,
    rng: int | np.random.Generator | None = None,
) -> DesignSample:
    """Draw a probability sample of pool units to label.

    Parameters
    ----------
    table : DataFrame or path
    design : {'srs', 'stratified', 'poisson'}, default 'stratified'
    strata : str, optional
        Stratum column (required for ``design='stratified'``), usually the domain.
    budget : int, optional
        Sample size (expected size for Poisson). Exactly one of ``budget`` and ``fraction``.
    fraction : float, optional
        Budget as a fraction of the pool, in (0, 1].
    allocation : {'proportional', 'equal', 'neyman', 'user'}, default 'proportional'
        How a stratified budget is split (see :func:`slicewise.data.designs.allocate`).
    neyman : str, optional
        Column whose within-stratum standard deviation stands in for S_h (Neyman allocation),
        e.g. a cheap signal.
    shares : mapping, optional
        Stratum label -> share (user allocation).
    size : str, optional
        Positive size measure for Poisson sampling (pi_i proportional to it, capped at 1).
    minimum : int, default 2
        Smallest stratum sample (keeps a variance estimate).
    rng : int or numpy Generator, optional

    Returns
    -------
    DesignSample
        ``apply(table, label=...)`` masks the labels outside the sample and adds the inclusion
        probabilities (column ``pi``) and the strata (column ``stratum``).

    Notes
    -----
    Stratified SRS takes n_h units without replacement in stratum h, so pi_i = n_h / N_h; Poisson
    sampling selects unit i independently with pi_i = min(1, c x size_i), sum_i pi_i = budget.
    Allocation rules: :func:`slicewise.data.designs.allocate`.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Chapter 5.
    Sarndal, Swensson and Wretman (1992). *Model Assisted Survey Sampling*, Section 3.6.
    """
    func = "sample"
    frame = _frame(table, func)
    design = check_choice(design, SAMPLERS, name="design", func=func)
    allocation = check_choice(allocation, ALLOCATIONS, name="allocation", func=func)
    generator = check_rng(rng, func=func)
    m = len(frame)
    if (budget is None) == (fraction is None):
        raise ValueError(
            f"Exactly one of the 'budget' and 'fraction' parameters of {func} must be given. "
            f"Got budget={budget!r}, fraction={fraction!r}."
        )
    if fraction is not None:
        frac = check_nonnegative(fraction, name="fraction", func=func, strict=True)
        if frac > 1.0:
            raise ValueError(
                f"The 'fraction' parameter of {func} must be a float in (0, 1]. Got {fraction!r} "
                "instead."
            )
        n = max(round(frac * m), 1)
    else:
        n = check_positive_int(budget, name="budget", func=func)
        if n > m:
            raise ValueError(
                f"The 'budget' parameter of {func} must be at most the pool size {m}. Got {n} "
                "instead."
            )
    minimum = check_positive_int(minimum, name="minimum", func=func)
    codes = np.zeros(m, dtype=np.intp)
    labels = np.array(["all"], dtype=object)
    if design == "stratified":
        if strata is None:
            raise ValueError(
                f"design='stratified' needs the 'strata' parameter of {func} (a column name)."
            )
        _check_columns(frame, [strata], name="strata", func=func)
        codes, labels = _codes(frame, [strata], role="strata")
        pool = np.bincount(codes, minlength=labels.size)
        floor = int(np.minimum(minimum, pool).sum())
        if n < floor:
            raise ValueError(
                f"The budget {n} of {func} is below the {floor} units needed to give each of the "
                f"{labels.size} strata min(minimum={minimum}, N_h) units."
            )
    sd = None
    user = None
    if design == "stratified" and allocation == "neyman":
        if neyman is None:
            raise ValueError(
                f"allocation='neyman' needs the 'neyman' parameter of {func}: a column whose "
                "within-stratum standard deviation stands in for S_h."
            )
        values = _signals(frame, column_list(neyman, name="neyman", func=func))[:, 0]
        sd = np.asarray(pd.Series(values).groupby(codes).std(ddof=1).fillna(0.0), dtype=np.float64)
    if design == "stratified" and allocation == "user":
        if shares is None:
            raise ValueError(f"allocation='user' needs the 'shares' parameter of {func}.")
        unknown = [k for k in shares if k not in set(labels.tolist())]
        if unknown:
            raise ValueError(
                f"The 'shares' parameter of {func} names strata {format_examples(unknown)} that are not "
                f"in column '{strata}'."
            )
        user = np.array([float(shares.get(lab, 0.0)) for lab in labels])
        if (user < 0).any() or user.sum() <= 0:
            raise ValueError(f"The 'shares' parameter of {func} must be >= 0 with a positive sum.")
    measure = None
    if design == "poisson" and size is not None:
        measure = _signals(frame, column_list(size, name="size", func=func))[:, 0]
        if (measure <= 0).any():
            raise ValueError(
                f"Size column '{size}' has {int((measure <= 0).sum())} values <= 0; Poisson "
                "sampling needs a positive size measure on every unit."
            )
    return draw(
        codes,
        labels,
        design=design,
        budget=n,
        allocation=allocation,
        sd=sd,
        user=user,
        size=measure,
        minimum=minimum,
        rng=generator,
    )
