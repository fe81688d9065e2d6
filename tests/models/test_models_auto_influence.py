"""The default method='auto' of deployment_score and rank_models: auto's chosen candidate exposes
its item-level influence values (or lace stands in, with a note), and the intervals cover."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from models_sim import GROUPS, mask_rows, shared_difficulty_pool
from scipy import stats
from test_models_deploy import DEPLOY, SIGNALS, continuous_pool, group_pool, ratio

import slicewise as sw
from slicewise.exceptions import SlicewiseWarning
from slicewise.methods import registry
from slicewise.methods.base import MethodFit


def test_auto_is_the_default_and_equals_the_linear_form_it_chose() -> None:
    rng = np.random.default_rng(31)
    data = mask_rows(group_pool(rng), ["y"], rng.permutation(2000)[:400])
    res = sw.deployment_score(data, z="g", signals=SIGNALS, label="y", deploy=DEPLOY)
    assert res.method == "auto"
    used = res.params["auto_used"]
    assert used in ("naive", "global_cv", "lace", "lace_shrunk")
    assert any(note.startswith("auto chose ") for note in res.notes)
    # disjoint groups: the influence variance is the weighted sum of the cell variances
    q = res.cell_weight
    assert res.se == pytest.approx(float(np.sqrt(np.sum(q**2 * res.cell_se**2))), rel=1e-12)
    if used != "lace_shrunk":
        same = sw.deployment_score(
            data,
            z="g",
            signals=SIGNALS,
            label="y",
            deploy=DEPLOY,
            method=used,
            nuisance_scale=float(res.params.get("nuisance_scale", 1.0)),
        )
        assert res.estimate == pytest.approx(same.estimate, abs=1e-12)
        assert res.se == pytest.approx(same.se, rel=1e-10)


def test_a_learned_choice_falls_back_to_lace_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(32)
    data = mask_rows(group_pool(rng), ["y"], rng.permutation(2000)[:400])
    spec = registry.METHODS["auto"]

    def learned(*args: object) -> MethodFit:
        fit = spec.fit(*args)  # type: ignore[arg-type]
        chosen = "learned: b = 1h, kappa = 0"
        return replace(fit, params={**fit.params, "chosen": chosen, "features": "learned"})

    monkeypatch.setitem(registry.METHODS, "auto", replace(spec, fit=learned))
    res = sw.deployment_score(data, z="g", signals=SIGNALS, label="y", deploy=DEPLOY)
    lace = sw.deployment_score(
        data, z="g", signals=SIGNALS, label="y", deploy=DEPLOY, method="lace"
    )
    assert res.params["auto_used"] == "lace"
    assert any("so deployment_score used lace instead" in note for note in res.notes)
    assert res.estimate == pytest.approx(lace.estimate, abs=1e-12)
    assert res.se == pytest.approx(lace.se, rel=1e-10)


@pytest.mark.slow
def test_auto_deployment_coverage_categorical_pool_target() -> None:
    """300 draws of 400 labels from a pool of 2,000 (the design of the lace test, seed 25)."""
    rng = np.random.default_rng(25)
    data = group_pool(rng)
    truth = sum(w * data.loc[data["g"] == k, "y"].mean() for k, w in DEPLOY.items())
    covered, naive_err, err = [], [], []
    for _ in range(300):
        labeled = mask_rows(data, ["y"], rng.permutation(len(data))[:400])
        res = sw.deployment_score(labeled, z="g", signals=SIGNALS, label="y", deploy=DEPLOY)
        low, high = res.ci()
        covered.append(low <= truth <= high)
        err.append(res.estimate - truth)
        naive_err.append(res.naive_estimate - truth)
    _binomial_ok(np.array(covered))
    assert np.mean(np.square(err)) < np.mean(np.square(naive_err))


@pytest.mark.slow
def test_auto_deployment_coverage_continuous_pool_target() -> None:
    """300 draws of 400 labels, pool of 2,000, r_Q(z) = 2z (the design of the lace test)."""
    rng = np.random.default_rng(26)
    data = continuous_pool(rng)
    truth = float(np.sum(ratio(data["z"]) * data["y"]) / np.sum(ratio(data["z"])))
    covered, naive_err, err = [], [], []
    for _ in range(300):
        labeled = mask_rows(data, ["y"], rng.permutation(len(data))[:400])
        res = sw.deployment_score(labeled, z="z", signals=SIGNALS, label="y", deploy=ratio)
        low, high = res.ci()
        covered.append(low <= truth <= high)
        err.append(res.estimate - truth)
        naive_err.append(res.naive_estimate - truth)
    _binomial_ok(np.array(covered))
    assert np.mean(np.square(err)) < np.mean(np.square(naive_err))


def _truth(wide: pd.DataFrame, a: str, b: str) -> np.ndarray:
    return np.asarray((wide[a] - wide[b]).groupby(wide["g"]).mean().loc[GROUPS].to_numpy())


def _binomial_ok(covered: np.ndarray) -> None:
    """The covered count is compatible with 95% (two-sided binomial test at 1%)."""
    assert stats.binomtest(int(np.sum(covered)), covered.size, 0.95).pvalue > 0.01


@pytest.mark.slow
def test_auto_rank_models_family_wise_coverage() -> None:
    """200 draws, 3 models, 3 pairs x 4 groups = 12 simultaneous intervals per draw (the design
    of the lace test, seeds 67 and 670)."""
    rng = np.random.default_rng(67)
    draws_rng = np.random.default_rng(670)
    wide = shared_difficulty_pool(rng, m=2400, n_models=3)
    labels = {f"m{k}": f"y{k}" for k in range(3)}
    signals = {f"m{k}": [f"s{k}", "diff"] for k in range(3)}
    reps = 200
    hits = np.zeros(reps, dtype=bool)
    for rep in range(reps):
        data = mask_rows(wide, list(labels.values()), rng.permutation(len(wide))[:1200])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SlicewiseWarning)
            rank = sw.rank_models(
                data,
                z="g",
                label=labels,
                signals=signals,
                kind="categorical",
                n_draws=2000,
                rng=draws_rng,
            )
        assert rank.method == "auto"
        assert list(rank.z) == list(GROUPS)
        true = np.vstack([_truth(wide, labels[a], labels[b]) for a, b in rank.pairs])
        sim = rank.ci()
        hits[rep] = bool(np.all((sim.low <= true) & (true <= sim.high)))
    _binomial_ok(hits)
