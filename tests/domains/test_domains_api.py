"""The public functions end to end: result conventions, intervals, plots, validation, harness."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from research.domain_harness import interval_score, run_harness
from slicewise.domains.fit import DomainProblem
from slicewise.smoothing.objective import BORROWED_WEIGHT, TRANSLATION


def _pool(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    model = np.repeat(np.arange(4), 1500)
    bench = np.tile(np.repeat(np.arange(5), 300), 4)
    p = 1 / (1 + np.exp(-(rng.normal(0, 0.7, 4)[model] + rng.normal(0, 0.7, 5)[bench])))
    y = (rng.random(model.size) < p).astype(float)
    judge = np.clip(p + 0.5 * (y - p) + rng.normal(0, 0.2, model.size), 0, 1)
    return pd.DataFrame(
        {
            "model": model,
            "bench": bench,
            "judge": judge,
            "other": rng.normal(size=model.size),
            "y": y,
        }
    )


@pytest.fixture(scope="module")
def labeled() -> pd.DataFrame:
    frame = _pool()
    frame["cell"] = frame["model"].astype(str) + "/" + frame["bench"].astype(str)
    return sw.sample(frame, strata="cell", fraction=0.1, rng=1).apply(frame, label="y")


COMMON = {"domain": ["model", "bench"], "label": "y", "signals": ["judge"], "strata": "stratum"}


def test_result_conventions(labeled: pd.DataFrame) -> None:
    res = sw.domains(labeled, method="greg", **COMMON)
    assert res.size == 20
    assert not res.estimate.flags.writeable
    assert not res.se.flags.writeable
    frame = res.to_frame()
    assert list(frame.columns[:8]) == [
        "model",
        "bench",
        "estimate",
        "se",
        "df",
        "bias_bound",
        "lower",
        "upper",
    ]
    assert {"shrinkage", "method", "direct_estimate", "borrowed"} <= set(frame.columns)
    np.testing.assert_allclose(frame["shrinkage"], 1.0)
    assert (frame["n_labeled"] == 30).all()
    assert (frame["n_pool"] == 300).all()
    narrow = res.ci(0.5)
    wide = res.ci()
    assert np.all(narrow.high - narrow.low < wide.high - wide.low)
    assert res.with_level(0.9).level == 0.9
    assert res.to_dict()["method"] == "greg"


def test_slice_objective_limits_precise_domains_and_contains_direct_intervals(
    labeled: pd.DataFrame,
) -> None:
    """30 labels per domain: every domain moves from its direct estimate (the default direct,
    greg-or-hajek) by at most TRANSLATION standard errors, and its interval contains the direct
    one. 6 labels per domain (GREG, the coefficient is estimated from 20 labels on): the
    smoothed estimates are better on average and every interval contains the direct one."""
    rich = sw.domains(labeled, method="pp-ts", taxonomy=["model", "bench"], **COMMON)
    direct = sw.domains(labeled, method="greg-or-hajek", **COMMON)
    shift = rich.estimate - direct.estimate
    assert np.all(np.abs(shift) <= TRANSLATION * direct.se * (1 + 1e-9))
    assert np.any(np.abs(shift) > 0.1 * direct.se)  # it does borrow
    np.testing.assert_allclose(rich.bias_bound, np.abs(shift), atol=1e-12)
    low, high = rich.ci()
    d_low, d_high = direct.ci()
    assert np.all(low <= d_low + 1e-12)
    assert np.all(high >= d_high - 1e-12)
    np.testing.assert_array_equal(rich.borrowed, rich.shrinkage < BORROWED_WEIGHT)

    frame = _pool()
    frame["cell"] = frame["model"].astype(str) + "/" + frame["bench"].astype(str)
    sparse = sw.sample(frame, strata="cell", fraction=0.02, rng=1).apply(frame, label="y")
    res = sw.domains(sparse, method="pp-ts", taxonomy=["model", "bench"], **COMMON)
    ht = sw.domains(sparse, method="greg", **COMMON)
    assert res.params["components"] == ["model", "bench", "domain"]
    assert np.all((res.shrinkage > 0) & (res.shrinkage < 1))
    np.testing.assert_allclose(res.bias_bound, np.abs(res.estimate - ht.estimate), atol=1e-12)
    low, high = res.ci()
    d_low, d_high = ht.ci()
    assert np.all(low <= d_low + 1e-12)
    assert np.all(high >= d_high - 1e-12)
    truth = frame.groupby(["model", "bench"])["y"].mean().to_numpy()
    assert np.mean((res.estimate - truth) ** 2) < np.mean((ht.estimate - truth) ** 2)


def test_plot_returns_axes(labeled: pd.DataFrame) -> None:
    res = sw.domains(labeled, method="pp-s", **COMMON)
    ax = res.plot(truth=np.full(res.size, 0.5))
    assert len(ax.get_yticklabels()) == res.size


def test_validate_scores_and_selection(labeled: pd.DataFrame) -> None:
    val = sw.validate(labeled, candidates=["ht", "greg", "pp-s"], folds=4, rng=0, **COMMON)
    scores = val.scores()
    assert list(scores["method"]) == ["ht", "greg", "pp-s"]
    assert scores["selected"].sum() == 1
    assert val.selected == scores.loc[scores["dbcv_rmse"].idxmin(), "method"]
    assert val.reported_rmse == pytest.approx(scores["dbcv_rmse"].min())
    # naive CV adds the held-out HT noise, so it reports far more error than DB-CV
    assert np.all(scores["naive_cv_rmse"] > scores["dbcv_rmse"])
    assert "dbcv_mse" in val.to_frame().columns
    np.testing.assert_array_equal(val.estimate, val.result.estimate)


def test_validate_is_reproducible(labeled: pd.DataFrame) -> None:
    a = sw.validate(labeled, candidates=["ht", "greg"], rng=3, **COMMON)
    b = sw.validate(labeled, candidates=["ht", "greg"], rng=3, **COMMON)
    np.testing.assert_array_equal(a.dbcv_mse, b.dbcv_mse)


def test_validate_compares_the_default_direct_estimator(labeled: pd.DataFrame) -> None:
    """Without a candidate list, sw.validate scores greg-or-hajek (the direct estimator under the
    default smoothing) next to GREG; without signals neither can run and neither is listed."""
    val = sw.validate(labeled, folds=4, rng=0, **COMMON)
    assert val.candidates == ("ht", "ppi", "greg", "greg-or-hajek", "fh", "pp-s")
    assert np.all(np.isfinite(val.dbcv_mse))
    no_signals = {**COMMON, "signals": None}
    bare = sw.validate(labeled, folds=4, direct="ht", rng=0, **no_signals)
    assert bare.candidates == ("ht", "fh", "pp-s")


def test_interval_score_formula() -> None:
    score = interval_score(np.array([0.4, 0.4]), np.array([0.6, 0.6]), np.array([0.5, 0.7]), 0.9)
    np.testing.assert_allclose(score, [0.2, 0.2 + 20 * 0.1])


def test_harness_runs_and_is_seeded() -> None:
    frame = _pool(2)
    domain = (frame["model"] * 5 + frame["bench"]).to_numpy(dtype=np.intp)
    aux = frame[["judge"]].to_numpy()
    problem = DomainProblem(auxiliaries=aux, prediction=aux[:, 0], covariates=None)
    kw = {"methods": ("ht", "greg"), "budget": 600, "reps": 4, "dbcv": ("ht", "greg")}
    res = run_harness(problem, domain, frame["y"].to_numpy(), rng=np.random.default_rng(1), **kw)
    again = run_harness(problem, domain, frame["y"].to_numpy(), rng=np.random.default_rng(1), **kw)
    np.testing.assert_array_equal(res.squared_error, again.squared_error)
    table = res.table()
    assert list(table["method"]) == ["ht", "greg"]
    assert table["rmse"].iloc[1] < table["rmse"].iloc[0]
    val = res.validation_table()
    assert list(val["selector"]) == ["DB-CV", "naive CV", "split 50/50", "split 80/20"]
