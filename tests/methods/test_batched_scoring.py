"""auto's batched candidate scoring is the one-candidate-at-a-time arithmetic: the item sums of
several candidates made together equal those of cross_validated's terms, and a feature set's
labeled fold sums taken from a wider set's equal its own."""

from __future__ import annotations

import numpy as np
import pytest

import sim_frames
from slicewise.estimators.centered import CoefficientFit
from slicewise.inference.cv_batch import FoldOrder, item_sums
from slicewise.inference.cv_variance import (
    cross_validated,
    fold_parts,
    term_factor,
)
from slicewise.moments.row_sums import LabeledRowSums
from slicewise.moments.sums import LabeledMoments


@pytest.mark.parametrize("with_design", [False, True])
@pytest.mark.parametrize("p", [0, 1, 3])
def test_item_sums_of_a_batch_are_those_of_each_candidates_terms(with_design: bool, p: int) -> None:
    rng = np.random.default_rng(21)
    n, g, count = 400, 6, 4
    weights, fraction, design = sim_frames.kernel_weights(rng, n, g, with_design=with_design)
    y, x = rng.random(n), rng.normal(size=(n, p))
    fold = rng.integers(0, 5, n)
    parts = fold_parts(fold)
    factor = term_factor(weights, fraction, design=design)
    point = rng.uniform(0.5, 2.0, g)
    coefs = [[rng.normal(size=(g, p)) for _ in parts] for _ in range(count)]
    coefs[2][3][1] = np.nan  # a coefficient undefined at one grid point in one fold
    folds = FoldOrder.of(weights, y, parts, factor, design=design)
    sums, finite = item_sums(folds, x, coefs, point)
    assert sums.shape == (count, n)
    assert finite.shape == (count, g)
    for c in range(count):
        by_train = {train.tobytes(): coefs[c][k] for k, (train, _) in enumerate(parts)}

        def rule(rows: np.ndarray, by_train: dict[bytes, np.ndarray] = by_train) -> CoefficientFit:
            return CoefficientFit.fixed(by_train[rows.tobytes()])

        terms = cross_validated(
            weights, fraction, y, x, fold, rule, design=design, factor=factor, parts=parts
        ).terms
        mask = np.isfinite(terms.sum(axis=0))
        np.testing.assert_array_equal(finite[c], mask)
        np.testing.assert_allclose(sums[c], terms[:, mask] @ point[mask], rtol=1e-12)
    assert p == 0 or not finite[2, 1]  # the undefined coefficient leaves out its grid point


@pytest.mark.parametrize("same", [True, False])
@pytest.mark.parametrize("design", [False, True])
@pytest.mark.parametrize("columns", [[0], [1, 2], [0, 2], [0, 1, 2]])
def test_fold_sums_selected_from_a_wider_feature_set_are_its_own(
    same: bool, design: bool, columns: list[int]
) -> None:
    rng = np.random.default_rng(22)
    n, g = 300, 5
    k = np.exp(-0.5 * rng.normal(size=(n, g)) ** 2)
    kb = k if same else np.exp(-0.1 * rng.normal(size=(n, g)) ** 2)
    y, x = rng.random(n), rng.normal(size=(n, 3))
    pi = rng.uniform(0.2, 1.0, n) if design else None
    wide = LabeledRowSums.of(k, kb, y, x, pi=pi)
    own = LabeledRowSums.of(k, kb, y, x[:, columns], pi=pi)
    picked = wide.select(columns)
    assert picked.width == own.width == 2 + len(columns)
    np.testing.assert_allclose(picked.products, own.products, rtol=1e-12, atol=1e-15)
    if design:
        assert picked.design_products is not None
        assert own.design_products is not None
        np.testing.assert_allclose(picked.design_products, own.design_products, rtol=1e-12)
    got, want = LabeledMoments.from_row_sums(picked), LabeledMoments.from_row_sums(own)
    for name in ("mean", "second", "second_sq", "mean_b", "second_b", "sum_w2", "sum_wb2"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-12)
