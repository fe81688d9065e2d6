"""Fay-Herriot smoothing: shrinkage limits, GREG with a useless auxiliary, exactness of the
Bayesian integration against a brute-force dense grid, and the multi-component MSE."""

from __future__ import annotations

import numpy as np
import pytest
from _domain_helpers import stratified_sample
from scipy import special

from slicewise.estimators.survey.greg import greg
from slicewise.estimators.survey.ht import horvitz_thompson
from slicewise.smoothing.bayes import bayes_fit
from slicewise.smoothing.fay_herriot import eblup
from slicewise.smoothing.linear_mixed import AreaModel, indicator_levels


def _model(y: np.ndarray, psi: np.ndarray, x: np.ndarray, levels: list[np.ndarray]) -> AreaModel:
    names = tuple(f"l{i}" for i in range(len(levels)))
    if levels:
        z, col = indicator_levels(levels, list(names))
    else:
        z, col = np.zeros((y.size, 0)), np.zeros(0, dtype=np.intp)
    return AreaModel(y=y, psi=psi, x=x, z=z, column_level=col, level_names=names)


def test_shrinkage_weight_tends_to_one_as_the_domain_grows() -> None:
    rng = np.random.default_rng(3)
    d = 30
    n_d = np.geomspace(2, 1e6, d)
    psi = 0.25 / n_d
    theta = 0.5 + rng.normal(0, 0.05, d)
    y = theta + rng.normal(0, np.sqrt(psi))
    model = _model(y, psi, np.ones((d, 1)), [])
    for weight in (eblup(model).weight, bayes_fit(model).weight):
        assert np.all(np.diff(weight) > -1e-9)
        assert weight[-1] > 0.999
        assert weight[0] < 0.5


def test_useless_auxiliary_leaves_greg_close_to_ht() -> None:
    rng = np.random.default_rng(4)
    domain = np.repeat(np.arange(10), 400).astype(np.intp)
    y = (rng.random(domain.size) < 0.3 + 0.04 * domain).astype(float)
    noise = rng.normal(size=(domain.size, 1))
    selected = np.zeros(domain.size, dtype=bool)
    for d in range(10):
        selected[rng.choice(np.flatnonzero(domain == d), 60, replace=False)] = True
    sample = stratified_sample(domain, y, selected)
    ht = horvitz_thompson(sample)
    fit = greg(sample, noise)
    assert abs(fit.params["slope"][0]) < 0.05
    assert np.max(np.abs(fit.estimate - ht.estimate) / np.sqrt(ht.variance)) < 0.15
    assert np.all(fit.variance < 1.05 * ht.variance)


def _dense_log_post(model: AreaModel, s: np.ndarray, scale: float) -> float:
    """REML + half-Cauchy log posterior of log sigma, by dense linear algebra."""
    sigma2 = np.exp(2 * s)
    v = np.diag(model.psi + sigma2[-1])
    for level in range(model.n_levels):
        zl = model.level_matrix(level)
        v = v + sigma2[level] * zl @ zl.T
    vinv = np.linalg.inv(v)
    xtvx = model.x.T @ vinv @ model.x
    proj = vinv - vinv @ model.x @ np.linalg.solve(xtvx, model.x.T @ vinv)
    loglik = -0.5 * (
        np.linalg.slogdet(v)[1] + np.linalg.slogdet(xtvx)[1] + model.y @ proj @ model.y
    )
    sig = np.exp(s)
    return float(loglik + np.sum(-np.log1p((sig / scale) ** 2) + s))


def _dense_mean(model: AreaModel, s: np.ndarray) -> np.ndarray:
    sigma2 = np.exp(2 * s)
    v = np.diag(model.psi + sigma2[-1])
    for level in range(model.n_levels):
        zl = model.level_matrix(level)
        v = v + sigma2[level] * zl @ zl.T
    vinv = np.linalg.inv(v)
    xtvx = model.x.T @ vinv @ model.x
    proj = vinv - vinv @ model.x @ np.linalg.solve(xtvx, model.x.T @ vinv)
    out: np.ndarray = model.y - model.psi * (proj @ model.y)
    return out


@pytest.mark.parametrize("n_levels", [0, 1])
def test_bayes_integration_matches_brute_force(n_levels: int) -> None:
    rng = np.random.default_rng(5 + n_levels)
    d = 24
    group = np.repeat(np.arange(6), 4)
    psi = rng.uniform(0.002, 0.01, d)
    theta = 0.5 + 0.08 * rng.normal(size=6)[group] * n_levels + rng.normal(0, 0.05, d)
    y = theta + rng.normal(0, np.sqrt(psi))
    x = np.column_stack([np.ones(d), rng.normal(size=d)])
    model = _model(y, psi, x, [group] if n_levels else [])
    fit = bayes_fit(model)
    # Brute force: a fine regular grid over log sigma, dense algebra at every node.
    axes = [np.linspace(-12.0, 0.5, 161 if n_levels else 2001)] * (n_levels + 1)
    nodes = np.array(np.meshgrid(*axes, indexing="ij")).reshape(n_levels + 1, -1).T
    logp = np.array([_dense_log_post(model, s, 0.25) for s in nodes])
    w = special.softmax(logp)
    keep = w > 1e-10 * w.max()
    mean = w[keep] @ np.array([_dense_mean(model, s) for s in nodes[keep]]) / w[keep].sum()
    np.testing.assert_allclose(fit.estimate, mean, atol=2e-4)
    assert fit.dropped_mass < 1e-3


def test_multi_component_mse_reduces_to_prasad_rao() -> None:
    rng = np.random.default_rng(8)
    d = 30
    psi = rng.uniform(0.002, 0.02, d)
    y = 0.5 + rng.normal(0, 0.1, d) + rng.normal(0, np.sqrt(psi))
    fit = eblup(_model(y, psi, np.ones((d, 1)), []))
    s2 = fit.sigma2[0]
    closed = psi**2 / (s2 + psi) ** 3 * 2.0 / np.sum((s2 + psi) ** -2.0)
    np.testing.assert_allclose(fit.g3, closed, rtol=1e-8)


def test_taxonomy_effects_are_recovered() -> None:
    rng = np.random.default_rng(9)
    a = np.repeat(np.arange(8), 10)
    b = np.tile(np.arange(10), 8)
    psi = np.full(80, 0.004)
    theta = 0.5 + rng.normal(0, 0.1, 8)[a] + rng.normal(0, 0.05, 10)[b] + rng.normal(0, 0.01, 80)
    y = theta + rng.normal(0, np.sqrt(psi))
    model = _model(y, psi, np.ones((80, 1)), [a, b])
    fit = bayes_fit(model)
    rmse_direct = np.sqrt(np.mean((y - theta) ** 2))
    assert np.sqrt(np.mean((fit.estimate - theta) ** 2)) < 0.6 * rmse_direct
    assert 0.04 < fit.sigma_mean[0] < 0.25
