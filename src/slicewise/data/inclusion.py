"""Known inclusion probabilities of the labeled items, read and validated at the boundary."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray
from .._validation import format_examples
from ..exceptions import InclusionProbabilityWarning
from .table import _check_columns, _numeric


def read_inclusion(
    frame: pd.DataFrame, column: str, labeled_index: IntArray, *, func: str
) -> FloatArray:
    """Inclusion probabilities pi_i of the labeled rows, from the column ``column``.

    Parameters
    ----------
    frame : DataFrame
        The item table as given (rows in pool order).
    column : str
        Column of first-order inclusion probabilities; read on labeled rows only (unlabeled rows
        may hold anything, including missing values).
    labeled_index : ndarray of int
        Positions of the labeled rows.
    func : str
        Name of the calling public function, used in error messages.

    Returns
    -------
    ndarray of shape (n,)
        Values in (0, 1].

    Raises
    ------
    ValueError
        When the column is absent, non-numeric, missing on labeled rows or outside (0, 1]; the
        message names the column and the offending count and values.
    """
    if not isinstance(column, str):
        raise TypeError(
            f"The 'inclusion' parameter of {func} must be a column name. Got {column!r} instead."
        )
    _check_columns(frame, [column], name="inclusion", func=func)
    values = _numeric(frame[column], role="Inclusion-probability")[labeled_index]
    missing = ~np.isfinite(values)
    if missing.any():
        raise ValueError(
            f"Inclusion-probability column '{column}' has {int(missing.sum())} missing or "
            f"non-finite values on the {values.size} labeled rows; every labeled item needs its "
            "inclusion probability."
        )
    bad = (values <= 0.0) | (values > 1.0)
    if bad.any():
        raise ValueError(
            f"Inclusion-probability column '{column}' has {int(bad.sum())} values outside (0, 1] "
            f"on labeled rows (e.g. {format_examples(np.unique(values[bad]).tolist())}); "
            "inclusion probabilities must lie in (0, 1]."
        )
    warn_pool_size(values, len(frame), column, stacklevel=4)
    return np.asarray(values, dtype=np.float64)


#: |z| above which :func:`pool_size_check` speaks (two-sided 0.001 under the stated design).
POOL_SIZE_Z = 3.29


def pool_size_check(pi: FloatArray, m: int, column: str) -> str | None:
    """Whether the labeled items' inclusion probabilities can be right for a pool of ``m`` items.

    Under any design with first-order inclusion probabilities pi_i, the Horvitz-Thompson
    estimate of the pool size, :math:`\\hat M = \\sum_{i \\in L} 1 / \\pi_i`, is unbiased
    for M, with variance :math:`\\sum_{i \\in T} (1 - \\pi_i) / \\pi_i` under Poisson sampling,
    estimated by :math:`\\sum_{i \\in L} (1 - \\pi_i) / \\pi_i^2` (0 under stratified simple
    random sampling with pi_i = n_h / N_h, where it is exact). Probabilities that are too large
    make the labeled items stand for too few pool items, and every design variance shrinks with
    them (pi = 0.9 given for 120 labels of 600: M_hat = 133, se 2.8 times too small).

    Returns
    -------
    str or None
        The message when :math:`|\\hat M - M|` exceeds both 3.29 estimated sds and 1% of M.
    """
    n = pi.size
    if not n:
        return None
    m_hat = float(np.sum(1.0 / pi))
    sd = float(np.sqrt(np.sum((1.0 - pi) / pi**2)))
    gap = m_hat - m
    if abs(gap) <= max(POOL_SIZE_Z * sd, 0.01 * m):
        return None
    expected = float(np.mean(pi)) * m
    return (
        f"Inclusion-probability column '{column}' cannot be right for this table: its "
        f"{n} labeled items' 1 / pi add up to {m_hat:.1f}, an unbiased estimate of the pool "
        f"size, but the pool has {m} items (z = {gap / sd if sd > 0 else np.inf:+.1f}). "
        f"Probabilities like these (mean {float(np.mean(pi)):.3g}) would have labeled about "
        f"{expected:.0f} of the {m} items, not {n}; with them every design variance is "
        f"{'too small' if gap < 0 else 'too large'}. Give each labeled item the probability "
        "with which it was drawn (e.g. n_h / N_h within its stratum)."
    )


def warn_pool_size(pi: FloatArray, m: int, column: str, *, stacklevel: int) -> None:
    """Warn (:class:`~slicewise.exceptions.InclusionProbabilityWarning`) with
    :func:`pool_size_check`'s message, if any."""
    message = pool_size_check(pi, m, column)
    if message is not None:
        warnings.warn(message, InclusionProbabilityWarning, stacklevel=stacklevel + 1)
