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
:data:`~slicewise.estimators.learner_design.MAX_INTERACTION_LEVELS` levels; Z, Z^2 and Z x S for
continuous ones; :mod:`slicewise.estimators.learner_design`), so that the signals' usefulness may
change across the profile. The level and interaction columns are left unscaled so that the
penalty acts as a hierarchical prior: a level with few labels keeps the main effects.
``'boosting'`` is scikit-learn's histogram gradient boosting on (Z, S) (classifier for binary
labels, squared-error regressor otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .._typing import FloatArray, IntArray, PoolKernel
from ..moments.kernel_ops import column_sums, take_rows, weighted_sums
from ..moments.pool import block_sums
from .learner_design import Learner, LearnerDesign
from .predictors import LogisticModel, fit_logistic


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


#: Pool items per block when the fold models predict the pool for stored predictions.
PREDICT_ROWS = 1 << 14


@dataclass(frozen=True, eq=False)
class CrossFit:
    """Cross-fitted fold models for one labeled set, and their out-of-fold predictions.

    The fold models' pool predictions P^(k) = f_k(Z, S) are made block by block by the passes
    that need them (:meth:`predictions`), from the covariates of :attr:`design` made in the
    same blocks: a logistic model predicts a block in less time than its kernel block takes,
    and the (F x M) predictions would cost 8 F bytes per item. A boosting model predicts about
    a hundred times slower, so its predictions are made once and kept (:attr:`stored`).

    Attributes
    ----------
    fold : ndarray of int, shape (n,)
        Fold of every labeled item (in the labeled set's order).
    oof : ndarray of shape (n,)
        Out-of-fold prediction of every labeled item.
    models : tuple of Predictor
        f_k, the model fitted without fold k.
    design : LearnerDesign
        The covariates the models read, for every item of the pool (of the labeled items only
        for an out-of-core pool, whose passes make their own).
    stored : ndarray of shape (F, M), optional
        P^(k) for every fold model and pool item, when kept.
    """

    fold: IntArray
    oof: FloatArray
    models: tuple[Predictor, ...]
    design: LearnerDesign
    stored: FloatArray | None = None

    @property
    def learner(self) -> Learner:
        """The learner of the fold models."""
        return self.design.learner

    @property
    def folds(self) -> int:
        """F, the number of fold models."""
        return len(self.models)

    def predictions(self, start: int, stop: int, *, out: FloatArray | None = None) -> FloatArray:
        """P^(k) of the items start .. stop - 1 for every fold model, shape (F, rows) (written
        into ``out`` when given)."""
        if self.stored is not None:
            if out is None:
                return self.stored[:, start:stop]
            out[...] = self.stored[:, start:stop]
            return out
        return self.design.predict(self.models, slice(start, stop), out=out)

    def predict_rows(self, index: IntArray) -> FloatArray:
        """P^(k) of the items ``index`` for every fold model, shape (F, index.size)."""
        if self.stored is not None:
            return np.asarray(self.stored[:, index], dtype=np.float64)
        return self.design.predict(self.models, index)

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
            pool_sums = block_sums(
                kernel,
                lambda start, stop: self.predictions(start, stop).T,
                items=self.design.n_items,
            )  # (G, F)
        lab_predictions = self.predict_rows(index)
        out = np.zeros(mass_pool.size)
        for k in range(self.folds):
            train = self.fold != k
            held = ~train
            k_train = take_rows(kernel, index[train])
            mass_u = mass_pool - column_sums(k_train)
            sum_u = (
                pool_sums[:, k]
                - weighted_sums(k_train, lab_predictions[k, train].reshape(-1, 1))[:, 0]
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
        lab_sums = weighted_sums(k_lab, np.column_stack([self.oof, self.predict_rows(index).T]))
        mass_u = pool_mass - mass_lab
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(pool_mass > 0, lab_sums[:, 0] / np.where(pool_mass > 0, pool_mass, 1), 0)
            rest = np.where(pool_mass > 0, mass_u / np.where(pool_mass > 0, pool_mass, 1), 0)
            for k in range(self.folds):
                sum_u = pool_sums[:, k] - lab_sums[:, 1 + k]
                mean_u = np.where(mass_u > 0, sum_u / np.where(mass_u > 0, mass_u, 1.0), 0.0)
                share = residual[self.fold == k].sum(axis=0)
                out = out + rest * share * mean_u
        return np.asarray(out, dtype=np.float64)


def cross_fit(
    design: LearnerDesign,
    index: IntArray,
    y: FloatArray,
    *,
    learner: Learner,
    folds: int,
    c: float,
    categorical: bool,
    rng: np.random.Generator,
    fold: IntArray | None = None,
    store: bool | None = None,
) -> CrossFit:
    """Fit ``folds`` learners, each without one fold of L, and predict their held-out folds.

    The folds are a uniformly random partition of L (not balanced on the outcome): then, given
    the other folds, each fold is a simple random sample of the items not used to train its
    model, which is what makes the centering of :meth:`CrossFit.centering` exact.

    Parameters
    ----------
    design : LearnerDesign
        Learner covariates of the pool items (:meth:`LearnerDesign.build`).
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
    store : bool, optional
        Keep the (F x M) pool predictions (:attr:`CrossFit.stored`); default: for the
        boosting learner only.

    Returns
    -------
    CrossFit
    """
    if fold is None:
        n_folds = max(2, min(folds, y.size))
        fold = np.asarray(rng.permutation(y.size) % n_folds, dtype=np.intp)
    else:
        n_folds = int(fold.max()) + 1
    lab_design = design.rows(index)
    oof = np.empty(y.size)
    models = []
    for k in range(n_folds):
        train = fold != k
        model = _fit(
            lab_design[train],
            y[train],
            learner=learner,
            c=c,
            categorical=categorical,
            rng=rng,
        )
        oof[~train] = model.predict(lab_design[~train])
        models.append(model)
    fit = CrossFit(fold=fold, oof=oof, models=tuple(models), design=design)
    if not (learner == "boosting" if store is None else store):
        return fit
    stored = np.empty((n_folds, design.n_items))
    for start in range(0, design.n_items, PREDICT_ROWS):
        stop = min(start + PREDICT_ROWS, design.n_items)
        stored[:, start:stop] = fit.predictions(start, stop)
    return CrossFit(fold=fold, oof=oof, models=fit.models, design=design, stored=stored)
