"""Draw a probability sample of pool units to label (:func:`slicewise.sample`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import (
    check_choice,
    check_nonnegative,
    check_positive_int,
    check_rng,
    column_list,
    format_examples,
)
from ..data.designs import (
    ALLOCATIONS,
    SAMPLERS,
    Allocation,
    DesignSample,
    SamplerName,
    draw,
)
from ..data.table import _check_columns
from .input import codes_of, read_frame, signal_matrix


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
    frame = read_frame(table, func)
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
        codes, labels = codes_of(frame, [strata], role="strata")
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
        values = signal_matrix(frame, column_list(neyman, name="neyman", func=func))[:, 0]
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
        measure = signal_matrix(frame, column_list(size, name="size", func=func))[:, 0]
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
