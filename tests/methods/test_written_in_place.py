"""The learned pass writes the fold models' predictions and the prediction's columns straight
into the block buffer of the pool products; that gives the sums and predictions of the path
that returns them."""

from __future__ import annotations

import numpy as np

from slicewise.estimators.learner_design import design_basis, learner_design, predict_factored
from slicewise.estimators.predictors import LogisticModel
from slicewise.locality.weights import BlockKernel
from slicewise.moments.pool import scales_sums_with


def test_predictions_written_into_a_column_major_block_are_the_returned_ones() -> None:
    rng = np.random.default_rng(31)
    m, k = 900, 3
    z = rng.normal(size=(m, 1))
    features = rng.normal(size=(m, k))
    basis = design_basis(z, "continuous", "logistic")
    width = learner_design(z[:2], "continuous", features[:2], "logistic", basis).shape[1]
    models = [LogisticModel(coef=rng.normal(0, 0.5, width), intercept=0.1 * f) for f in range(4)]
    block = np.full((m, 2 + len(models)), np.nan, order="F")
    written = predict_factored(models, z, features, "logistic", basis, out=block[:, 2:].T)
    returned = predict_factored(models, z, features, "logistic", basis)
    assert written is not None
    assert returned is not None
    np.testing.assert_array_equal(block[:, 2:].T, returned)
    assert np.isnan(block[:, :2]).all()  # nothing else written


def test_pool_sums_with_the_columns_filled_in_place_are_those_of_the_returned_columns() -> None:
    rng = np.random.default_rng(32)
    m, p, width = 5000, 3, 4
    z = np.sort(rng.normal(size=m))[:, None]
    x = rng.normal(size=(m, p))
    extra = rng.normal(size=(m, width))
    grid = np.linspace(-1.5, 1.5, 7)[:, None]
    kernels = [BlockKernel(z, grid, np.array([0.3])), BlockKernel(z, grid, np.array([0.6]))]

    def columns(start: int, stop: int) -> np.ndarray:
        return extra[start:stop]

    def fill(start: int, stop: int, out: np.ndarray) -> None:
        out[...] = extra[start:stop]

    returned = scales_sums_with(kernels, x, columns, width, shared=2, block_rows=1024)
    filled = scales_sums_with(
        kernels,
        x,
        lambda a, b: np.zeros((b - a, width)),
        width,
        shared=2,
        block_rows=1024,
        fill=fill,
    )
    for (sums_a, extra_a), (sums_b, extra_b) in zip(returned, filled, strict=True):
        np.testing.assert_array_equal(extra_a, extra_b)
        np.testing.assert_array_equal(sums_a.second, sums_b.second)
        np.testing.assert_array_equal(sums_a.mass, sums_b.mass)
