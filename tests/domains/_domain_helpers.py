"""Small builders shared by the domain tests."""

from __future__ import annotations

import numpy as np

from slicewise.data.designs import DomainSample


def stratified_sample(
    domain: np.ndarray, y: np.ndarray, selected: np.ndarray, strata: np.ndarray | None = None
) -> DomainSample:
    """The DomainSample of a stratified SRS (strata default to the domains)."""
    st = domain if strata is None else strata
    n_dom = int(domain.max()) + 1
    n_strata = int(st.max()) + 1
    big_n = np.bincount(st, minlength=n_strata).astype(float)
    small_n = np.bincount(st[selected], minlength=n_strata).astype(float)
    index = np.flatnonzero(selected)
    return DomainSample(
        domain=domain.astype(np.intp),
        n_domains=n_dom,
        index=index,
        y=y[index].astype(float),
        pi=(small_n / big_n)[st[index]],
        family="stratified",
        strata=st[index].astype(np.intp),
        stratum_pool=big_n,
        stratum_sample=small_n,
        pool_size=np.bincount(domain, minlength=n_dom).astype(float),
    )


def poisson_sample(
    domain: np.ndarray, y: np.ndarray, pi: np.ndarray, rng: np.random.Generator
) -> DomainSample:
    """One Poisson sample with inclusion probabilities ``pi``."""
    selected = rng.random(domain.size) < pi
    index = np.flatnonzero(selected)
    n_dom = int(domain.max()) + 1
    return DomainSample(
        domain=domain.astype(np.intp),
        n_domains=n_dom,
        index=index,
        y=y[index].astype(float),
        pi=pi[index],
        family="poisson",
        strata=np.zeros(index.size, dtype=np.intp),
        stratum_pool=np.array([float(domain.size)]),
        stratum_sample=np.array([float(index.size)]),
        pool_size=np.bincount(domain, minlength=n_dom).astype(float),
    )
