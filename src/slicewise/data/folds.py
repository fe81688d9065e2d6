"""Folds of the labeled set for cross-fitting and cross-validation."""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray, IntArray

#: Largest number of quantile bins used to balance folds on a non-binary label.
MAX_LABEL_BINS = 10


def balanced_folds(y: FloatArray, folds: int, rng: np.random.Generator) -> IntArray:
    """Approximately outcome-balanced fold labels for the labeled items.

    Binary labels are stratified on Y; other labels on up to :data:`MAX_LABEL_BINS` quantile bins
    of Y (at least ``folds`` items per bin on average). Within each stratum the items are put in
    random order and dealt to the folds in turn, continuing the deal across strata, so every fold
    receives within one item of its share of every stratum and of the total.

    Parameters
    ----------
    y : ndarray of shape (n,)
    folds : int
    rng : numpy Generator

    Returns
    -------
    ndarray of int, shape (n,)
        Fold of each labeled item, in 0 .. folds - 1.
    """
    n = y.size
    if np.all((y == 0.0) | (y == 1.0)):
        stratum = y.astype(np.intp)
    else:
        bins = max(1, min(MAX_LABEL_BINS, n // folds))
        rank = np.empty(n, dtype=np.intp)
        rank[np.lexsort((rng.random(n), y))] = np.arange(n)
        stratum = (rank * bins) // n
    order = np.lexsort((rng.random(n), stratum))
    fold = np.empty(n, dtype=np.intp)
    fold[order] = np.arange(n) % folds
    return fold
