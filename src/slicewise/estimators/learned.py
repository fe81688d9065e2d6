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

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from .._threads import one_blas_thread
from .._typing import FloatArray, IntArray, Kind, PoolKernel
from ..moments.pool import block_sums
from ..moments.sums import column_sums, take_rows, weighted_sums
from .predictors import fit_logistic

Learner = Literal["logistic", "boosting"]
LEARNERS: tuple[Learner, ...] = ("logistic", "boosting")

#: Discrete profiles with at most this many levels get level x signal interactions.
MAX_INTERACTION_LEVELS = 30
#: Pool items per block when the learner's covariates are made to predict the whole pool.
PREDICT_ROWS = 1 << 14

#: A fitted fold model: covariates (rows x p) to predictions (rows,).
Predictor = Callable[[FloatArray], FloatArray]


def _standardization(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Pool mean and scale of :func:`~slicewise.estimators.predictors.standardize_columns`."""
    sd = x.std(axis=0)
    return x.mean(axis=0), np.where(sd > 0, sd, 1.0)


@dataclass(frozen=True, eq=False)
class LearnerDesign:
    """Covariates of the learner for any rows of the pool, made when asked, never stored whole.

    The covariates of an item depend on its own profile value and signals and on a few pool
    statistics (the levels, the means and scales of Z and Z^2), kept here; so the (M x p) design
    -- 112 bytes per item for six signals and a continuous profile -- is made block by block
    while the pool is predicted (:meth:`blocks`), and for the labeled rows (:meth:`rows`).
    Use :meth:`build`.

    Attributes
    ----------
    z : ndarray of shape (M, q)
    features : ndarray of shape (M, K)
    learner : {'logistic', 'boosting'}
    levels : ndarray or None
        The levels of a discrete profile with level x signal interactions.
    scaling : ndarray of shape (4, q) or None
        Standardisation of Z and of the squared standardised Z (logistic learner, profiles
        without levels): the pool means and scales of Z, then of Z^2.
    """

    z: FloatArray
    features: FloatArray
    learner: Learner
    levels: FloatArray | None = None
    scaling: FloatArray | None = None

    @classmethod
    def build(
        cls, z: FloatArray, kind: Kind, features: FloatArray, learner: Learner
    ) -> LearnerDesign:
        """The pool statistics of the design (:func:`learner_design` documents the columns)."""
        if learner == "boosting":
            return cls(z=z, features=features, learner=learner)
        levels = np.unique(z[:, 0]) if kind != "continuous" else np.zeros(0)
        if kind != "continuous" and levels.size <= MAX_INTERACTION_LEVELS:
            return cls(z=z, features=features, learner=learner, levels=levels)
        z_mean, z_scale = _standardization(z)
        square_mean, square_scale = _standardization(((z - z_mean) / z_scale) ** 2)
        scaling = np.stack([z_mean, z_scale, square_mean, square_scale])
        return cls(z=z, features=features, learner=learner, scaling=scaling)

    @property
    def n_items(self) -> int:
        """M."""
        return int(self.z.shape[0])

    def rows(self, index: IntArray) -> FloatArray:
        """The covariates of the items ``index``."""
        return self._make(self.z[index], self.features[index])

    def block(self, start: int, stop: int) -> FloatArray:
        """The covariates of the items start .. stop - 1."""
        return self._make(self.z[start:stop], self.features[start:stop])

    def blocks(self) -> Iterator[tuple[int, FloatArray]]:
        """(start, covariates of items start .. start + PREDICT_ROWS - 1), in item order."""
        for start in range(0, self.n_items, PREDICT_ROWS):
            yield start, self.block(start, start + PREDICT_ROWS)

    def _make(self, z: FloatArray, features: FloatArray) -> FloatArray:
        if self.learner == "boosting":
            return np.column_stack([z, features])
        rows = z.shape[0]
        if self.levels is not None:
            onehot = np.asarray(z[:, :1] == self.levels[None, :], dtype=np.float64)
            inter = (onehot[:, :, None] * features[:, None, :]).reshape(rows, -1)
            # Level indicators and level x signal interactions are NOT standardised: a rare
            # level's columns keep their natural scale, so the L2 penalty shrinks its deviations
            # from the main effects hard (a hierarchical prior), instead of inflating them by
            # 1 / sd.
            return np.column_stack([features, onehot, inter])
        assert self.scaling is not None  # set by build for profiles without levels
        z_mean, z_scale, square_mean, square_scale = self.scaling
        zs = (z - z_mean) / z_scale
        inter = (zs[:, :, None] * features[:, None, :]).reshape(rows, -1)
        square = (zs**2 - square_mean) / square_scale
        return np.column_stack([features, zs, square, inter])


def learner_design(z: FloatArray, kind: Kind, features: FloatArray, learner: Learner) -> FloatArray:
    """Covariates of the learner for every pool item.

    Logistic: the standardised signals, then for a discrete profile with at most
    :data:`MAX_INTERACTION_LEVELS` levels the level indicators and level x signal interactions,
    otherwise the standardised Z, the standardised Z^2 and Z x signal interactions. Boosting: Z
    and the signals. :class:`LearnerDesign` makes the same rows without storing them all.

    Parameters
    ----------
    z : ndarray of shape (M, q)
        Profile values (codes for categorical profiles).
    kind : {'continuous', 'ordinal', 'categorical'}
    features : ndarray of shape (M, K)
        Standardised signals.
    learner : {'logistic', 'boosting'}

    Returns
    -------
    ndarray of shape (M, p)
    """
    design = LearnerDesign.build(z, kind, features, learner)
    return design.block(0, design.n_items)


def _fit(
    design: LearnerDesign,
    train: IntArray,
    y: FloatArray,
    *,
    learner: Learner,
    c: float,
    categorical: bool,
    rng: np.random.Generator,
) -> Predictor:
    if learner == "logistic":
        return fit_logistic(design.rows(train), y, c=c).predict
    binary = bool(np.all((y == 0.0) | (y == 1.0)))
    if y.size < 2 or np.all(y == y[0]):
        constant = float(y.mean()) if y.size else 0.5
        return lambda x: np.full(x.shape[0], constant)
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
        clf = HistGradientBoostingClassifier(**common).fit(design.rows(train), y.astype(int))
        return lambda x: np.asarray(clf.predict_proba(x)[:, 1], dtype=np.float64)
    reg = HistGradientBoostingRegressor(**common).fit(design.rows(train), y)
    return lambda x: np.asarray(reg.predict(x), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class CrossFit:
    """Cross-fitted fold models for one labeled set, and their out-of-fold predictions.

    The fold models' predictions for the pool, P^(k) = f_k(Z, S), are made block by block when
    a pass over the pool needs them (:meth:`predictions`): a logistic model predicts a block in
    less time than a kernel block takes, and storing them would cost 8 F bytes per item. A
    boosting model predicts about a hundred times slower, so its predictions are made once and
    stored (:attr:`stored`).

    Attributes
    ----------
    fold : ndarray of int, shape (n,)
        Fold of every labeled item (in the labeled set's order).
    models : tuple of callables
        f_k for every fold k: covariates to predictions.
    design : LearnerDesign
        The covariates of the pool items.
    oof : ndarray of shape (n,)
        Out-of-fold prediction of every labeled item.
    stored : ndarray of shape (F, M) or None
        The pool predictions of every fold model, when kept (boosting).
    """

    fold: IntArray
    models: tuple[Predictor, ...]
    design: LearnerDesign
    oof: FloatArray
    stored: FloatArray | None = None

    @property
    def folds(self) -> int:
        """F, the number of fold models."""
        return len(self.models)

    def predictions(self, start: int, stop: int) -> FloatArray:
        """P^(k) of the pool items start .. stop - 1 for every fold model, shape (F, rows)."""
        if self.stored is not None:
            return self.stored[:, start:stop]
        x = self.design.block(start, stop)
        return np.stack([model(x) for model in self.models])

    def predict_rows(self, k: int, index: IntArray) -> FloatArray:
        """P^(k) of the pool items ``index``."""
        if self.stored is not None:
            return np.asarray(self.stored[k, index], dtype=np.float64)
        return self.models[k](self.design.rows(index))

    def average(self) -> FloatArray:
        """Mean prediction over the fold models for every pool item, shape (M,)."""
        if self.stored is not None:
            return np.asarray(self.stored.mean(axis=0), dtype=np.float64)
        out = np.empty(self.design.n_items)
        with one_blas_thread():
            for start, x in self.design.blocks():
                part = np.stack([model(x) for model in self.models])
                out[start : start + x.shape[0]] = part.mean(axis=0)
        return out

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
        out = np.zeros(mass_pool.size)
        for k in range(self.folds):
            train = self.fold != k
            held = ~train
            k_train = take_rows(kernel, index[train])
            mass_u = mass_pool - column_sums(k_train)
            sum_u = (
                pool_sums[:, k]
                - weighted_sums(k_train, self.predict_rows(k, index[train]).reshape(-1, 1))[:, 0]
            )
            share = column_sums(take_rows(kernel, index[held]))
            with np.errstate(divide="ignore", invalid="ignore"):
                mean_u = np.where(mass_u > 0, sum_u / np.where(mass_u > 0, mass_u, 1.0), 0.0)
                a_k = np.where(mass_lab > 0, share / np.where(mass_lab > 0, mass_lab, 1.0), 0.0)
            out += a_k * mean_u
        return out


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
) -> CrossFit:
    """Fit ``folds`` learners, each without one fold of L, and predict their held-out folds.

    The folds are a uniformly random partition of L (not balanced on the outcome): then, given
    the other folds, each fold is a simple random sample of the items not used to train its
    model, which is what makes the centering of :meth:`CrossFit.centering` exact.

    Parameters
    ----------
    design : LearnerDesign
        Learner covariates of the pool items.
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
    models: list[Predictor] = []
    oof = np.empty(y.size)
    for k in range(n_folds):
        train = fold != k
        model = _fit(
            design,
            index[train],
            y[train],
            learner=learner,
            c=c,
            categorical=categorical,
            rng=rng,
        )
        models.append(model)
        oof[~train] = model(design.rows(index[~train]))
    fit = CrossFit(fold=fold, models=tuple(models), design=design, oof=oof)
    if learner == "logistic":
        return fit
    stored = np.empty((n_folds, design.n_items))
    for start, x in design.blocks():
        for k, model in enumerate(models):
            stored[k, start : start + x.shape[0]] = model(x)
    return replace(fit, stored=stored)
