"""Learned control variates: cross-fitted predictions of Y from (Z, S), arranged to stay unbiased.

A prediction P = f(Z, S) of the gold label is a cheap signal like any other, *provided* it is not
fitted on the label it is compared with. We split L into F outcome-balanced folds L_1..L_F. The
model f_k is fitted on D_k = L minus L_k and predicts every pool item: P^(k) = f_k(Z, S). A labeled
item i in fold k(i) gets its out-of-fold prediction P_i = P_i^(k(i)).

**Exact centering.** Given D_k (and the number of fold-k items in a neighbourhood), L_k is a simple
random sample from U_k = T minus D_k, and f_k does not depend on it. So

.. math::

    E\\Big[\\sum_{i\\in L_k} w_{i,L}(z) P^{(k)}_i\\Big] = a_k(z)\\, \\bar P^{(k)}_{U_k}(z),
    \\qquad a_k(z) = \\sum_{i\\in L_k} w_{i,L}(z),

exactly for group weights (to first order for kernel weights, as for every ratio estimator), and
the centered labeled mean of the out-of-fold predictions has mean zero when it is centred by

.. math::

    \\bar M(z) = \\sum_k a_k(z)\\, \\bar P^{(k)}_{U_k}(z)

rather than by the pool mean of one refitted model: the estimator
Ybar_L(z) - c(z) {Pbar^oof_L(z) - Mbar(z)} is then unbiased for the pool profile for any fixed c,
whatever the learner, with no "refit on all of L" mismatch between labeled and pool predictions.

Learners: ``'logistic'`` is an L2 logistic regression (fractional labels by the duplicated-row
trick of :mod:`slicewise.estimators.predictors`) on the standardised signals, the profile and their
interactions (one-hot levels x signals for discrete profiles with at most
:data:`MAX_INTERACTION_LEVELS` levels; Z, Z^2 and Z x S for continuous ones), so that the signals'
usefulness may change across the profile. The level and interaction columns are left unscaled so
that the penalty acts as a hierarchical prior: a level with few labels keeps the main effects. ``'boosting'`` is scikit-learn's histogram gradient
boosting on (Z, S) (classifier for binary labels, squared-error regressor otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from .._typing import FloatArray, IntArray, Kind, PoolKernel
from ..moments.sums import column_sums, take_rows, weighted_sums
from .predictors import LogisticModel, fit_logistic

Learner = Literal["logistic", "boosting"]
LEARNERS: tuple[Learner, ...] = ("logistic", "boosting")

#: Discrete profiles with at most this many levels get level x signal interactions.
MAX_INTERACTION_LEVELS = 30


@dataclass(frozen=True, eq=False)
class DesignBasis:
    """What :func:`learner_design` takes from the whole pool: the levels of a discrete profile
    (one-hot columns), or the standardisation of Z and of its square (continuous profiles, and
    discrete ones with more than :data:`MAX_INTERACTION_LEVELS` levels).

    An out-of-core pool builds it from its scanned statistics, so that a record batch gets the
    design rows the in-memory pool would give it.
    """

    levels: FloatArray | None
    z_mean: FloatArray = field(default_factory=lambda: np.zeros(0))
    z_scale: FloatArray = field(default_factory=lambda: np.zeros(0))
    square_mean: FloatArray = field(default_factory=lambda: np.zeros(0))
    square_scale: FloatArray = field(default_factory=lambda: np.zeros(0))


def _mean_scale(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Mean and sd (1 where constant) of every column, as :func:`standardize_columns` uses."""
    sd = x.std(axis=0)
    return x.mean(axis=0), np.where(sd > 0, sd, 1.0)


def design_basis(z: FloatArray, kind: Kind, learner: Learner) -> DesignBasis:
    """The :class:`DesignBasis` of the pool profile values ``z`` (shape (M, q))."""
    if learner == "boosting":
        return DesignBasis(levels=None)
    levels = np.unique(z[:, 0]) if kind != "continuous" else np.zeros(0)
    if kind != "continuous" and levels.size <= MAX_INTERACTION_LEVELS:
        return DesignBasis(levels=levels)
    z_mean, z_scale = _mean_scale(z)
    square_mean, square_scale = _mean_scale(((z - z_mean) / z_scale) ** 2)
    return DesignBasis(None, z_mean, z_scale, square_mean, square_scale)


def learner_design(
    z: FloatArray,
    kind: Kind,
    features: FloatArray,
    learner: Learner,
    basis: DesignBasis | None = None,
) -> FloatArray:
    """Covariates of the learner for every pool item.

    Parameters
    ----------
    z : ndarray of shape (M, q)
        Profile values (codes for categorical profiles).
    kind : {'continuous', 'ordinal', 'categorical'}
    features : ndarray of shape (M, K)
        Standardised signals.
    learner : {'logistic', 'boosting'}
    basis : DesignBasis, optional
        The pool's levels and standardisations when ``z`` is part of the pool (a record batch,
        the labeled items); default: those of ``z`` itself.

    Returns
    -------
    ndarray of shape (M, p)
    """
    if learner == "boosting":
        return np.column_stack([z, features])
    if basis is None:
        basis = design_basis(z, kind, learner)
    if basis.levels is not None:
        onehot = np.asarray(z[:, :1] == basis.levels[None, :], dtype=np.float64)
        inter = (onehot[:, :, None] * features[:, None, :]).reshape(z.shape[0], -1)
        # Level indicators and level x signal interactions are NOT standardised: a rare level's
        # columns keep their natural scale, so the L2 penalty shrinks its deviations from the
        # main effects hard (a hierarchical prior), instead of inflating them by 1 / sd.
        return np.column_stack([features, onehot, inter])
    zs = np.asarray((z - basis.z_mean) / basis.z_scale, dtype=np.float64)
    square = np.asarray((zs**2 - basis.square_mean) / basis.square_scale, dtype=np.float64)
    inter = (zs[:, :, None] * features[:, None, :]).reshape(z.shape[0], -1)
    return np.column_stack([features, zs, square, inter])


class Predictor(Protocol):
    """A fitted learner: predictions of the gold label from design rows."""

    def predict(self, x: FloatArray) -> FloatArray: ...


@dataclass(frozen=True, eq=False)
class BoostedModel:
    """A fitted histogram gradient boosting model (probability of 1 for binary labels)."""

    model: Any
    binary: bool

    def predict(self, x: FloatArray) -> FloatArray:
        """Predictions for the design rows ``x``, shape (rows of x,)."""
        if self.binary:
            return np.asarray(self.model.predict_proba(x)[:, 1], dtype=np.float64)
        return np.asarray(self.model.predict(x), dtype=np.float64)


def _fit(
    design: FloatArray,
    y: FloatArray,
    *,
    learner: Learner,
    c: float,
    categorical: bool,
    rng: np.random.Generator,
) -> Predictor:
    """The learner fitted on the design rows ``design`` (shape (n, p)) with labels ``y``."""
    if learner == "logistic":
        return fit_logistic(design, y, c=c)
    binary = bool(np.all((y == 0.0) | (y == 1.0)))
    if y.size < 2 or np.all(y == y[0]):
        constant = float(y.mean()) if y.size else 0.5
        return LogisticModel(coef=np.zeros(design.shape[1]), intercept=0.0, constant=constant)
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    seed = int(rng.integers(2**31 - 1))
    common = {
        "max_iter": 100,
        "learning_rate": 0.1,
        "max_leaf_nodes": 15,
        "min_samples_leaf": max(5, y.size // 50),
        "l2_regularization": 1.0,
        "categorical_features": [0] if categorical else None,
        "random_state": seed,
    }
    if binary:
        return BoostedModel(
            HistGradientBoostingClassifier(**common).fit(design, y.astype(int)), True
        )
    return BoostedModel(HistGradientBoostingRegressor(**common).fit(design, y), False)


@dataclass(frozen=True, eq=False)
class CrossFit:
    """Cross-fitted predictions for one labeled set.

    Attributes
    ----------
    fold : ndarray of int, shape (n,)
        Fold of every labeled item (in the labeled set's order).
    predictions : ndarray of shape (F, M)
        P^(k) = f_k(Z, S) for every fold model and pool item.
    oof : ndarray of shape (n,)
        Out-of-fold prediction of every labeled item.
    models : tuple of Predictor
        f_k, the model fitted without fold k (applied to an out-of-core pool batch by batch).
    learner : {'logistic', 'boosting'}
        The learner, whose design rows (:func:`learner_design`) the models read.
    """

    fold: IntArray
    predictions: FloatArray
    oof: FloatArray
    models: tuple[Predictor, ...] = ()
    learner: Learner = "logistic"

    @property
    def average(self) -> FloatArray:
        """Mean prediction over the fold models, shape (M,)."""
        return np.asarray(self.predictions.mean(axis=0), dtype=np.float64)

    def centering(
        self,
        kernel: PoolKernel,
        index: IntArray,
        *,
        pool_mass: FloatArray | None = None,
        pool_sums: FloatArray | None = None,
    ) -> FloatArray:
        """Mbar(z) = sum_k a_k(z) Pbar^(k)_{U_k}(z), the exact centering of the oof mean (G,).

        ``kernel`` is the (M x G) profile kernel and ``index`` the labeled pool positions (in the
        order of :attr:`fold`). ``pool_mass`` (G,) and ``pool_sums`` (G, F), the kernel mass of
        the pool and the kernel sums of every fold model's predictions over it, when a pass over
        the pool has already computed them.
        """
        k_lab = take_rows(kernel, index)
        mass_lab = column_sums(k_lab)
        mass_pool = column_sums(kernel) if pool_mass is None else pool_mass
        if pool_sums is None:
            pool_sums = weighted_sums(kernel, self.predictions.T)  # (G, F)
        out = np.zeros(mass_pool.size)
        for k in range(self.predictions.shape[0]):
            train = self.fold != k
            held = ~train
            k_train = take_rows(kernel, index[train])
            mass_u = mass_pool - column_sums(k_train)
            sum_u = (
                pool_sums[:, k]
                - weighted_sums(k_train, self.predictions[k, index[train]].reshape(-1, 1))[:, 0]
            )
            share = column_sums(take_rows(kernel, index[held]))
            with np.errstate(divide="ignore", invalid="ignore"):
                mean_u = np.where(mass_u > 0, sum_u / np.where(mass_u > 0, mass_u, 1.0), 0.0)
                a_k = np.where(mass_lab > 0, share / np.where(mass_lab > 0, mass_lab, 1.0), 0.0)
            out += a_k * mean_u
        return out

    def design_centering(
        self,
        kernel: PoolKernel,
        index: IntArray,
        residual: FloatArray,
        *,
        pool_mass: FloatArray,
        pool_sums: FloatArray,
    ) -> FloatArray:
        """The centering under unequal inclusion probabilities, shape (G,).

        f(z) Pbar^oof_L(z) + {1 - f(z)} sum_k R_k(z) Pbar^(k)_U(z): the labeled items' own
        out-of-fold mean, and for the unlabeled items U the fold models' mean mixed by
        R_k(z) = sum_{L_k} r_i(z), the share of fold k in the residual weights ``residual``
        (n x G, columns summing to 1; :class:`~slicewise.inference.cv_variance.DesignWeights`).
        With this centering the cross-fitted estimate is f Ybar_L + (1 - f) sum_k R_k
        [sum_{L_k} (r_i / R_k) (Y_i - c' X_i) + c' Xbar^(k)_U], a mixture over folds of Hajek
        estimators of the unlabeled items' mean, each unbiased given its fold model. The
        unweighted centering Mbar of :meth:`centering` assumes that L_k is a simple random
        sample of U_k: under unequal probabilities the labeled items' mean prediction is not
        the unlabeled items' one, which biased the learned candidates of ``auto``.
        """
        k_lab = take_rows(kernel, index)
        mass_lab = column_sums(k_lab)
        lab_sums = weighted_sums(k_lab, np.column_stack([self.oof, self.predictions[:, index].T]))
        mass_u = pool_mass - mass_lab
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(pool_mass > 0, lab_sums[:, 0] / np.where(pool_mass > 0, pool_mass, 1), 0)
            rest = np.where(pool_mass > 0, mass_u / np.where(pool_mass > 0, pool_mass, 1), 0)
            for k in range(self.predictions.shape[0]):
                sum_u = pool_sums[:, k] - lab_sums[:, 1 + k]
                mean_u = np.where(mass_u > 0, sum_u / np.where(mass_u > 0, mass_u, 1.0), 0.0)
                share = residual[self.fold == k].sum(axis=0)
                out = out + rest * share * mean_u
        return np.asarray(out, dtype=np.float64)


def cross_fit(
    design: FloatArray,
    index: IntArray,
    y: FloatArray,
    *,
    learner: Learner,
    folds: int,
    c: float,
    categorical: bool,
    rng: np.random.Generator,
    fold: IntArray | None = None,
) -> CrossFit:
    """Fit ``folds`` learners, each without one fold of L, and predict the pool.

    The folds are a uniformly random partition of L (not balanced on the outcome): then, given
    the other folds, each fold is a simple random sample of the items not used to train its
    model, which is what makes the centering of :meth:`CrossFit.centering` exact.

    Parameters
    ----------
    design : ndarray of shape (M, p)
        Learner covariates (:func:`learner_design`).
    index : ndarray of int, shape (n,)
        Labeled pool positions.
    y : ndarray of shape (n,)
        Their labels.
    learner : {'logistic', 'boosting'}
    folds : int
        F >= 2.
    c : float
        Inverse L2 penalty of the logistic learner.
    categorical : bool
        Whether the first design column is a categorical profile code (boosting only).
    rng : numpy Generator
        Draws the folds and seeds the boosting learner.
    fold : ndarray of int, shape (n,), optional
        A given fold of every labeled item (0 .. F-1) instead of a random partition.

    Returns
    -------
    CrossFit
    """
    if fold is None:
        n_folds = max(2, min(folds, y.size))
        fold = np.asarray(rng.permutation(y.size) % n_folds, dtype=np.intp)
    else:
        n_folds = int(fold.max()) + 1
    preds = np.empty((n_folds, design.shape[0]))
    oof = np.empty(y.size)
    models = []
    for k in range(n_folds):
        train = fold != k
        model = _fit(
            design[index[train]],
            y[train],
            learner=learner,
            c=c,
            categorical=categorical,
            rng=rng,
        )
        preds[k] = model.predict(design)
        oof[~train] = preds[k, index[~train]]
        models.append(model)
    return CrossFit(fold=fold, predictions=preds, oof=oof, models=tuple(models), learner=learner)
