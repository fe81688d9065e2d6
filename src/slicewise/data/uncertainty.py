"""Columns that say how reliable the signals are on each item (``uncertainty=``).

A judge's confidence says nothing about the label by itself; it says where the judge can be
trusted. A centered control variate linear in the signals cannot use that: on a design where a
judge is near-perfect on half of the items and a coin on the other half, with a confidence
column that says which half, the best linear adjustment in (judge, confidence) explains about a
quarter of the label's variance, the one with the product judge x confidence about half. So
each named column u enters the signals together with its product with every given signal s,
s x u (named ``'s*u'``): a coefficient on s x u is a coefficient on s that varies with u. The
new columns are functions of the pool's own columns, no label is used, so every centered
control variate built on them stays unbiased; and the residual model of
:func:`slicewise.next_items` (which reads the signals) sees where the signals are unreliable.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray


def with_uncertainty(
    frame: pd.DataFrame,
    signals: FloatArray,
    names: tuple[str, ...],
    given: Sequence[str],
    uncertainty: Sequence[str],
    rows: IntArray | None,
    *,
    func: str,
) -> tuple[FloatArray, tuple[str, ...], str]:
    """The signal matrix with the uncertainty columns and their products appended.

    Parameters
    ----------
    frame : DataFrame
        The input table (rows in input order).
    signals : ndarray of shape (M, K)
        The validated signals in table order (imputed columns and indicators included).
    names : tuple of str
        Their names.
    given : sequence of str
        The signal columns the user named (products are made with these only, not with
        missingness indicators).
    uncertainty : sequence of str
        The uncertainty columns: numeric and finite on every item.
    rows : ndarray of int, optional
        The input row of every table item (None: the same order).
    func : str
        The public function named in error messages.

    Returns
    -------
    signals, names, note
        The widened matrix, its column names and a note saying what was added.

    Raises
    ------
    ValueError
        When a column is absent, non-numeric, missing or infinite somewhere.
    """
    added: list[FloatArray] = []
    added_names: list[str] = []
    for col in uncertainty:
        if col not in frame.columns:
            raise ValueError(
                f"The 'uncertainty' parameter of {func} names column '{col}', which is not in "
                "the table."
            )
        series = frame[col]
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            raise ValueError(
                f"Uncertainty column '{col}' has {int(bad.sum())} missing, non-numeric or "
                "infinite values; the 'uncertainty' parameter of "
                f"{func} needs finite numbers on every item."
            )
        u = values if rows is None else values[rows]
        if col not in names:
            added.append(u)
            added_names.append(col)
        for signal in given:
            if signal in uncertainty:  # u x u' would repeat u' x u
                continue
            added.append(signals[:, names.index(signal)] * u)
            added_names.append(f"{signal}*{col}")
    taken = [name for name in added_names if name in names]
    if taken:
        raise ValueError(
            f"The 'uncertainty' parameter of {func} would add the signal(s) {taken}, which are "
            "already columns of the table's signals; rename them."
        )
    out = np.column_stack([signals, *added]) if added else signals
    note = (
        f"Uncertainty column(s) {', '.join(map(repr, uncertainty))} entered as signals with "
        f"their products with each signal ({', '.join(added_names)}), so that a signal can "
        "count where it is reliable."
    )
    return np.asarray(out, dtype=np.float64), (*names, *added_names), note
