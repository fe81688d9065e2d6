"""Never worse than uniform (issue 30): the design variance estimated from the labels so far is
unbiased, and a batch moves away from uniform probabilities only as far as the estimated gain is
significant (known truth: a residual model turned upside down must leave the batch uniform)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from benchmarks.bench_adaptive import judge_quality, with_pilot

COMMON = dict(
    z="z",
    signals=["judge", "confidence"],
    label="y",
    kind="continuous",
    grid=[0.1, 0.3, 0.5, 0.7, 0.9],
    bandwidth=0.1,
    uncertainty=["confidence"],
)


def test_the_design_variance_estimate_is_unbiased() -> None:
    """Known truth: for a pool with known residuals, three slices and Poisson labels with
    probabilities pi^prev, sum_L t_ig (1 / pi_i - 1) estimates the design variance
    sum_T kappa_ig^2 (e_i - e_g)^2 (1 / pi_i - 1) that a batch with probabilities pi would give;
    2,000 draws, the mean within 3 Monte-Carlo se and 2% of the truth (the centering at the
    estimated slice mean is a ratio, biased by O(1 / n))."""
    from slicewise.planning.safeguard import variance_terms

    rng = np.random.default_rng(3)
    m = 3000
    slice_of = rng.integers(0, 3, m)
    kernel = np.eye(3)[slice_of]
    resid = rng.normal(0, 1, m) * np.array([0.2, 0.5, 1.0])[slice_of] + 0.3 * slice_of
    prev = rng.uniform(0.05, 0.3, m)
    new = 1.0 - (1.0 - prev) * (1.0 - rng.uniform(0.0, 0.3, m))
    mass = kernel.sum(axis=0)
    centred = resid - (kernel.T @ resid / mass)[slice_of]
    truth = ((kernel / mass) ** 2 * (centred**2 * (1.0 / new - 1.0))[:, None]).sum(axis=0)
    draws = []
    for _ in range(2000):
        lab = rng.random(m) < prev
        terms = variance_terms(kernel[lab], mass, resid[lab], prev[lab])
        draws.append((1.0 / new[lab] - 1.0) @ terms)
    estimates = np.array(draws)
    mean, se = estimates.mean(axis=0), estimates.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(mean - truth) < 3 * se + 0.02 * truth), (mean, truth, se)


def test_choose_strength_takes_a_clear_gain_and_refuses_a_loss() -> None:
    """Synthetic terms: a proposal that halves every labeled item's 1 / pi - 1 is taken in
    full; one that doubles it is refused (uniform), with the ratios and bounds reported."""
    from slicewise.planning.safeguard import STRENGTHS, choose_strength

    rng = np.random.default_rng(0)
    n, g = 400, 4
    terms = rng.exponential(1.0, (n, g)) * (rng.random((n, g)) < 0.5)
    uniform = np.full(n, 4.0)
    level, base = np.ones(g), terms.T @ uniform
    for factor, expected in ((0.5, 1.0), (2.0, 0.0)):
        inverse = np.array([uniform * (1.0 + t * (factor - 1.0)) for t in STRENGTHS])
        model = np.outer(1.0 + np.array(STRENGTHS) * (factor - 1.0), base)
        choice = choose_strength(terms, inverse, level, model)
        assert choice.strength == expected
        assert choice.bound[0] == 1.0
    assert choice.worst[-1] == pytest.approx(2.0)


def _first_batch(seed: int, monkeypatch: pytest.MonkeyPatch | None) -> tuple[np.ndarray, Any]:
    """next_items on the judge-quality design after a uniform pilot of 300, with the residual
    model's scale turned upside down when ``monkeypatch`` is given."""
    import slicewise.planning.batch as batch

    if monkeypatch is not None:
        real = batch.residual_model

        def upside_down(*args: Any, **kwargs: Any) -> Any:
            model = real(*args, **kwargs)
            return replace(model, scale=0.6 - model.scale)  # sd 0.1 <-> 0.5

        monkeypatch.setattr(batch, "residual_model", upside_down)
    rng = np.random.default_rng(seed)
    table = with_pilot(judge_quality(rng, 2000), 300, rng)
    out = sw.next_items(table, batch=300, rng=0, **COMMON)  # type: ignore[arg-type]
    p = 1.0 - (1.0 - out["pi"].to_numpy()) / (1.0 - 300 / 2000)
    return p, out


@pytest.mark.parametrize("seed", range(3))
def test_a_wrong_residual_model_leaves_the_batch_uniform(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Known truth: with the residual scale turned upside down, the proposal sends the batch
    to the items whose label the judge already gives (residual sd 0.14) and away from the
    coin-flip half (0.43-0.5): its design variance is larger than uniform labeling's. The
    safeguard sees it on the labels' out-of-fold residuals and keeps every probability at
    batch / |U|; with the model as fitted it moves toward the proposal. Before issue 30 the
    proposal was taken as it was, whatever it would cost."""
    p, out = _first_batch(seed, monkeypatch)
    unlabeled = out["y"].isna().to_numpy()
    np.testing.assert_allclose(p[unlabeled], 300 / unlabeled.sum(), rtol=1e-12)
    design = out.attrs["design"]
    assert design["strength"] == 0.0
    assert design["worst"][-1] > 1.0 or design["mean"][-1] > 1.0
    assert "this batch is uniform" in out.attrs["notes"][-1]
    monkeypatch.undo()
    right, fitted = _first_batch(seed, None)
    assert fitted.attrs["design"]["strength"] > 0.0
    assert right[unlabeled].max() > 2.0 * right[unlabeled].min()


def test_uniform_strategy_says_nothing_about_a_design() -> None:
    frame = pd.DataFrame({"g": [0, 1] * 50, "s": np.arange(100.0), "y": [0.0, 1.0] * 50})
    frame.loc[30:, "y"] = np.nan
    out = sw.next_items(frame, z="g", signals="s", label="y", batch=10, strategy="uniform", rng=0)
    assert out.attrs["design"] == {}
    assert out.attrs["notes"] == ()
