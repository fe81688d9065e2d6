"""One engine: the design-based direct estimators are profile methods of a categorical profile.

``sw.profile(..., method=m, inclusion='pi')`` on a categorical Z and ``sw.domains(..., method=m)``
must give the same estimates and design variances; ordered profiles are refused; and the
profile methods' intervals cover the finite-pool domain means under unequal-probability Poisson
sampling (seeded Monte-Carlo against the known truth).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from slicewise.data.designs import poisson_probabilities
from slicewise.data.table import make_table
from slicewise.domains.fit import DIRECT
from slicewise.methods.base import LabeledSet
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context

SIGNALS = ["hist", "judge"]


def _frame(seed: int, *, poisson: bool) -> pd.DataFrame:
    """8 unbalanced domains, two signals; labels drawn with probabilities that depend on y (an
    unweighted mean is biased), or a simple random sample; one domain without labels and one
    with a single label."""
    rng = np.random.default_rng(seed)
    m = 3000
    names = np.array(list("abcdefgh"))
    bench = names[rng.choice(8, m, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.08, 0.05, 0.02])]
    hist = (rng.random(m) < 0.6).astype(float)
    y = np.where(rng.random(m) < 0.8, hist, 1.0 - hist)
    judge = y + rng.normal(0.0, 1.0, m)
    if poisson:
        pi = poisson_probabilities(np.where(y > 0, 2.0, 1.0) * rng.uniform(0.5, 1.5, m), 300)
        labeled = rng.random(m) < pi
    else:
        pi = np.full(m, np.nan)
        labeled = np.zeros(m, dtype=bool)
        labeled[rng.choice(m, 300, replace=False)] = True
    labeled[bench == "h"] = False
    labeled[np.flatnonzero(bench == "g")[1:]] = False
    labeled[np.flatnonzero(bench == "g")[0]] = True
    frame = pd.DataFrame(
        {"bench": bench, "hist": hist, "judge": judge, "correct": np.where(labeled, y, np.nan)}
    )
    if poisson:
        frame["pi"] = pi
    # shuffled rows: the profile puts its items in a canonical order, the domains keep the input's
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.mark.parametrize("poisson", [True, False])
@pytest.mark.parametrize("method", DIRECT)
def test_profile_equals_domains(method: str, poisson: bool) -> None:
    frame = _frame(3, poisson=poisson)
    inclusion = "pi" if poisson else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof = sw.profile(
            frame,
            z="bench",
            kind="categorical",
            signals=SIGNALS,
            label="correct",
            method=method,
            inclusion=inclusion,
        )
        dom = sw.domains(
            frame,
            domain="bench",
            signals=SIGNALS,
            label="correct",
            method=method,  # type: ignore[arg-type]
            inclusion=inclusion,
        )
    assert list(prof.z) == list(dom.domain)
    np.testing.assert_allclose(prof.estimate, dom.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(prof.se**2, dom.se**2, rtol=0, atol=1e-12)
    # and the same intervals (Wilson-type around each domain's Hajek mean, normal quantiles)
    np.testing.assert_allclose(prof.ci().low, dom.ci().low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(prof.ci().high, dom.ci().high, rtol=0, atol=1e-12)
    assert np.isnan(prof.estimate[-1])  # domain 'h' has no labels
    assert np.isfinite(prof.estimate[-2])  # 'g' has one (a variance for HT and PPI only)
    assert np.isfinite(prof.se[:-2]).all()
    assert prof.params["design"] == ("poisson" if poisson else "stratified")
    assert prof.method == method
    if not poisson:
        assert any("simple random sample of the pool" in note for note in prof.notes)


def test_population_target_adds_the_pool_variance() -> None:
    frame = _frame(4, poisson=True)
    kw = {"z": "bench", "kind": "categorical", "signals": SIGNALS, "label": "correct"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = sw.profile(frame, method="greg", inclusion="pi", **kw)  # type: ignore[arg-type]
        pop = sw.profile(
            frame,
            method="greg",
            inclusion="pi",
            target="population",
            **kw,  # type: ignore[arg-type]
        )
    np.testing.assert_array_equal(pool.estimate, pop.estimate)
    ok = np.isfinite(pool.se)
    assert ok.sum() == 6
    assert np.all(pop.se[ok] > pool.se[ok])


@pytest.mark.parametrize("kind", ["continuous", "ordinal"])
@pytest.mark.parametrize("method", ["hajek", "greg"])
def test_ordered_profiles_are_refused(method: str, kind: str) -> None:
    rng = np.random.default_rng(0)
    level = rng.integers(1, 6, 500).astype(float)
    y = (rng.random(500) < 0.5).astype(float)
    y[200:] = np.nan
    frame = pd.DataFrame({"level": level, "judge": rng.normal(size=500), "y": y})
    with pytest.raises(ValueError, match=r"needs a categorical profile") as info:
        sw.profile(frame, z="level", kind=kind, signals=["judge"], label="y", method=method)  # type: ignore[arg-type]
    message = str(info.value)
    assert f"Method {method!r} needs a categorical profile" in message
    assert "each level is a domain" in message
    assert f"the profile is {kind}" in message
    assert "method='naive' with inclusion=" in message


def test_signals_are_needed() -> None:
    frame = _frame(5, poisson=True)
    with pytest.raises(ValueError, match=r"Method 'greg' needs at least one cheap signal"):
        sw.profile(frame, z="bench", kind="categorical", label="correct", method="greg")


REPS = 200


def test_profile_design_intervals_cover_under_poisson_sampling() -> None:
    """Coverage of the finite-pool domain means by the Hajek and GREG profile methods' normal
    intervals, labels drawn with probabilities that depend on y (seeded, 200 draws)."""
    rng = np.random.default_rng(21)
    m = 4000
    bench = rng.integers(0, 6, m)
    hist = (rng.random(m) < 0.6).astype(float)
    y = np.where(rng.random(m) < 0.8, hist, 1.0 - hist)
    judge = y + rng.normal(0.0, 1.0, m)
    pi = poisson_probabilities(np.where(y > 0, 2.0, 1.0) * rng.uniform(0.5, 1.5, m), 600)
    frame = pd.DataFrame({"bench": bench.astype(str), "hist": hist, "judge": judge, "correct": y})
    items = make_table(frame, z="bench", kind="categorical", signals=SIGNALS, label="correct")
    ctx = build_context(items)
    truth = np.bincount(bench, weights=y) / np.bincount(bench)
    options = MethodOptions()
    covered = {"hajek": 0, "greg": 0}
    errors = {"hajek": [], "greg": []}
    for _ in range(REPS):
        index = np.flatnonzero(rng.random(m) < pi)
        labeled = LabeledSet(index=index, y=y[index], pi=pi[index])
        for method in covered:
            fit = METHODS[method].fit(ctx, labeled, options)
            se = np.sqrt(fit.var_pool)
            covered[method] += int(np.sum(np.abs(fit.estimate - truth) <= 1.959964 * se))
            errors[method].append(fit.estimate - truth)
    total = REPS * 6
    assert covered == {"hajek": 1128, "greg": 1135}  # 0.940, 0.946
    for method, count in covered.items():
        assert stats.binomtest(count, total, 0.95).pvalue > 0.01, method
        bias = np.mean(errors[method], axis=0)
        sd = np.std(errors[method], axis=0) / np.sqrt(REPS)
        assert np.all(np.abs(bias) < 4 * sd), method
    # the signals help: GREG's errors are smaller than Hajek's
    assert np.mean(np.square(errors["greg"])) < 0.8 * np.mean(np.square(errors["hajek"]))


@pytest.mark.parametrize("poisson", [True, False])
def test_hajek_is_the_design_weighted_local_mean(poisson: bool) -> None:
    """On a categorical profile the Hajek domain mean is naive's (design-weighted) local mean."""
    frame = _frame(6, poisson=poisson)
    kw = {"z": "bench", "kind": "categorical", "label": "correct"}
    inclusion = "pi" if poisson else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hajek = sw.profile(frame, method="hajek", inclusion=inclusion, **kw)  # type: ignore[arg-type]
        naive = sw.profile(frame, method="naive", inclusion=inclusion, **kw)  # type: ignore[arg-type]
    np.testing.assert_allclose(hajek.estimate, naive.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hajek.naive_estimate, naive.estimate, rtol=0, atol=1e-12)
