"""Probability sampling designs: samplers, allocations and the labeled sample they define.

Every draw records each unit's first-order inclusion probability pi_i, so an estimator never needs
to know which sampler produced the labels; the variance formulas only need the design *family*:

* ``'stratified'``: simple random sampling without replacement within strata (SRS is one stratum);
  pi_i = n_h / N_h in stratum h;
* ``'poisson'``: independent Bernoulli(pi_i) selections with unequal probabilities.

A user's own design enters through a column of inclusion probabilities (and, for stratified
designs, a strata column); :func:`make_domain_sample` checks that the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from .._typing import BoolArray, FloatArray, IntArray, ObjectArray

DesignFamily = Literal["stratified", "poisson"]
Allocation = Literal["proportional", "equal", "neyman", "user"]
SamplerName = Literal["srs", "stratified", "poisson"]

ALLOCATIONS: tuple[Allocation, ...] = ("proportional", "equal", "neyman", "user")
SAMPLERS: tuple[SamplerName, ...] = ("srs", "stratified", "poisson")


def allocate(
    pool_sizes: IntArray,
    total: int,
    *,
    allocation: Allocation = "proportional",
    sd: FloatArray | None = None,
    user: FloatArray | None = None,
    minimum: int = 2,
) -> IntArray:
    """Split a total budget over strata.

    Parameters
    ----------
    pool_sizes : ndarray of int, shape (H,)
        Stratum sizes N_h.
    total : int
        Budget n = sum_h n_h, between sum_h min(minimum, N_h) and sum_h N_h.
    allocation : {'proportional', 'equal', 'neyman', 'user'}
        Shares proportional to N_h, equal, to N_h S_h (Neyman; ``sd`` gives S_h), or to ``user``.
    sd, user : ndarray of shape (H,), optional
        Stratum standard deviations (Neyman) or user shares.
    minimum : int
        Every stratum gets at least min(minimum, N_h) units (2 keeps a variance estimate).

    Returns
    -------
    ndarray of int, shape (H,)

    Notes
    -----
    Shares a_h are turned into sizes by iterative capping: strata whose share
    n_rest a_h / sum a exceeds N_h are fixed at N_h, those below the floor at the floor, and the
    rest is shared again; the final sizes are rounded by the largest-remainder rule, so they add
    up to ``total`` exactly and never exceed N_h.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Sections 5.5 (proportional) and 5.9
    (optimum/Neyman allocation).
    """
    sizes = np.asarray(pool_sizes, dtype=np.int64)
    if allocation == "proportional":
        share = sizes.astype(np.float64)
    elif allocation == "equal":
        share = np.ones(sizes.size)
    elif allocation == "neyman":
        if sd is None:
            raise ValueError("Neyman allocation needs the stratum standard deviations `sd`.")
        share = sizes.astype(np.float64) * np.asarray(sd, dtype=np.float64)
    else:
        if user is None:
            raise ValueError("User allocation needs the stratum shares `user`.")
        share = np.asarray(user, dtype=np.float64)
    floor = np.minimum(minimum, sizes).astype(np.float64)
    raw = np.zeros(sizes.size)
    fixed = np.zeros(sizes.size, dtype=bool)
    for _ in range(2 * sizes.size + 1):
        rest = total - raw[fixed].sum()
        free = ~fixed
        weight = share[free].sum()
        raw[free] = rest * share[free] / weight if weight > 0 else rest / max(free.sum(), 1)
        over = free & (raw > sizes)
        under = free & (raw < floor)
        if over.any():
            raw[over] = sizes[over]
            fixed |= over
            continue
        if under.any():
            raw[under] = floor[under]
            fixed |= under
            continue
        break
    base = np.floor(raw + 1e-9).astype(np.int64)
    remainder = int(total - base.sum())
    if remainder > 0:
        order = np.argsort(-(raw - base), kind="stable")
        room = base < sizes
        chosen = [i for i in order if room[i]][:remainder]
        base[chosen] += 1
    out: IntArray = base.astype(np.intp)
    return out


def poisson_probabilities(size: FloatArray, expected: float) -> FloatArray:
    """Inclusion probabilities proportional to a size measure, capped at 1, summing to ``expected``.

    Notes
    -----
    pi_i = min(1, c x_i) with c chosen so that sum_i pi_i = expected (units that hit the cap are
    taken with certainty and the constant is recomputed on the rest).
    """
    x = np.asarray(size, dtype=np.float64)
    pi = np.zeros_like(x)
    certain = np.zeros(x.size, dtype=bool)
    for _ in range(x.size + 1):
        rest = expected - certain.sum()
        scale = x[~certain].sum()
        pi[~certain] = rest * x[~certain] / scale if scale > 0 else 0.0
        pi[certain] = 1.0
        newly = ~certain & (pi >= 1.0)
        if not newly.any():
            break
        certain |= newly
    return np.minimum(pi, 1.0)


@dataclass(frozen=True, eq=False)
class DesignSample:
    """One probability sample drawn from a pool (the output of :func:`slicewise.sample`).

    Attributes
    ----------
    design : {'srs', 'stratified', 'poisson'}
    selected : ndarray of bool, shape (M,)
        Which pool units were drawn.
    inclusion : ndarray of shape (M,)
        First-order inclusion probability pi_i of every pool unit.
    strata : ndarray of int, shape (M,)
        Stratum code of every unit (all zero for SRS and Poisson).
    stratum_labels : ndarray of object, shape (H,)
    pool_sizes, sample_sizes : ndarray of int, shape (H,)
        N_h and n_h (for Poisson, n_h is the realised count).
    allocation : str
    """

    design: SamplerName
    selected: BoolArray
    inclusion: FloatArray
    strata: IntArray
    stratum_labels: ObjectArray
    pool_sizes: IntArray
    sample_sizes: IntArray
    allocation: str = "proportional"

    def __post_init__(self) -> None:
        for array in (
            self.selected,
            self.inclusion,
            self.strata,
            self.stratum_labels,
            self.pool_sizes,
            self.sample_sizes,
        ):
            array.setflags(write=False)

    @property
    def n_sampled(self) -> int:
        """n, the number of drawn units."""
        return int(self.selected.sum())

    @property
    def index(self) -> IntArray:
        """Pool positions of the drawn units."""
        return np.flatnonzero(self.selected)

    def to_frame(self) -> pd.DataFrame:
        """Tidy per-stratum table: stratum, N_h, n_h, sampling fraction."""
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.where(
                self.pool_sizes > 0, self.sample_sizes / np.maximum(self.pool_sizes, 1), np.nan
            )
        return pd.DataFrame(
            {
                "stratum": self.stratum_labels,
                "n_pool": self.pool_sizes,
                "n_sampled": self.sample_sizes,
                "fraction": fraction,
                "design": self.design,
                "allocation": self.allocation,
            }
        )

    def apply(
        self,
        table: pd.DataFrame,
        *,
        label: str | Sequence[str],
        inclusion: str = "pi",
        strata: str | None = "stratum",
    ) -> pd.DataFrame:
        """A copy of ``table`` with the label column(s) masked outside the sample.

        Adds the inclusion probabilities as column ``inclusion`` and, for stratified designs, the
        stratum labels as column ``strata`` (pass ``strata=None`` to skip it).
        """
        if len(table) != self.selected.size:
            raise ValueError(
                f"The table has {len(table)} rows but the sample was drawn from a pool of "
                f"{self.selected.size}; apply a sample to the table it was drawn from."
            )
        labels = [label] if isinstance(label, str) else list(label)
        missing = [c for c in labels if c not in table.columns]
        if missing:
            raise ValueError(f"The 'label' parameter of apply names missing column(s) {missing}.")
        out = table.copy()
        for col in labels:
            values = out[col].astype("float64").to_numpy(copy=True)
            values[~self.selected] = np.nan
            out[col] = values
        out[inclusion] = np.asarray(self.inclusion)
        if strata is not None and self.design == "stratified":
            out[strata] = np.asarray(self.stratum_labels, dtype=object)[self.strata]
        return out


def draw_stratified(
    strata: IntArray,
    sample_sizes: IntArray,
    rng: np.random.Generator,
) -> BoolArray:
    """Simple random samples without replacement of n_h units in every stratum (vectorised)."""
    keys = rng.random(strata.size)
    order = np.lexsort((keys, strata))
    sorted_strata = strata[order]
    starts = np.searchsorted(sorted_strata, np.arange(sample_sizes.size))
    rank = np.arange(strata.size) - starts[sorted_strata]
    chosen = np.zeros(strata.size, dtype=bool)
    chosen[order] = rank < sample_sizes[sorted_strata]
    return chosen


@dataclass(frozen=True, eq=False)
class DomainSample:
    """The labeled sample of a domain problem, as the estimators see it.

    Attributes
    ----------
    domain : ndarray of int, shape (M,)
        Domain code (0..D-1) of every pool unit.
    n_domains : int
    index : ndarray of int, shape (n,)
        Pool positions of the labeled units.
    y : ndarray of shape (n,)
        Their gold labels.
    pi : ndarray of shape (n,)
        Their inclusion probabilities.
    family : {'stratified', 'poisson'}
        Design family used by the variance formulas.
    strata : ndarray of int, shape (n,)
        Stratum code of every labeled unit (stratified family; zeros otherwise).
    stratum_pool, stratum_sample : ndarray of shape (H,)
        N_h and n_h.
    pool_size : ndarray of shape (D,)
        N_d, the pool size of every domain.
    """

    domain: IntArray
    n_domains: int
    index: IntArray
    y: FloatArray
    pi: FloatArray
    family: DesignFamily
    strata: IntArray
    stratum_pool: FloatArray
    stratum_sample: FloatArray
    pool_size: FloatArray
    _cache: dict[str, object] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        """Number of labeled units."""
        return int(self.index.size)

    @property
    def labeled_domain(self) -> IntArray:
        """Domain code of every labeled unit."""
        out: IntArray = self.domain[self.index]
        return out

    @property
    def n_labeled(self) -> FloatArray:
        """n_d, labeled units per domain."""
        return np.bincount(self.labeled_domain, minlength=self.n_domains).astype(np.float64)

    @property
    def weight(self) -> FloatArray:
        """Design weights 1 / pi_i."""
        out: FloatArray = 1.0 / self.pi
        return out

    def subsample(self, keep: BoolArray, *, fraction: float | None = None) -> DomainSample:
        """The sample restricted to ``keep`` (cross-validation training sets, sample splits).

        Stratified family: n_h is recounted and pi_i = n_h / N_h. Poisson family: a random
        subset retained with probability ``fraction`` is again a Poisson sample with
        pi_i x fraction.
        """
        index = self.index[keep]
        if self.family == "stratified":
            strata = self.strata[keep]
            n_h = np.bincount(strata, minlength=self.stratum_pool.size).astype(np.float64)
            pi = n_h[strata] / self.stratum_pool[strata]
        else:
            strata = self.strata[keep]
            n_h = np.bincount(strata, minlength=self.stratum_pool.size).astype(np.float64)
            share = float(keep.mean()) if fraction is None else fraction
            pi = self.pi[keep] * share
        return DomainSample(
            domain=self.domain,
            n_domains=self.n_domains,
            index=index,
            y=self.y[keep],
            pi=pi,
            family=self.family,
            strata=strata,
            stratum_pool=self.stratum_pool,
            stratum_sample=n_h,
            pool_size=self.pool_size,
        )


def sample_from_design(
    domain: IntArray,
    n_domains: int,
    drawn: DesignSample,
    y_full: FloatArray,
) -> DomainSample:
    """The :class:`DomainSample` of a draw from a fully labeled pool (studies and tests)."""
    index = drawn.index
    family: DesignFamily = "poisson" if drawn.design == "poisson" else "stratified"
    return DomainSample(
        domain=domain,
        n_domains=n_domains,
        index=index,
        y=np.asarray(y_full[index], dtype=np.float64),
        pi=np.asarray(drawn.inclusion[index], dtype=np.float64),
        family=family,
        strata=np.asarray(drawn.strata[index], dtype=np.intp),
        stratum_pool=drawn.pool_sizes.astype(np.float64),
        stratum_sample=np.bincount(drawn.strata[index], minlength=drawn.pool_sizes.size).astype(
            np.float64
        ),
        pool_size=np.bincount(domain, minlength=n_domains).astype(np.float64),
    )


def draw(
    strata: IntArray,
    stratum_labels: ObjectArray,
    *,
    design: SamplerName,
    budget: int,
    allocation: Allocation = "proportional",
    sd: FloatArray | None = None,
    user: FloatArray | None = None,
    size: FloatArray | None = None,
    minimum: int = 2,
    rng: np.random.Generator,
) -> DesignSample:
    """Draw one sample (inputs already validated by :func:`slicewise.sample`).

    Parameters
    ----------
    strata : ndarray of int, shape (M,)
        Stratum codes (ignored for SRS and Poisson).
    design : {'srs', 'stratified', 'poisson'}
    budget : int
        Sample size (stratified, SRS) or expected sample size (Poisson).
    allocation, sd, user, minimum
        See :func:`allocate`.
    size : ndarray of shape (M,), optional
        Size measure for Poisson sampling (pi_i proportional to it); equal probabilities when
        omitted.
    rng : numpy Generator
    """
    m = strata.size
    if design == "poisson":
        measure = np.ones(m) if size is None else size
        pi = poisson_probabilities(measure, float(budget))
        selected = rng.random(m) < pi
        return DesignSample(
            design="poisson",
            selected=selected,
            inclusion=pi,
            strata=np.zeros(m, dtype=np.intp),
            stratum_labels=np.array(["all"], dtype=object),
            pool_sizes=np.array([m], dtype=np.intp),
            sample_sizes=np.array([int(selected.sum())], dtype=np.intp),
            allocation="pps" if size is not None else "equal",
        )
    if design == "srs":
        strata = np.zeros(m, dtype=np.intp)
        stratum_labels = np.array(["all"], dtype=object)
    pool_sizes = np.bincount(strata, minlength=stratum_labels.size).astype(np.intp)
    if design == "srs":
        n_h = np.array([budget], dtype=np.intp)
    else:
        n_h = allocate(pool_sizes, budget, allocation=allocation, sd=sd, user=user, minimum=minimum)
    selected = draw_stratified(strata, n_h, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(pool_sizes > 0, n_h / np.maximum(pool_sizes, 1), 0.0)
    return DesignSample(
        design=design,
        selected=selected,
        inclusion=frac[strata].astype(np.float64),
        strata=strata.astype(np.intp),
        stratum_labels=stratum_labels,
        pool_sizes=pool_sizes,
        sample_sizes=n_h,
        allocation=allocation if design == "stratified" else "srs",
    )
