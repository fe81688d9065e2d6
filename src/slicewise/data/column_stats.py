"""Column means and standard deviations of large (M x K) arrays in passes over row blocks, without
(M x K) temporaries: the pool moments of the signals that the balance checks use, and the
signals standardised over the pool (:func:`standardize`)."""

from __future__ import annotations

import numpy as np

from .._threads import one_blas_thread
from .._typing import FloatArray

#: A column whose standard deviation is at most this share of its |mean| is constant: the sd
#: of a constant column is the rounding of its mean (about 1e-17 of it), not exactly 0.
CONSTANT_RTOL = 1e-12


def constant_as_zero(mean: FloatArray, sd: FloatArray) -> FloatArray:
    """``sd`` with the columns that are constant up to rounding set to exactly 0."""
    return np.where(sd <= CONSTANT_RTOL * np.abs(mean), 0.0, sd)


#: Rows per block of :func:`column_moments`' passes over a large (M x K) array.
MOMENT_ROWS = 1 << 13


def _block_sums(values: FloatArray, mean: FloatArray | None, buffer: FloatArray) -> FloatArray:
    """``values.sum(axis=0)`` (``mean`` None) or ``((values - mean) ** 2).sum(axis=0)`` of an
    (M, K) array, block by block, each block summed by one BLAS product with a column of ones.

    numpy's own reduction of a C-ordered (M, K) array along axis 0 adds K numbers at a time
    row after row (0.06 s at 10^6 x 6, and it needs an (M x K) temporary for the squares); a
    matrix-vector product per block takes a third of that and, summing in BLAS's blocked
    order, is more accurate (relative error 1e-16 against numpy's 1e-14 for a mean of 10^6
    items). BLAS runs on one thread (:func:`~slicewise._threads.one_blas_thread`), so the sums
    do not depend on the machine's thread count.
    """
    rows = buffer.shape[0]
    ones = np.ones(rows)
    total = np.zeros(values.shape[1])
    with one_blas_thread():
        for start in range(0, values.shape[0], rows):
            block = values[start : start + rows]
            size = block.shape[0]
            if mean is not None:
                part = buffer[:size]
                np.subtract(block, mean, out=part)
                np.multiply(part, part, out=part)
                block = part
            total += ones[:size] @ block
    return total


def column_moments(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``values.mean(axis=0)`` and ``values.std(axis=0)`` of an (M, K) array, in two passes
    without (M x K) temporaries (:func:`_block_sums`: to rounding, not numpy's bits). A constant
    column's sd is exactly 0 (:func:`constant_as_zero`)."""
    m, k = values.shape
    if not k:
        return np.zeros(0), np.zeros(0)
    if not m:
        return np.full(k, np.nan), np.full(k, np.nan)
    buffer = np.empty((min(MOMENT_ROWS, m), k))
    mean = np.true_divide(_block_sums(values, None, buffer), m)
    spread = np.true_divide(_block_sums(values, mean, buffer), m)
    return mean, constant_as_zero(mean, np.sqrt(spread))


#: Rows per block of :func:`standardize`'s pass over the (M x K) signals.
STANDARDIZE_ROWS = 1 << 14


def standardize(
    signals: FloatArray, moments: tuple[FloatArray, FloatArray] | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Standardise signals over the pool: (S - mean_T) / sd_T.

    A column that is constant over the pool keeps scale 1 (it is centred to zero and carries no
    information; the caller warns about it). ``moments``: the signals' pool mean and standard
    deviation when already computed (:attr:`~slicewise.data.table.ItemTable.signal_moments`).

    Returns
    -------
    features, mean, scale
    """
    mean, sd = column_moments(signals) if moments is None else moments
    scale = np.where(sd > 0, sd, 1.0)
    features = np.empty_like(signals, dtype=np.float64)  # in the signals' memory order
    for start in range(0, signals.shape[0], STANDARDIZE_ROWS):  # one pass, each block in cache
        block = features[start : start + STANDARDIZE_ROWS]
        np.subtract(signals[start : start + STANDARDIZE_ROWS], mean, out=block)
        block /= scale
    return features, mean, scale
