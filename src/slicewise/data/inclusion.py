"""Known inclusion probabilities of the labeled items, read and validated at the boundary."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray
from .._validation import format_examples
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
    return np.asarray(values, dtype=np.float64)
