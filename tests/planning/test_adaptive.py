"""sw.next_items (issue 14): the uniform floor, the design carried by the table across batches,
and a seeded Monte-Carlo check that the adaptive multi-batch protocol ending with
sw.profile(inclusion='pi') is unbiased and covers."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from benchmarks.bench_adaptive import with_pilot as _pilot
from slicewise.exceptions import SlicewiseWarning

SIGNALS = ["judge", "easy", "judge_easy"]
THETA = np.array([0.3, 0.5, 0.6, 0.8])
EASY_SHARE = np.array([0.8, 0.6, 0.4, 0.2])


def split_judge_pool(rng: np.random.Generator, m: int = 3000) -> pd.DataFrame:
    """Four levels; the judge is right 98% of the time on 'easy' items and a coin flip on the
    others; the easy share falls with the level (signal quality varies across Z and items)."""
    level = rng.integers(1, 5, m)
    y = (rng.random(m) < THETA[level - 1]).astype(float)
    easy = (rng.random(m) < EASY_SHARE[level - 1]).astype(float)
    coin = (rng.random(m) < 0.5).astype(float)
    judge = np.where(easy == 1, np.where(rng.random(m) < 0.98, y, 1 - y), coin)
    return pd.DataFrame(
        {"level": level, "easy": easy, "judge": judge, "judge_easy": judge * easy, "y": y}
    )


def _split_judge_context(table: pd.DataFrame) -> Any:
    """The pilot context that next_items builds for a split-judge table."""
    from slicewise.planning.plan import _context

    return _context(
        table,
        z="level",
        signals=SIGNALS,
        label="y",
        kind="ordinal",
        grid=None,
        bandwidth=None,
        id=None,
        missing="impute",
    )


def _next(table: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    return sw.next_items(
        table,
        z="level",
        signals=SIGNALS,
        label="y",
        kind="ordinal",
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("seed", range(5))
def test_probabilities_never_below_the_uniform_floor(seed: int) -> None:
    rng = np.random.default_rng(seed)
    full = split_judge_pool(rng)
    table = _pilot(full, 100, rng)
    for batch, floor in [(150, 0.3), (300, 0.2)]:
        before = table["pi"].to_numpy() if "pi" in table else np.full(len(table), 100 / 3000)
        unlabeled = table["y"].isna().to_numpy()
        out = _next(table, batch=batch, floor=floor, rng=rng)
        p = 1.0 - (1.0 - out["pi"].to_numpy()) / (1.0 - before)
        assert p[unlabeled].min() >= floor * batch / unlabeled.sum() - 1e-12
        assert p.max() <= 1.0 + 1e-12
        assert abs(p[unlabeled].sum() - batch) < 1e-6  # expected batch size
        assert not out["selected"][~unlabeled].any()  # labeled rows are never selected again
        out.loc[out["selected"], "y"] = full["y"][out["selected"]]
        table = out


def test_uniform_strategy_and_pilot_probability() -> None:
    rng = np.random.default_rng(3)
    full = split_judge_pool(rng, m=2000)
    table = _pilot(full, 100, rng)
    out = _next(table, batch=190, strategy="uniform", rng=1)
    expected = 1.0 - (1.0 - 100 / 2000) * (1.0 - 190 / 1900)
    np.testing.assert_allclose(out["pi"], expected, rtol=0, atol=1e-12)
    assert list(out.columns) == [*full.columns, "selected", "pi"]
    assert out.index.equals(table.index)
    # equal probabilities: the design-weighted profile is the unweighted one
    out.loc[out["selected"], "y"] = full["y"][out["selected"]]
    common = dict(z="level", signals=SIGNALS, label="y", kind="ordinal", method="global_cv")
    plain = sw.profile(out, **common)  # type: ignore[arg-type]
    weighted = sw.profile(out, inclusion="pi", **common)  # type: ignore[arg-type]
    np.testing.assert_allclose(weighted.estimate, plain.estimate, rtol=0, atol=1e-12)


def test_few_labels_fall_back_to_uniform_with_a_warning() -> None:
    rng = np.random.default_rng(4)
    table = _pilot(split_judge_pool(rng, m=1000), 10, rng)
    with pytest.warns(SlicewiseWarning, match="at least 20 labels"):
        out = _next(table, batch=50, rng=0)
    np.testing.assert_allclose(out["pi"], 1 - (1 - 10 / 1000) * (1 - 50 / 990), atol=1e-12)


def test_bad_input() -> None:
    rng = np.random.default_rng(5)
    full = split_judge_pool(rng, m=1000)
    table = _pilot(full, 100, rng)
    out = _next(table, batch=50, rng=0)
    with pytest.raises(ValueError, match="still unlabeled"):
        _next(out, batch=50, rng=0)
    out.loc[out["selected"], "y"] = full["y"][out["selected"]]
    broken = out.assign(pi=out["pi"].where(out.index != 3, 1.5))
    with pytest.raises(ValueError, match="outside \\[0, 1\\]"):
        _next(broken, batch=50)
    with pytest.raises(ValueError, match="'strategy' parameter of next_items"):
        _next(out, strategy="greedy")
    with pytest.raises(ValueError, match="'floor' parameter"):
        _next(out, floor=0.0)
    with pytest.raises(ValueError, match="'batch' parameter"):
        _next(out, batch=0)


Draw = dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]


def _protocol(seed: int, strategy: str) -> Draw:
    """One pilot of 100 and three batches of 150 planned with global_cv, then the final profile
    by global_cv and by auto, both with inclusion='pi': error, coverage and se per level."""
    rng = np.random.default_rng(seed)
    full = split_judge_pool(rng)
    truth = full.groupby("level")["y"].mean().to_numpy()
    table = _pilot(full, 100, rng)
    for _ in range(3):
        table = _next(table, batch=150, strategy=strategy, method="global_cv", rng=rng)
        table.loc[table["selected"], "y"] = full["y"][table["selected"]]
    out: Draw = {}
    for method in ("global_cv", "auto"):
        res = sw.profile(
            table,
            z="level",
            signals=SIGNALS,
            label="y",
            kind="ordinal",
            method=method,
            inclusion="pi",
            rng=seed,
        )
        ci = res.ci()
        out[method] = (res.estimate - truth, (ci.low <= truth) & (truth <= ci.high), res.se)
    return out


def _assert_bias_within_the_cap(errors: np.ndarray, se: np.ndarray) -> None:
    """auto's estimates under the slice objective: every slice here has at least PRECISE_LABELS
    labels, so its estimate moves from the unbiased direct one by at most TRANSLATION of its
    standard error (limited translation, :mod:`slicewise.smoothing.objective`). The mean error
    per slice must stay within that cap plus three Monte-Carlo standard errors (the direct
    estimates' own bias is nil; before the objective this test asked |z| < 3 of the
    guard's direct estimates, and auto's z reached 3.5 and 4.1 under the cap)."""
    from slicewise.smoothing.objective import TRANSLATION

    draws = errors.shape[0]
    mc_se = errors.std(axis=0, ddof=1) / np.sqrt(draws)
    cap = TRANSLATION * se.mean(axis=0)
    assert np.all(np.abs(errors.mean(axis=0)) <= cap + 3.0 * mc_se), (
        errors.mean(axis=0),
        cap,
        mc_se,
    )


def _assert_hull_coverage(count: int, total: int) -> None:
    """Under the slice objective a moved slice's interval contains its direct one widened by the
    shift (:mod:`slicewise.smoothing.objective`): coverage is not below nominal (one-sided
    binomial test) and not beyond 0.985 (588 of 600 and 389 of 400 when the objective came in)."""
    assert 0.93 <= count / total <= 0.985, (count, total)
    assert stats.binomtest(count, total, 0.95, alternative="less").pvalue > 0.01, (count, total)


@pytest.mark.slow
def test_adaptive_multi_batch_protocol_is_unbiased_and_covers() -> None:
    """The protocol ending with global_cv or with the default, auto (issue 14)."""
    from threadpoolctl import threadpool_limits

    draws = 150
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", SlicewiseWarning)
        runs = [_protocol(seed, "adaptive") for seed in range(draws)]
    methods = ("global_cv", "auto")
    for method in methods:
        errors = np.array([r[method][0] for r in runs])
        covered = np.array([r[method][1] for r in runs])
        if method == "auto":
            _assert_bias_within_the_cap(errors, np.array([r[method][2] for r in runs]))
        else:
            z_bias = errors.mean(axis=0) / (errors.std(axis=0, ddof=1) / np.sqrt(draws))
            assert np.all(np.abs(z_bias) < 3.0), (method, z_bias)
        count = int(covered.sum())
        total = covered.size
        if method == "auto":
            _assert_hull_coverage(count, total)
        else:  # nominal by the two-sided binomial test (583 of 600 with item-level batches)
            assert 0.93 <= count / total <= 0.98, (method, count, total)
            assert stats.binomtest(count, total, 0.95).pvalue > 0.01, (method, count, total)
        assert covered.mean(axis=0).min() >= 0.90, (method, covered.mean(axis=0))
    # auto is at least as precise as global_cv here (mean se over draws and levels)
    se = {method: np.mean([r[method][2] for r in runs]) for method in methods}
    assert se["auto"] <= 1.02 * se["global_cv"], se


def test_slice_allocation_equalizes_the_predicted_variances() -> None:
    """Water-filling: the adaptive part of the batch brings the slices it labels to one variance,
    counting the labels already there and the floor's share; a slice already below that variance
    gets nothing."""
    from types import SimpleNamespace

    from slicewise.planning.adaptive import slice_allocation

    sigma2 = np.array([0.25, 0.10, 0.04, 0.20])
    n_eff = np.array([30.0, 30.0, 30.0, 200.0])
    n_pool = np.array([1000.0, 1000.0, 1000.0, 1000.0])
    unlabeled = n_pool - n_eff
    need = SimpleNamespace(sigma=np.sqrt(sigma2), n_labeled=n_eff, n_pool=n_pool, target=0.001)
    batch, floor = 300.0, 0.3
    labels = slice_allocation(need, unlabeled, batch, floor)
    assert abs(labels.sum() - (1 - floor) * batch) < 1e-6
    fixed = floor * batch * unlabeled / unlabeled.sum()
    n_new = n_eff + fixed + labels
    variance = (1 - n_new / n_pool) * sigma2 / n_new
    got = labels > 0
    assert got.tolist() == [True, True, False, False]
    np.testing.assert_allclose(variance[got], variance[got].max(), rtol=1e-6)
    assert np.all(variance[~got] <= variance[got].max() * (1 + 1e-9))
    # a batch larger than every slice's whole need: each gets all of its unlabeled items
    everything = slice_allocation(need, unlabeled, 5000.0, floor)
    np.testing.assert_allclose(everything + floor * unlabeled, unlabeled, rtol=1e-9)


def test_slice_allocation_shrinks_the_slices_variances_toward_the_pooled_one() -> None:
    """prior_labels n0: the allocation is the one for (n_eff sigma^2 + n0 pooled) / (n_eff + n0),
    so a slice whose large variance rests on few labels draws fewer of the batch."""
    from types import SimpleNamespace

    from slicewise.planning.adaptive import slice_allocation

    sigma2 = np.array([0.24, 0.05, 0.05])
    n_eff = np.array([5.0, 60.0, 60.0])
    n_pool = np.full(3, 1000.0)
    unlabeled = n_pool - n_eff
    raw = SimpleNamespace(sigma=np.sqrt(sigma2), n_labeled=n_eff, n_pool=n_pool, target=0.05)
    pooled = float(np.sum(n_eff * sigma2) / n_eff.sum())
    shrunk = (n_eff * sigma2 + 20.0 * pooled) / (n_eff + 20.0)
    by_hand = SimpleNamespace(sigma=np.sqrt(shrunk), n_labeled=n_eff, n_pool=n_pool, target=0.05)
    with_prior = slice_allocation(raw, unlabeled, 200.0, 0.3, prior_labels=20.0)
    np.testing.assert_allclose(with_prior, slice_allocation(by_hand, unlabeled, 200.0, 0.3))
    assert with_prior[0] < slice_allocation(raw, unlabeled, 200.0, 0.3)[0]


def _small_slice_pool(rng: np.random.Generator) -> pd.DataFrame:
    """Three large categories with a near-perfect judge and one of 24 items where the judge is
    noise: water-filling sends that slice most of the batch, past half of its items."""
    sizes = {"a": 900, "b": 900, "c": 900, "tiny": 24}
    group = np.concatenate([np.full(n, g) for g, n in sizes.items()])
    y = (rng.random(group.size) < 0.7).astype(float)
    good = np.where(rng.random(group.size) < 0.97, y, 1 - y)
    judge = np.where(group == "tiny", rng.random(group.size), good)
    return pd.DataFrame({"group": group, "judge": judge, "y": y})


@pytest.mark.parametrize("seed", range(5))
def test_a_slice_past_half_labeled_is_labeled_completely(seed: int) -> None:
    """COMPLETE_SHARE: every item of the small slice gets probability 1 (labeled ones too, so
    its accumulated pi is 1 and its estimate is its exact mean with zero variance); the others
    share the rest of the batch, whose expected size stays ``batch``, with the floor on it."""
    rng = np.random.default_rng(seed)
    full = _small_slice_pool(rng)
    table = _pilot(full, 100, rng)
    common = dict(z="group", signals="judge", label="y", kind="categorical")
    tiny = (full["group"] == "tiny").to_numpy()
    for _ in range(2):
        unlabeled = table["y"].isna().to_numpy()
        before = table["pi"].to_numpy() if "pi" in table else np.full(len(table), 100 / len(full))
        out = sw.next_items(table, batch=120, floor=0.3, rng=rng, **common)  # type: ignore[arg-type]
        np.testing.assert_array_equal(out["pi"][tiny], 1.0)
        assert out["selected"][tiny & unlabeled].all()
        rest = unlabeled & ~tiny
        p = 1.0 - (1.0 - out["pi"].to_numpy()[rest]) / (1.0 - before[rest])
        left = 120 - (unlabeled & tiny).sum()
        assert abs(p.sum() - left) < 1e-6  # the expected batch size stays 120
        assert p.min() >= 0.3 * left / rest.sum() - 1e-12
        out.loc[out["selected"], "y"] = full["y"][out["selected"]]
        table = out
    res = sw.profile(table, inclusion="pi", method="global_cv", **common)  # type: ignore[arg-type]
    frame = res.to_frame().set_index("z")
    assert abs(frame.loc["tiny", "estimate"] - full.loc[tiny, "y"].mean()) < 1e-12
    assert frame.loc["tiny", "se"] == 0.0


def _small_slice_protocol(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Pilot of 100 and three adaptive batches of 120 on the small-slice pool, then global_cv
    with inclusion='pi': error and coverage per group (a, b, c, tiny)."""
    rng = np.random.default_rng(seed)
    full = _small_slice_pool(rng)
    table = _pilot(full, 100, rng)
    common = dict(z="group", signals="judge", label="y", kind="categorical")
    for _ in range(3):
        table = sw.next_items(
            table,
            batch=120,
            method="global_cv",
            rng=rng,
            **common,  # type: ignore[arg-type]
        )
        table.loc[table["selected"], "y"] = full["y"][table["selected"]]
    truth = full.groupby("group")["y"].mean().to_numpy()
    res = sw.profile(table, inclusion="pi", method="global_cv", **common)  # type: ignore[arg-type]
    ci = res.ci()
    tol = 1e-9  # a slice labeled completely: exact mean, zero-width interval
    return res.estimate - truth, (ci.low - tol <= truth) & (truth <= ci.high + tol)


@pytest.mark.slow
def test_small_slice_protocol_covers() -> None:
    """With a small slice the water-filling labels heavily, the protocol's intervals cover at
    every group (before slices were labeled completely, the small slice ended mostly labeled
    under unequal probabilities near 1 and its calibrated variance was often clipped to 0)."""
    from threadpoolctl import threadpool_limits

    draws = 100
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", SlicewiseWarning)
        runs = [_small_slice_protocol(seed) for seed in range(draws)]
    errors = np.array([r[0] for r in runs])
    covered = np.array([r[1] for r in runs])
    count = int(covered.sum())  # 376 of 400 measured (384 before the floor became a bound)
    assert 0.93 <= count / covered.size <= 0.97, count
    assert stats.binomtest(count, covered.size, 0.95).pvalue > 0.01
    assert covered.mean(axis=0).min() >= 0.90, covered.mean(axis=0)
    assert np.abs(errors[:, 3]).max() < 1e-12  # tiny: labeled completely, its exact mean
    # No bias check on a, b, c: on these 100 pools group c's mean error is 0.0055 (3.6 MC se)
    # here, 0.0049 (3.3) with the completion switched off and 0.0030 (2.1) under uniform
    # labeling of the same pools and pilots (docs/results/adaptive.md): not from this rule, and
    # not settled in this round.


def _auto_protocol(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The split-judge protocol with the defaults: batches planned by auto, final profile by
    auto with inclusion='pi'; error and coverage per level."""
    rng = np.random.default_rng(seed)
    full = split_judge_pool(rng)
    truth = full.groupby("level")["y"].mean().to_numpy()
    table = _pilot(full, 100, rng)
    for _ in range(3):
        table = _next(table, batch=150, rng=rng)
        table.loc[table["selected"], "y"] = full["y"][table["selected"]]
    res = sw.profile(
        table, z="level", signals=SIGNALS, label="y", kind="ordinal", inclusion="pi", rng=seed
    )
    ci = res.ci()
    return res.estimate - truth, (ci.low <= truth) & (truth <= ci.high), res.se


@pytest.mark.slow
def test_default_auto_protocol_is_unbiased_and_covers() -> None:
    """next_items and profile with their default method, auto (issue 14)."""
    from threadpoolctl import threadpool_limits

    draws = 100
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", SlicewiseWarning)
        runs = [_auto_protocol(seed) for seed in range(draws)]
    errors = np.array([r[0] for r in runs])
    covered = np.array([r[1] for r in runs])
    _assert_bias_within_the_cap(errors, np.array([r[2] for r in runs]))
    count = int(covered.sum())  # 389 of 400 under the slice objective (377 with the guard)
    _assert_hull_coverage(count, covered.size)
    assert covered.mean(axis=0).min() >= 0.88, covered.mean(axis=0)


def test_floored_probabilities_is_the_bounded_neyman_optimum() -> None:
    """Within a slice, p = clip(c sd, low, 1) with the slice's expected labels fixed minimises
    sum sd^2 / p under low <= p <= 1: checked against scipy's SLSQP on the same problem, and
    the rows outside every slice get the floor."""
    from scipy.optimize import minimize

    from slicewise.planning.adaptive import floored_probabilities

    rng = np.random.default_rng(7)
    sd = np.concatenate([rng.uniform(0.02, 0.5, 40), [0.5, 0.5], rng.uniform(0.1, 0.5, 30)])
    slice_of = np.concatenate([np.zeros(42, dtype=int), np.ones(30, dtype=int)])
    slice_of[-3:] = -1  # outside every slice
    open_ = np.ones(sd.size, dtype=bool)
    open_[[0, 5]] = False  # labeled rows get what they would get if open
    target, low = np.array([25.0, 3.0]), 0.05
    p = floored_probabilities(sd, slice_of, open_, target, low)
    np.testing.assert_allclose(p[slice_of == -1], low)
    for k in range(2):
        mine = (slice_of == k) & open_
        assert abs(p[mine].sum() - target[k]) < 1e-6
        s2 = sd[mine] ** 2
        best = minimize(
            lambda q, s2=s2: float(np.sum(s2 / q)),
            np.full(mine.sum(), target[k] / mine.sum()),
            jac=lambda q, s2=s2: -s2 / q**2,
            bounds=[(low, 1.0)] * int(mine.sum()),
            constraints=[{"type": "eq", "fun": lambda q, t=target[k]: q.sum() - t}],
            method="SLSQP",
            options={"ftol": 1e-12, "maxiter": 500},
        )
        assert best.success
        np.testing.assert_allclose(p[mine], best.x, atol=2e-3)
        assert np.sum(s2 / p[mine]) <= best.fun * (1 + 1e-6)
    assert p[slice_of == 0].max() == 1.0  # 25 of its 40 open rows: the cap binds
    assert p[slice_of == 1].min() == low  # 3 of 27: the floor binds
    assert p.min() >= low


def test_residual_scale_recovers_the_split_judges_residual_sd() -> None:
    """Known truth: on 'easy' items the judge is right 98% of the time, so Y's sd given the
    signals is about sqrt(0.98 x 0.02) = 0.14 (above the clip at 0.1);
    on the others Y is Bernoulli(theta_level), sd sqrt(theta (1 - theta)) >= 0.40. With 1,500
    labels the predicted scale must put them on the right sides of 0.3."""
    from slicewise.planning.residual import residual_model, row_folds

    rng = np.random.default_rng(11)
    full = split_judge_pool(rng, m=3000)
    table = _pilot(full, 1500, rng)
    pilot = _split_judge_context(table)
    sd = residual_model(pilot, 1.0, row_folds(len(table))).scale[0]  # fitted on every label
    easy = full["easy"].to_numpy()[pilot.items.input_rows(np.arange(len(full)))] == 1
    assert np.median(sd[easy]) < 0.2
    assert np.median(sd[~easy]) > 0.4


def test_the_residual_model_of_a_labeled_items_fold_does_not_see_its_own_label() -> None:
    """A labeled item's later probabilities enter its pi; if they grew with its own surprising
    label, surprising labels would be down-weighted (module notes, *Own labels*). Its
    probabilities come from the residual model fitted without its fold: flipping its label
    leaves that model's scale of every item as it was, and moves the model fitted on every
    label (which the unlabeled items' probabilities use)."""
    from slicewise.planning.residual import RESIDUAL_FOLDS, residual_model, row_folds

    rng = np.random.default_rng(5)
    full = split_judge_pool(rng, m=1500)
    table = _pilot(full, 200, rng)

    fold = row_folds(len(table))

    def scales_by_row(frame: pd.DataFrame) -> np.ndarray:
        pilot = _split_judge_context(frame)
        out = np.empty((1 + RESIDUAL_FOLDS, len(frame)))
        scale = residual_model(pilot, 1.0, fold).scale
        out[:, pilot.items.input_rows(np.arange(len(frame)))] = scale
        return out  # in input-row order (the canonical order sorts ties by the label)

    sd = scales_by_row(table)
    for row in np.flatnonzero(table["y"].notna().to_numpy())[::40]:
        flipped = table.copy()
        flipped.iloc[row, flipped.columns.get_loc("y")] = 1.0 - table["y"].iloc[row]
        again = scales_by_row(flipped)
        # the same fit up to the solver's tolerance (the rows come in another order); before
        # the change the item's scale moved by 1e-2
        np.testing.assert_allclose(again[1 + fold[row]], sd[1 + fold[row]], atol=1e-6)
        assert np.abs(again[0] - sd[0]).max() > 1e-3


def test_next_items_gives_a_labeled_item_the_probability_of_its_folds_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wiring of the test above: with the slices' residual variances held fixed (the plan
    of the first call), flipping a labeled item's label leaves its pi as it was up to the
    solver's tolerance, and moves the unlabeled items' pi."""
    import slicewise.planning.batch as batch

    rng = np.random.default_rng(8)
    full = split_judge_pool(rng, m=1500)
    first = _next(_pilot(full, 200, rng), batch=100, rng=1)
    first.loc[first["selected"], "y"] = full.loc[first["selected"], "y"]
    plans: list[object] = []
    real_plan = batch.plan

    def first_plan(*args: object, **kwargs: object) -> object:
        if not plans:
            plans.append(real_plan(*args, **kwargs))  # type: ignore[arg-type]
        return plans[0]

    monkeypatch.setattr(batch, "plan", first_plan)
    pi = _next(first, batch=100, rng=2)["pi"].to_numpy()
    unlabeled = first["y"].isna().to_numpy()
    for row in np.flatnonzero(~unlabeled)[::60]:
        flipped = first.copy()
        flipped.iloc[row, flipped.columns.get_loc("y")] = 1.0 - first["y"].iloc[row]
        again = _next(flipped, batch=100, rng=2)["pi"].to_numpy()
        assert again[row] == pytest.approx(pi[row], rel=1e-5)
        assert np.abs(again[unlabeled] - pi[unlabeled]).max() > 1e-4


@pytest.mark.parametrize("seed", range(3))
def test_continuous_profile_keeps_the_floor_and_the_batch_size(seed: int) -> None:
    """A continuous profile (the kernel-weight basis of the residual model): probabilities at
    least the floor, expected batch size exact, across two batches."""
    from slicewise.studies.paper_designs import specialist

    rng = np.random.default_rng(seed)
    design = specialist(1500)
    full = design.draw(rng)
    table = _pilot(full, 100, rng)
    common = dict(
        z="z",
        signals=list(design.signal_names),
        label="y",
        kind="continuous",
        grid=[0.1, 0.3, 0.5, 0.7, 0.9],
        bandwidth=0.08,
    )
    for _ in range(2):
        before = table["pi"].to_numpy() if "pi" in table else np.full(len(table), 100 / 1500)
        unlabeled = table["y"].isna().to_numpy()
        out = sw.next_items(table, batch=120, rng=rng, **common)  # type: ignore[arg-type]
        p = 1.0 - (1.0 - out["pi"].to_numpy()) / (1.0 - before)
        assert p[unlabeled].min() >= 0.3 * 120 / unlabeled.sum() - 1e-12
        assert abs(p[unlabeled].sum() - 120) < 1e-6
        assert p[unlabeled].max() > 2 * p[unlabeled].min()  # adaptive, not uniform
        out.loc[out["selected"], "y"] = full["y"][out["selected"]]
        table = out
