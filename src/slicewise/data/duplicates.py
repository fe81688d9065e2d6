"""Repeated items in a table given without an ``id``: every row counts as an item, so an item
that appears twice (a table concatenated with itself, a long table of several models read as
one) counts twice, and its label twice: n doubles and the standard errors shrink by about
sqrt(2), silently. Rows may legitimately agree on the profile, the signals and the label, so
the check looks for a column that names items (``id``, ``item_id``, ``uid``, ``question_key``
...) and repeats."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from .._validation import format_examples

#: Column names that name items: ``id``, ``uid``, ``uuid``, ``key``, ``idx`` alone or as the last
#: word (``item_id``, ``doc-id``, ``questionId``).
ID_LIKE = re.compile(r"(?:^|[_\-\s.])(?:id|uid|uuid|key|idx)$|^id$|[a-z]Id$", flags=re.IGNORECASE)


def id_like_columns(frame: pd.DataFrame, used: Sequence[str]) -> list[str]:
    """The columns of ``frame`` whose name says they name items, other than ``used``."""
    return [c for c in frame.columns if isinstance(c, str) and c not in used and ID_LIKE.search(c)]


def repeated_items_note(frame: pd.DataFrame, used: Sequence[str]) -> str | None:
    """The warning for the first id-like column with repeated values, or None.

    Parameters
    ----------
    frame : DataFrame
        The table as given (one row per item).
    used : sequence of str
        Its profile, signal and label columns (never taken for an id).
    """
    for col in id_like_columns(frame, used):
        repeated = frame[col].duplicated(keep=False)
        if not repeated.any():
            continue
        n_values = int(frame.loc[repeated, col].nunique())
        exact = int(frame.duplicated(keep="first").sum())
        examples = format_examples(frame.loc[repeated, col].unique()[:5].tolist())
        same = (
            f"{exact} row(s) repeat an earlier row in every column"
            if exact
            else "the rows that share a value differ in other columns"
        )
        return (
            f"Column '{col}' looks like an item id and {n_values} of its values appear on more "
            f"than one row ({int(repeated.sum())} rows; e.g. {examples}); {same}. Without "
            "`id` every row counts as a separate item, so a repeated item and its label count "
            "twice: n grows and the standard errors shrink (by about sqrt(2) when every item "
            f"appears twice). Drop the repeated rows, or pass id='{col}' (--id {col}) to refuse "
            "them."
        )
    return None
