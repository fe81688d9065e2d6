"""Gold labels from a separate table, joined to a pool by key (the rules of ``slicewise join``).

Keys are compared as text, as :func:`slicewise.io.join.add_grades` compares them, so an id read
as a number from CSV matches the same id read as text from Parquet. Every key of the gold table
must name exactly one pool row: a key that matches no pool row, or two or more, stops with an
error naming how many and a few examples (no grade is dropped silently).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._typing import FloatArray
from .._validation import column_list, format_examples
from ..data.files import as_frame
from ..io.join import _check_has, _gold_labels, _keys
from .scan import KEY


@dataclass(frozen=True)
class Gold:
    """The gold table's keys (as text, unique) and labels (NaN = not graded)."""

    on: tuple[str, ...]
    keys: tuple[str, ...]
    y: FloatArray


def read_gold(
    gold: pd.DataFrame | str | os.PathLike[str],
    *,
    on: str | Sequence[str] | None,
    label: str,
    func: str = "profile",
) -> Gold:
    """Validate the gold table: key columns, unique and present keys, labels in [0, 1]."""
    if on is None:
        raise ValueError(
            f"The 'on' parameter of {func} must name the key column(s) that join `gold` to the "
            "pool (e.g. on='conversation_id'). Got None instead."
        )
    keys = column_list(on, name="on", func=func)
    if not keys:
        raise ValueError(f"The 'on' parameter of {func} must name at least one key column.")
    frame = as_frame(gold, name="gold", func=func)
    _check_has(frame, keys, where="`gold`", role="key (`on`)")
    _check_has(frame, [label], where="`gold`", role="label (`label`)")
    text = _keys(frame, keys, where="`gold`")
    y = _gold_labels(frame[label], where="`gold`")
    return Gold(on=tuple(keys), keys=tuple(text.tolist()), y=y.to_numpy(dtype=np.float64))


def match_gold(gold: Gold, rows: pd.DataFrame) -> tuple[pd.DataFrame, FloatArray]:
    """The pool rows of the graded keys, in gold order, and their labels.

    ``rows`` are the pool rows whose key is one of the gold keys (column :data:`KEY` holds the key
    text). Raises when a gold key matches no pool row or several.
    """
    counts = rows[KEY].value_counts()
    found = counts.reindex(list(gold.keys), fill_value=0)
    missing = found.index[found.to_numpy() == 0].tolist()
    repeated = found.index[found.to_numpy() > 1].tolist()
    names = format_examples(gold.on)
    if missing:
        raise ValueError(
            f"`gold` has {len(missing)} of {len(gold.keys)} keys that match no row of the pool "
            f"({format_examples(missing)}); check the key columns {names} (`on`) and that the "
            "grades belong to these items."
        )
    if repeated:
        raise ValueError(
            f"`gold` has {len(repeated)} keys that match two or more rows of the pool (first: "
            f"{format_examples(repeated)}); a key in {names} (`on`) must name one pool row (add "
            "the column that tells the rows apart, e.g. the model, to `on`)."
        )
    graded = ~np.isnan(gold.y)
    by_key = rows.set_index(KEY)
    ordered = by_key.loc[[k for k, g in zip(gold.keys, graded, strict=True) if g]]
    return ordered.reset_index(drop=True), gold.y[graded]
