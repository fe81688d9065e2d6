"""One interval rule for domains: the oracle harness measures :meth:`DomainResult.ci` itself, and
a domain mean near 1 is covered by the default (Wilson-type) interval where the normal one is not.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from _domain_helpers import stratified_sample
from scipy import stats

import slicewise as sw
from research.domain_harness import HarnessSpec, _one_rep, draw_sample, fit_interval
from slicewise.data.designs import draw_stratified, sample_from_design
from slicewise.domains.api import domain_result, labels_mean
from slicewise.domains.fit import DomainProblem, fit_domains
from slicewise.domains.input import prepare
from slicewise.domains.results import domain_interval
from slicewise.inference.bounded import interval_bounds
from slicewise.inference.variance import plus_two_variance


def _pool(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    bench = np.repeat(np.arange(12), 250)
    p = 1 / (1 + np.exp(-rng.normal(1.0, 1.2, 12)[bench]))
    y = (rng.random(bench.size) < p).astype(float)
    judge = np.clip(p + 0.5 * (y - p) + rng.normal(0, 0.2, bench.size), 0, 1)
    return pd.DataFrame({"bench": bench, "judge": judge, "y": y})


OPTIONS = {"domain": "bench", "label": "y", "signals": ["judge"], "strata": "stratum"}


@pytest.fixture(scope="module")
def sparse() -> pd.DataFrame:
    """About 7 labels per domain: the default smooths every domain (bias bounds > 0)."""
    frame = _pool()
    return sw.sample(frame, strata="bench", fraction=0.03, rng=4).apply(frame, label="y")


def _prepared(labeled: pd.DataFrame) -> tuple[DomainProblem, object]:
    prepared = prepare(
        labeled,
        domain="bench",
        label="y",
        signals=["judge"],
        inclusion="pi",
        strata="stratum",
        prediction=None,
        taxonomy=None,
        covariates="auto",
        direct="greg",
        variance_df=4.0,
        prior_scale=0.25,
        func="test",
    )
    return prepared.problem, prepared.sample


@pytest.mark.parametrize("bounded", [None, False, True])
def test_harness_interval_is_the_result_interval(
    sparse: pd.DataFrame, bounded: bool | None
) -> None:
    res = sw.domains(sparse, **OPTIONS)
    assert res.method == "pp-s"
    assert np.all(res.bias_bound > 0)
    problem, sample = _prepared(sparse)
    fit = fit_domains(problem, sample, "pp-s")
    low, high = fit_interval(fit, sample, 0.95, bounded=bounded)
    expected = res.ci(bounded=bounded)
    np.testing.assert_allclose(low, expected.low, rtol=1e-12)
    np.testing.assert_allclose(high, expected.high, rtol=1e-12)
    if bounded is False:  # the bias bound is in: wider than estimate +/- z se on both sides
        assert np.all(low < res.estimate - 1.959 * res.se)
        assert np.all(high > res.estimate + 1.959 * res.se)


def test_harness_scores_the_result_interval(sparse: pd.DataFrame) -> None:
    """One repetition of the harness scores exactly DomainResult.ci of its draw."""
    frame = _pool()
    problem, _ = _prepared(sparse)
    domain = frame["bench"].to_numpy(dtype=np.intp)
    y = frame["y"].to_numpy(dtype=np.float64)
    truth = frame.groupby("bench")["y"].mean().to_numpy()
    spec = HarnessSpec(
        problem=problem,
        domain=domain,
        n_domains=12,
        y=y,
        strata=domain,
        stratum_labels=np.arange(12).astype(object),
        budget=90,
        allocation="proportional",
        methods=("pp-s",),
        level=0.95,
        dbcv=(),
        folds=5,
    )
    out = _one_rep(spec, np.random.SeedSequence(5))
    drawn = draw_sample(spec, np.random.default_rng(np.random.SeedSequence(5)))
    sample = sample_from_design(domain, 12, drawn, y)
    res = domain_result(fit_domains(problem, sample, "pp-s"), sample, level=0.95)
    assert np.all(res.bias_bound > 0)
    interval = res.ci()
    np.testing.assert_array_equal(
        out["covered"][0], (interval.low <= truth) & (truth <= interval.high)
    )
    np.testing.assert_allclose(out["width"][0], interval.high - interval.low, rtol=1e-12)


def test_default_is_wilson_type_and_contains_the_direct_interval(sparse: pd.DataFrame) -> None:
    res = sw.domains(sparse, **OPTIONS)
    mean, n_eff = labels_mean(_prepared(sparse)[1])  # type: ignore[arg-type]
    np.testing.assert_allclose(res.naive_estimate, mean)
    np.testing.assert_allclose(res.n_labeled_eff, res.n_labeled)  # SRS within domains
    # where a domain's labels all agree the se is floored at the plus-two value
    agree = (mean == 0) | (mean == 1)
    assert agree.any()
    floor = np.where(agree, np.sqrt(plus_two_variance(n_eff, mean)), 0.0)
    low, high = interval_bounds(
        res.estimate,
        np.maximum(res.se, floor),
        stats.norm.ppf(0.975),
        res.bias_bound,
        naive_estimate=mean,
        n_labeled_eff=n_eff,
    )
    # and where they are all 1 (0), the interval reaches 1 (0)
    low = np.where(mean == 0, 0.0, low)
    high = np.where(mean == 1, 1.0, high)
    np.testing.assert_allclose(res.ci().low, low, rtol=1e-12)
    np.testing.assert_allclose(res.ci().high, high, rtol=1e-12)
    frame = res.to_frame()
    np.testing.assert_allclose(frame["lower"], low, rtol=1e-12)
    assert {"naive_estimate", "n_labeled_eff"} <= set(frame.columns)
    assert frame["lower"].min() >= 0.0
    assert frame["upper"].max() <= 1.0
    np.testing.assert_allclose(
        res.to_frame(bounded=False)["upper"],
        res.estimate + 1.959963984540054 * res.se + res.bias_bound,
    )
    direct = sw.domains(sparse, method="greg", **OPTIONS).ci()
    assert np.all(res.ci().low <= direct.low + 1e-12)
    assert np.all(res.ci().high >= direct.high - 1e-12)


def test_bounded_errors(sparse: pd.DataFrame) -> None:
    res = sw.domains(sparse, **OPTIONS)
    with pytest.raises(TypeError, match=r"'bounded' parameter of DomainResult\.ci must be True"):
        res.ci(bounded="yes")  # type: ignore[arg-type]
    bare = dataclasses.replace(res, naive_estimate=None, n_labeled_eff=None)
    assert not bare.has_labels_mean
    np.testing.assert_allclose(bare.ci().low, res.ci(bounded=False).low)
    with pytest.raises(ValueError, match="labels-only mean"):
        bare.ci(bounded=True)


REPS = 400


def test_default_covers_a_domain_near_one() -> None:
    """A domain with mean 0.97 and 100 of its 1,000 units labeled (SRS), 400 draws: the normal
    interval covers 0.835 (its se shrinks with the estimate, and is 0 in the 4% of draws where
    all 100 labels are 1); the default Wilson-type interval covers 0.97."""
    rng = np.random.default_rng(11)
    domain = np.repeat(np.arange(4), 1000).astype(np.intp)
    y = np.concatenate([np.r_[np.ones(970), np.zeros(30)], rng.random(3000) < 0.6]).astype(float)
    truth = np.bincount(domain, weights=y) / 1000
    sizes = np.full(4, 100, dtype=np.intp)
    problem = DomainProblem(auxiliaries=np.zeros((4000, 0)), prediction=None, covariates=None)
    covered = {"normal": 0, "default": 0}  # 334 and 389 of 400 when written
    for _ in range(REPS):
        sample = stratified_sample(domain, y, draw_stratified(domain, sizes, rng))
        res = domain_result(fit_domains(problem, sample, "hajek"), sample, level=0.95)
        for kind, bounded in (("normal", False), ("default", None)):
            low, high = res.ci(bounded=bounded)
            covered[kind] += int(low[0] <= truth[0] <= high[0])
    assert covered["normal"] / REPS < 0.91
    assert stats.binomtest(covered["normal"], REPS, 0.95).pvalue < 1e-6
    assert covered["default"] / REPS >= 0.95
    assert stats.binomtest(covered["default"], REPS, 0.95, alternative="less").pvalue > 0.05


def test_interval_reaches_the_boundary_where_every_label_agrees() -> None:
    """All 281 labels of a domain are 1 and a signal adjustment puts the estimate at 0.999: the
    interval still contains 1 (PSN-IRT's model_3 on MMLU, whose truth is exactly 1)."""
    est = np.array([0.999, 0.001, 0.999])
    se = np.array([0.002, 0.002, 0.002])
    naive = np.array([1.0, 0.0, 0.99])
    n_eff = np.array([281.0, 281.0, 281.0])
    interval = domain_interval(est, se, 0.95, naive_estimate=naive, n_labeled_eff=n_eff)
    assert interval.high[0] == 1.0
    assert interval.low[1] == 0.0
    assert interval.high[2] < 1.0  # one label of 0 among them: no extension
    # the se is floored at the plus-two value where the labels agree: n* = n + 2
    p_tilde = 282.0 / 283.0
    expected_low = interval_bounds(
        est[0],
        np.sqrt(p_tilde * (1 - p_tilde) / 283.0),
        stats.norm.ppf(0.975),
        naive_estimate=1.0,
        n_labeled_eff=281.0,
    )[0]
    np.testing.assert_allclose(interval.low[0], expected_low, rtol=1e-12)


@pytest.mark.parametrize("method", ["greg", "ppi", "ppi++", "pp-s"])
def test_nearly_exact_prediction_keeps_a_positive_variance(method: str) -> None:
    """Four domains of 60 units, labels a fair coin, a judge that copies the label except on one
    unit per domain; Poisson sampling with pi = 1/3, 60 draws. Where no labeled unit shows the
    judge's mistake the residuals are 0: GREG, PPI and PPI++ reported se of 0-0.01 and covered
    0.28-0.45 per domain, and pp-s refused to run (no domain had a positive sampling variance).
    With the residual floor (``estimators.survey.direct.residual_floored``: at most n* + 1 times the
    Hajek precision) every domain must cover at least 0.9."""
    rng = np.random.default_rng(1)
    size, n_dom = 60, 4
    dom = np.repeat(np.arange(n_dom), size)
    y = (rng.random(dom.size) < 0.5).astype(float)
    judge = y.copy()
    wrong = np.arange(n_dom) * size + rng.integers(0, size, n_dom)
    judge[wrong] = 1.0 - y[wrong]
    truth = pd.Series(y).groupby(dom).mean().to_numpy()
    covered = np.zeros(n_dom)
    reps = 60
    for _ in range(reps):
        labeled = rng.random(dom.size) < 1.0 / 3.0
        frame = pd.DataFrame(
            {"d": dom, "judge": judge, "y": np.where(labeled, y, np.nan), "pi": 1.0 / 3.0}
        )
        res = sw.domains(frame, domain="d", label="y", signals="judge", method=method)
        ci = res.ci()
        covered += (ci.low <= truth) & (truth <= ci.high)
    print(method, covered / reps)
    assert (covered / reps).min() >= 0.9
