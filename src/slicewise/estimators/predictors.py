"""Logistic predictors of the gold label, fitted on the labeled set (LACE paper, Section 5.2).

Every prediction-based method of the paper's comparison (the plug-ins, the augmented plug-in,
scalar prediction CV, PPCI and StratPPI) uses an L2-penalised logistic regression with
standardised covariates and inverse penalty C (default 1), fitted on L only. Prediction-based
rectifiers need predictions that are honest on the labeled items, so they are *cross-fitted*: L is
split at random into two folds, each labeled item gets the prediction of the model fitted on the
other fold, and every other pool item gets the prediction of the model refitted on all of L.

Gold labels may be fractional (scores in [0, 1]). They are fitted by the duplicated-row trick: each
labeled item enters twice, as class 1 with sample weight y and as class 0 with weight 1 - y, so the
weighted log-likelihood is the fractional cross-entropy
sum_i {y_i log p_i + (1 - y_i) log(1 - p_i)}; for binary labels this is the ordinary fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray, IntArray, Kind

#: Iteration cap of the lbfgs solver (the problems are small and smooth; 100 is sometimes short).
MAX_ITER = 1000
#: Number of cross-fitting folds of L (the paper uses two).
CROSS_FIT_FOLDS = 2


def standardize_columns(x: FloatArray) -> FloatArray:
    """Standardise every column over the pool: (x - mean_T) / sd_T; a constant column becomes 0.

    Parameters
    ----------
    x : ndarray of shape (M, p)

    Returns
    -------
    ndarray of shape (M, p)
    """
    if x.shape[1] == 0:
        return np.zeros_like(x)
    mean = x.mean(axis=0)
    sd = x.std(axis=0)
    scale = np.where(sd > 0, sd, 1.0)
    return np.asarray((x - mean) / scale, dtype=np.float64)


def profile_design(z: FloatArray, kind: Kind) -> FloatArray:
    """The profile covariate as logistic-regression columns.

    Continuous and ordinal profiles enter as their numeric values (q columns); a categorical
    profile enters as one indicator column per category present in the pool (one-hot).

    Parameters
    ----------
    z : ndarray of shape (M, q)
        Profile values (integer codes for categorical profiles).
    kind : {'continuous', 'ordinal', 'categorical'}

    Returns
    -------
    ndarray of shape (M, q) or (M, number of categories)
    """
    if kind != "categorical":
        return np.asarray(z, dtype=np.float64)
    codes = z[:, 0].astype(np.intp)
    present = np.unique(codes)
    return np.asarray(codes[:, None] == present[None, :], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class LogisticModel:
    """A fitted logistic predictor (or a constant when the training labels carry no contrast).

    Attributes
    ----------
    coef : ndarray of shape (p,)
    intercept : float
    constant : float or None
        When not None, the model predicts this value everywhere (the training labels were all 0,
        all 1, or absent).
    """

    coef: FloatArray
    intercept: float
    constant: float | None = None

    def predict(self, x: FloatArray) -> FloatArray:
        """Predicted probabilities expit(intercept + x' coef), shape (rows of x,)."""
        if self.constant is not None:
            return np.full(x.shape[0], self.constant)
        from scipy.special import expit  # 7x faster than exp(-logaddexp(0, -eta)), as exact

        return np.asarray(expit(self.intercept + x @ self.coef), dtype=np.float64)


def predict_all(models: Sequence[Any], x: FloatArray) -> FloatArray:
    """Every model's predictions for the rows ``x``, shape (len(models), rows of x).

    When every model is a non-constant :class:`LogisticModel` (the cross-fitted fold models of
    the logistic learner), one matrix product with their stacked coefficients replaces a
    matrix-vector product per model; other models predict one by one.
    """
    logistic = [m for m in models if isinstance(m, LogisticModel) and m.constant is None]
    if len(logistic) < 2 or len(logistic) != len(models):
        return np.stack([m.predict(x) for m in models])
    from scipy.special import expit

    coef = np.column_stack([m.coef for m in logistic])
    eta = np.asarray(x @ coef, dtype=np.float64)  # (rows, F), made once and mapped in place
    eta += np.array([m.intercept for m in logistic])
    expit(eta, out=eta)
    return eta.T


def fit_logistic(x: FloatArray, y: FloatArray, *, c: float) -> LogisticModel:
    """L2-penalised logistic regression with fractional labels (duplicated-row trick).

    Parameters
    ----------
    x : ndarray of shape (n, p)
        Covariates (already standardised).
    y : ndarray of shape (n,)
        Labels in [0, 1].
    c : float
        Inverse penalty C of scikit-learn's ``LogisticRegression`` (objective
        C sum_i w_i loss_i + ||coef||^2 / 2; the intercept is not penalised).

    Returns
    -------
    LogisticModel
        A constant model (the mean label, or 1/2 without labels) when the labels have no
        positive or no negative weight.

    Notes
    -----
    The fitted probabilities maximise

    .. math::

        C \\sum_i \\{y_i \\log p_i + (1 - y_i) \\log(1 - p_i)\\} - \\tfrac12 \\lVert b \\rVert^2,
        \\qquad p_i = \\operatorname{expit}(a + x_i^\\top b).

    References
    ----------
    LACE paper, Section 5.2 ("All fitted logistic predictors standardize their covariates and use
    C = 1").
    """
    p = x.shape[1]
    positive, negative = float(y.sum()), float((1.0 - y).sum())
    if y.size == 0:
        return LogisticModel(coef=np.zeros(p), intercept=0.0, constant=0.5)
    if positive <= 0.0 or negative <= 0.0:
        return LogisticModel(coef=np.zeros(p), intercept=0.0, constant=float(y.mean()))
    rows = np.vstack([x, x])
    target = np.concatenate([np.ones(y.size), np.zeros(y.size)])
    weight = np.concatenate([y, 1.0 - y])
    keep = weight > 0
    from sklearn.linear_model import LogisticRegression  # heavy: imported on first fit

    model = LogisticRegression(C=c, max_iter=MAX_ITER)
    model.fit(rows[keep], target[keep], sample_weight=weight[keep])
    return LogisticModel(
        coef=np.asarray(model.coef_[0], dtype=np.float64), intercept=float(model.intercept_[0])
    )


def pool_predictions(x: FloatArray, index: IntArray, y: FloatArray, *, c: float) -> FloatArray:
    """Predictions for every pool item from one model fitted on all of L (the plug-ins).

    Parameters
    ----------
    x : ndarray of shape (M, p)
        Standardised covariates of the whole pool.
    index : ndarray of int, shape (n,)
        Pool positions of the labeled items.
    y : ndarray of shape (n,)
        Their labels.
    c : float
        Inverse penalty.

    Returns
    -------
    ndarray of shape (M,)
    """
    return fit_logistic(x[index], y, c=c).predict(x)


def cross_fitted_predictions(
    x: FloatArray,
    index: IntArray,
    y: FloatArray,
    *,
    c: float,
    rng: np.random.Generator,
) -> FloatArray:
    """Two-fold cross-fitted predictions (LACE paper, Section 5.2).

    L is split at random into two halves (from ``rng``); a labeled item gets the prediction of the
    model fitted on the other half, every other pool item the prediction of the model refitted on
    all of L.

    Parameters
    ----------
    x : ndarray of shape (M, p)
        Standardised covariates of the whole pool.
    index : ndarray of int, shape (n,)
        Pool positions of the labeled items.
    y : ndarray of shape (n,)
        Their labels.
    c : float
        Inverse penalty.
    rng : numpy Generator
        Draws the folds.

    Returns
    -------
    ndarray of shape (M,)

    References
    ----------
    LACE paper, Section 5.2 ("For prediction-based rectifiers, predictions at labeled items are
    two-fold out of fold, while predictions at the remaining pool items come from the model refit
    on all of L").
    """
    out = fit_logistic(x[index], y, c=c).predict(x)
    fold = np.empty(index.size, dtype=np.intp)
    fold[rng.permutation(index.size)] = np.arange(index.size) % CROSS_FIT_FOLDS
    for k in range(CROSS_FIT_FOLDS):
        held = fold == k
        model = fit_logistic(x[index[~held]], y[~held], c=c)
        out[index[held]] = model.predict(x[index[held]])
    return out
