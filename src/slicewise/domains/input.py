"""Input of the design-based domain entry points: the table read and checked once (domain and
label columns, signals, inclusion probabilities, strata, taxonomy, covariates), the categorical
profile problem :func:`slicewise.domains` and :func:`slicewise.validate` fit on, and the checks of a
method against the prepared data.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray, ObjectArray
from .._validation import (
    check_choice,
    check_nonnegative,
    column_list,
    format_examples,
    signal_index,
)
from ..data.designs import (
    DomainSample,
)
from ..data.files import as_frame
from ..data.inclusion import warn_pool_size
from ..data.table import ItemTable, _check_columns, _numeric
from ..estimators.survey.base import pool_means
from ..methods.base import LabeledSet
from ..methods.design import SamplingDesign, domain_sample
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.run import Problem, build_context
from .fit import (
    METHODS,
    SMOOTHED,
    Direct,
    DomainProblem,
    Method,
)

Covariates = Literal["auto", "signals", "prediction", "none"]
COVARIATE_MODES: tuple[Covariates, ...] = ("auto", "signals", "prediction", "none")
#: The direct estimators the smoothing methods can take (``direct=``).
DIRECT_CHOICES: tuple[Direct, ...] = ("greg-or-hajek", "greg", "ht")
#: Direct intervals on fewer labels than this are flagged (normal approximation, binary labels).
SMALL_DOMAIN = 10


def read_frame(table: pd.DataFrame | str | os.PathLike[str], func: str) -> pd.DataFrame:
    frame = as_frame(table, name="table", func=func)
    if len(frame) == 0:
        raise ValueError(f"The table passed to {func} has no rows.")
    return frame


def codes_of(frame: pd.DataFrame, columns: list[str], *, role: str) -> tuple[IntArray, ObjectArray]:
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


def signal_matrix(frame: pd.DataFrame, columns: list[str]) -> FloatArray:
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
    objective: str = DEFAULTS.objective,
) -> PreparedDomains:
    """Validate a domain table and its options once (shared by :func:`domains` and :func:`validate`)."""
    direct = check_choice(direct, DIRECT_CHOICES, name="direct", func=func)
    checked_objective = MethodOptions.from_arguments({"objective": objective}, func=func).objective
    variance_df = check_nonnegative(variance_df, name="variance_df", func=func)
    prior_scale = check_nonnegative(prior_scale, name="prior_scale", func=func, strict=True)
    frame = read_frame(table, func)
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
    codes, labels = codes_of(frame, dom_cols, role="domain")
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
    aux = signal_matrix(frame, sig_cols)
    index = np.flatnonzero(present)
    if strata is not None:
        _check_columns(frame, [strata], name="strata", func=func)
        st_codes, st_labels = codes_of(frame, [strata], role="strata")
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
        warn_pool_size(pi, len(frame), inclusion, stacklevel=4)
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
        position = signal_index(prediction, sig_cols, func=func, parameter="prediction")
        pred = aux[:, position]
    elif sig_cols:
        pred = aux[:, 0]
    tax_codes = []
    for col in tax_cols:
        level_codes, _ = codes_of(frame, [col], role="taxonomy")
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
        objective=checked_objective,
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
    return pool_means(codes, signal_matrix(frame, cols), n_dom)


def _label_text(value: object) -> str:
    if isinstance(value, np.ndarray):
        return "/".join(str(v) for v in value)
    return str(value)


def list_domains(prepared: PreparedDomains, mask: np.ndarray) -> str:
    names = [_label_text(prepared.labels[int(i)]) for i in np.flatnonzero(mask)]
    shown = ", ".join(names[:8])
    return shown + (f", ... ({len(names)} in all)" if len(names) > 8 else "")


def check_method(method: str, prepared: PreparedDomains, func: str) -> Method:
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
