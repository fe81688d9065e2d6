"""The logistic predictor's probabilities, one model at a time and for all fold models at once."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from slicewise.estimators.predictors import LogisticModel, fit_logistic, predict_all


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, 5))
    y = (rng.random(400) < 1 / (1 + np.exp(-(x @ [1.5, -1, 0.5, 0, 2])))).astype(float)
    return x, y


def test_probabilities_match_scikit_learn() -> None:
    x, y = _data()
    model = fit_logistic(x, y, c=1.0)
    # binary labels: the duplicated-row trick keeps each row once, so this is the same fit
    reference = LogisticRegression(C=1.0, max_iter=1000).fit(x, y)
    np.testing.assert_allclose(model.coef, reference.coef_[0], rtol=1e-12)
    np.testing.assert_allclose(model.predict(x), reference.predict_proba(x)[:, 1], atol=1e-15)


def test_extreme_linear_predictors_stay_in_the_unit_interval() -> None:
    model = LogisticModel(coef=np.array([1.0]), intercept=0.0)
    p = model.predict(np.array([[-800.0], [-40.0], [0.0], [40.0], [800.0]]))
    np.testing.assert_array_equal(p[[0, 2, 4]], [0.0, 0.5, 1.0])
    assert 0.0 < p[1] < 1e-17  # expit(-40) = 4.2e-18: no underflow to 0 before it must


@pytest.mark.parametrize("with_constant", [False, True])
def test_all_fold_models_at_once_equal_one_by_one(with_constant: bool) -> None:
    x, y = _data(1)
    folds = np.arange(y.size) % 5
    models = [fit_logistic(x[folds != k], y[folds != k], c=1.0) for k in range(5)]
    if with_constant:  # a fold whose labels are all 1 predicts a constant
        models[2] = fit_logistic(x[:3], np.ones(3), c=1.0)
        assert models[2].constant == 1.0
    together = predict_all(models, x)
    assert together.shape == (5, x.shape[0])
    np.testing.assert_allclose(together, np.stack([m.predict(x) for m in models]), atol=1e-14)
