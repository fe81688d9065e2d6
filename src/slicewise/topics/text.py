"""The text column of :func:`slicewise.topics`, checked once at the boundary.

Every text must be a non-empty string: a missing value, a number or a text of white space alone
stops with an error naming the column, the rule, how many rows break it and which, so nothing is
silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import format_examples


def check_text_name(text: object, columns: Sequence[str], *, func: str) -> str:
    """The ``text`` parameter: the name of a column of the table."""
    if not isinstance(text, str):
        raise TypeError(
            f"The 'text' parameter of {func} must be a column name (str). Got {text!r} instead."
        )
    if text not in columns:
        raise ValueError(
            f"The 'text' parameter of {func} names column {text!r}, which the table does not "
            f"have. Columns: {format_examples(columns, limit=12)}."
        )
    return text


def text_values(
    values: Sequence[object] | pd.Series, *, column: str, func: str, offset: int = 0
) -> list[str]:
    """The texts of column ``column`` as a list of str, or a ValueError / TypeError.

    ``offset`` is added to the row numbers in messages (a batch of a streamed pool).
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    rows = series.index if offset == 0 else pd.RangeIndex(offset, offset + len(series))
    missing = np.asarray(series.isna(), dtype=bool)
    if missing.any():
        raise ValueError(
            f"Column {column!r} (the 'text' parameter of {func}) has {int(missing.sum())} "
            f"missing value(s), at rows {format_examples(rows[missing])}; every item needs a "
            "text to be given a topic. Fill or drop those rows first."
        )
    raw = series.tolist()
    not_str = np.array([not isinstance(v, str) for v in raw], dtype=bool)
    if not_str.any():
        shown = [f"{v!r} ({type(v).__name__})" for v in np.asarray(raw, dtype=object)[not_str][:5]]
        raise TypeError(
            f"Column {column!r} (the 'text' parameter of {func}) must hold strings; "
            f"{int(not_str.sum())} value(s) are not, at rows {format_examples(rows[not_str])}: "
            f"{', '.join(shown)}."
        )
    texts: list[str] = raw
    empty = np.array([not t.strip() for t in texts], dtype=bool)
    if empty.any():
        raise ValueError(
            f"Column {column!r} (the 'text' parameter of {func}) has {int(empty.sum())} empty "
            f"or white-space text(s), at rows {format_examples(rows[empty])}; a topic is read "
            "from the words of a text. Fill or drop those rows first."
        )
    return texts
