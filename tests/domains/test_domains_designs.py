"""Samplers and allocations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.designs import allocate, poisson_probabilities


def test_allocations_add_up_and_respect_caps() -> None:
    sizes = np.array([5, 50, 500, 5000])
    for allocation in ("proportional", "equal"):
        n = allocate(sizes, 600, allocation=allocation)  # type: ignore[arg-type]
        assert n.sum() == 600
        assert np.all(n <= sizes)
        assert np.all(n >= 2)
    np.testing.assert_array_equal(allocate(sizes, 600, allocation="equal"), [5, 50, 273, 272])
    prop = allocate(sizes, 555, allocation="proportional")
    np.testing.assert_array_equal(prop, [2, 5, 50, 498])
    neyman = allocate(np.array([100, 100]), 40, allocation="neyman", sd=np.array([0.1, 0.3]))
    np.testing.assert_array_equal(neyman, [10, 30])
    user = allocate(np.array([100, 100, 100]), 30, allocation="user", user=np.array([1, 1, 4]))
    np.testing.assert_array_equal(user, [5, 5, 20])


def test_poisson_probabilities_sum_to_budget_and_cap_at_one() -> None:
    size = np.array([100.0, 1, 1, 1, 1, 1, 1, 1])
    pi = poisson_probabilities(size, 4.0)
    assert pi.sum() == pytest.approx(4.0)
    assert pi[0] == 1.0
    assert np.allclose(pi[1:], 3.0 / 7.0)


def test_sample_records_inclusion_probabilities() -> None:
    frame = pd.DataFrame({"g": np.repeat(["a", "b", "c"], [100, 300, 600]), "y": 1.0})
    drawn = sw.sample(frame, strata="g", fraction=0.1, rng=0)
    assert drawn.n_sampled == 100
    np.testing.assert_array_equal(drawn.sample_sizes, [10, 30, 60])
    np.testing.assert_allclose(drawn.inclusion, 0.1)
    masked = drawn.apply(frame, label="y")
    assert masked["y"].notna().sum() == 100
    assert set(masked.columns) >= {"pi", "stratum"}
    assert drawn.to_frame()["n_sampled"].tolist() == [10, 30, 60]
    srs = sw.sample(frame, design="srs", budget=50, rng=1)
    assert srs.n_sampled == 50
    assert np.allclose(srs.inclusion, 0.05)
    pois = sw.sample(
        frame.assign(s=np.linspace(1, 2, 1000)), design="poisson", budget=80, size="s", rng=2
    )
    assert pois.inclusion.sum() == pytest.approx(80)
    assert not pois.inclusion.flags.writeable


def test_same_seed_same_sample() -> None:
    frame = pd.DataFrame({"g": np.repeat(["a", "b"], 50)})
    a = sw.sample(frame, strata="g", budget=20, rng=3).selected
    b = sw.sample(frame, strata="g", budget=20, rng=3).selected
    np.testing.assert_array_equal(a, b)
