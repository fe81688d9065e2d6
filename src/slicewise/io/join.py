"""Build an item table from several sources joined on the item id."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, TypeAlias

import numpy as np
import pandas as pd

from slicewise._validation import check_choice
from slicewise.io._common import format_examples

__all__ = ["SignalSource", "add_grades", "build_item_table"]

SignalSource: TypeAlias = tuple[pd.DataFrame, str | Sequence[str]]
"""A signal source: a frame and the column(s) of it to use as cheap signals."""

_ID_MODES: tuple[Literal["raise", "intersection"], ...] = ("raise", "intersection")
_FUNC = "build_item_table"


def _names(value: str | Sequence[str], *, parameter: str) -> list[str]:
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"`{parameter}` must be a column name or a list of column names; got {item!r}."
            )
    return items


def _check_has(frame: pd.DataFrame, columns: Sequence[str], *, where: str, role: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{where} has no {role} column {format_examples(missing)}; "
            f"its columns: {format_examples([str(c) for c in frame.columns], limit=30)}."
        )


def _keys(
    frame: pd.DataFrame,
    on: Sequence[str],
    *,
    where: str,
    noun: str = "keys",
    hint: str | None = None,
) -> pd.Series:
    """The key of every row as text (one column, or the columns joined by '|').

    Raises when a key is missing or repeated: a key must name one row. ``noun`` and ``hint``
    word the messages (``"item ids"`` for a source of :func:`build_item_table`).
    """
    missing = frame[list(on)].isna().any(axis=1)
    if missing.any():
        raise ValueError(
            f"{where} has {int(missing.sum())} missing {noun} in column(s) "
            f"{format_examples(on)} (`on`); every row needs one."
        )
    text = frame[list(on)].astype(str)
    keys = text.iloc[:, 0] if len(on) == 1 else text.agg("|".join, axis=1)
    repeated = keys[keys.duplicated(keep=False)].unique().tolist()
    if repeated:
        rule = hint or (
            f"a key in {format_examples(on)} (`on`) must name one row (add the column that tells "
            "the rows apart, e.g. the model, to `on`)"
        )
        raise ValueError(
            f"{where} has {len(repeated)} duplicate {noun} (first: "
            f"{format_examples(repeated)}); {rule}."
        )
    return pd.Series(keys.to_numpy(), index=frame.index)


def _ids(frame: pd.DataFrame, on: str, *, where: str) -> pd.Series:
    """The id column as str, after checking it has no missing and no duplicate ids."""
    ids = _keys(
        frame,
        [on],
        where=where,
        noun="item ids",
        hint="ids must be unique within a source (a log with several epochs, trials or models "
        "has one row each: select or average them first)",
    )
    return ids.rename(on)


def _numeric(series: pd.Series, *, where: str, role: str) -> pd.Series:
    """The column as float64 (booleans as 0/1), raising on non-numeric entries."""
    if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
        return series.astype("float64")
    converted = pd.to_numeric(series, errors="coerce")
    bad = converted.isna() & series.notna()
    if bad.any():
        raise ValueError(
            f"{where} {role} column '{series.name}' has {int(bad.sum())} non-numeric values "
            f"(e.g. {format_examples(series[bad].unique().tolist())}); it must be numeric."
        )
    return converted.astype("float64")


def _gold_labels(series: pd.Series, *, where: str) -> pd.Series:
    """A gold-label column as float64, raising on non-numeric values or values outside [0, 1]."""
    y = _numeric(series, where=where, role="label")
    outside = y.notna() & ~y.between(0.0, 1.0)
    if outside.any():
        raise ValueError(
            f"{where} label column '{series.name}' has {int(outside.sum())} values outside "
            f"[0, 1] (e.g. {format_examples(y[outside].unique().tolist())}); gold labels must be "
            "binary or a score rescaled into [0, 1]."
        )
    return y


def _mismatch_message(name: str, extra: list[str], absent: list[str], gold_source: str) -> str:
    parts = []
    if extra:
        parts.append(
            f"{len(extra)} ids not in the `gold` source '{gold_source}' ({format_examples(extra)})"
        )
    if absent:
        parts.append(
            f"{len(absent)} ids of the `gold` source missing from it ({format_examples(absent)})"
        )
    return f"`signals` source '{name}' has " + " and ".join(parts)


def build_item_table(
    gold: pd.DataFrame,
    gold_column: str,
    signals: Mapping[str, SignalSource],
    *,
    on: str = "item_id",
    gold_source: str = "gold",
    profile: str | Sequence[str] = (),
    label: str = "gold",
    id_mismatch: Literal["raise", "intersection"] = "raise",
) -> pd.DataFrame:
    """Join a gold-label source and cheap-signal sources into one item table.

    The gold source lists every pool item once; its label is missing (NaN) on the
    unlabeled items, which is normal. Each signal source (a judge run, other models' runs
    of the same task...) must give a finite value for every item. Signal columns are
    renamed ``<source>:<column>`` so that sources cannot collide.

    Parameters
    ----------
    gold : pandas.DataFrame
        The source of the gold label Y, one row per pool item: a human-graded table, or a
        harness log read with e.g. :func:`read_lm_eval` (its ``exact_match`` or ``acc``).
    gold_column : str
        Column of ``gold`` holding Y: numbers (or booleans) in [0, 1], NaN when unlabeled.
    signals : mapping of str to (pandas.DataFrame, str or sequence of str)
        ``{source name: (frame, signal column(s))}``; may be empty for a table without
        signals.
    on : str, optional
        Item id column, present in every source (compared as text). Default ``"item_id"``.
    gold_source : str, optional
        Name of the gold source used in error messages. Default ``"gold"``.
    profile : str or sequence of str, optional
        Columns of ``gold`` copied unchanged as profile columns Z (e.g. ``"difficulty"``).
    label : str, optional
        Name of the label column in the result. Default ``"gold"``.
    id_mismatch : {'raise', 'intersection'}, optional
        What to do when a signal source does not have exactly the ids of the gold source:
        ``'raise'`` (default) raises; ``'intersection'`` keeps only the ids present in every
        source.

    Returns
    -------
    pandas.DataFrame
        Columns ``on`` (str), the ``profile`` columns, ``label`` (float64, NaN =
        unlabeled), then one float64 column ``<source>:<column>`` per signal, in gold-row
        order with a fresh index. Ready for :func:`slicewise.make_table`.

    Raises
    ------
    TypeError
        If ``gold`` or a signal frame is not a DataFrame, or a source is not a
        ``(frame, columns)`` pair.
    ValueError
        If a column is missing; a source has missing or duplicate ids (the message names the
        source, the count and up to 5 ids); gold labels are non-numeric or outside [0, 1];
        a signal is non-numeric or has missing or non-finite values (count per column);
        the ids of a signal source and of the gold source differ and ``id_mismatch`` is
        ``'raise'`` (how many each way, up to 5 shown); no id is shared by all sources;
        or output column names collide.

    Example
    -------
    >>> gold = pd.DataFrame({"item_id": ["a", "b", "c"], "human": [1.0, None, 0.0],
    ...                      "difficulty": [1, 2, 3]})
    >>> judge = pd.DataFrame({"item_id": ["c", "b", "a"], "score": [0.2, 0.6, 0.9]})
    >>> build_item_table(gold, "human", {"judge": (judge, "score")}, profile="difficulty")
      item_id  difficulty  gold  judge:score
    0       a           1   1.0          0.9
    1       b           2   NaN          0.6
    2       c           3   0.0          0.2
    """
    mode = check_choice(id_mismatch, _ID_MODES, name="id_mismatch", func=_FUNC)
    if not isinstance(gold, pd.DataFrame):
        raise TypeError(f"`gold` must be a pandas DataFrame; got {type(gold).__name__}.")
    if not isinstance(signals, Mapping):
        raise TypeError(
            "`signals` must be a mapping {source name: (frame, columns)}; "
            f"got {type(signals).__name__}."
        )
    gold_where = f"`gold` source '{gold_source}'"
    profile_cols = _names(profile, parameter="profile")
    _check_has(gold, [on], where=gold_where, role="id (`on`)")
    _check_has(gold, [gold_column], where=gold_where, role="label (`gold_column`)")
    _check_has(gold, profile_cols, where=gold_where, role="`profile`")

    sources: list[tuple[str, pd.DataFrame, list[str]]] = []
    for name, source in signals.items():
        where = f"`signals` source '{name}'"
        if not (isinstance(source, tuple) and len(source) == 2):
            raise TypeError(
                f"{where} must be a (DataFrame, column or columns) pair; got "
                f"{type(source).__name__}."
            )
        frame, columns = source
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"{where} frame must be a pandas DataFrame; got {type(frame).__name__}."
            )
        cols = _names(columns, parameter=f"signals['{name}']")
        if not cols:
            raise ValueError(f"{where} names no signal column; give at least one.")
        _check_has(frame, [on], where=where, role="id (`on`)")
        _check_has(frame, cols, where=where, role="signal")
        sources.append((str(name), frame, cols))

    out_names = [on, *profile_cols, label] + [f"{n}:{c}" for n, _, cols in sources for c in cols]
    clashes = sorted({c for c in out_names if out_names.count(c) > 1})
    if clashes:
        raise ValueError(
            f"Output columns {format_examples(clashes)} would appear twice; rename `label`, a "
            "`profile` column or a signal source so that every column name is unique."
        )

    gold_ids = _ids(gold, on, where=gold_where)
    y = _gold_labels(gold[gold_column], where=gold_where)
    table = pd.DataFrame({on: gold_ids.to_numpy()})
    for column in profile_cols:
        table[column] = gold[column].to_numpy()
    table[label] = y.to_numpy()

    keep = pd.Series(True, index=table.index)
    mismatches: list[str] = []
    aligned: list[tuple[str, pd.Series]] = []
    gold_set = set(table[on])
    for name, frame, cols in sources:
        where = f"`signals` source '{name}'"
        ids = _ids(frame, on, where=where)
        id_set = set(ids)
        extra = [i for i in ids if i not in gold_set]
        absent = [i for i in table[on] if i not in id_set]
        if extra or absent:
            mismatches.append(_mismatch_message(name, extra, absent, gold_source))
        keep &= table[on].isin(id_set)
        for column in cols:
            values = _numeric(frame[column], where=where, role="signal")
            series = pd.Series(values.to_numpy(), index=ids.to_numpy())
            aligned.append((f"{name}:{column}", series))
    if mismatches and mode == "raise":
        raise ValueError(
            "; ".join(mismatches)
            + ". Every source must list the same items (pass id_mismatch='intersection' to keep "
            "only the items present in every source)."
        )
    table = table[keep.to_numpy()].reset_index(drop=True)
    if table.empty:
        raise ValueError(
            f"No item id is shared by the `gold` source '{gold_source}' and every `signals` "
            "source; nothing to join."
        )
    problems: list[str] = []
    for column, series in aligned:
        column_values = series.reindex(table[on]).to_numpy(dtype=np.float64)
        bad = ~np.isfinite(column_values)
        if bad.any():
            shown = format_examples(table[on][bad].tolist())
            problems.append(f"'{column}' has {int(bad.sum())} (ids: {shown})")
        table[column] = column_values
    if problems:
        raise ValueError(
            "`signals` columns have missing or non-finite values: "
            + "; ".join(problems)
            + ". Cheap signals must be observed (finite) on every item: fill or drop those "
            "items first."
        )
    return table


def add_grades(
    items: pd.DataFrame,
    grades: pd.DataFrame,
    *,
    on: str | Sequence[str] = "item_id",
    label: str | None = None,
) -> pd.DataFrame:
    """Add a gold-label column from a table of grades to an item table (``slicewise join``).

    ``items`` lists every pool item (an imported log: one row per item, or per model and item);
    ``grades`` lists the graded ones, a key and a label per row. The result is ``items`` with the
    label column added: the grade where a grades row has the same key, NaN (unlabeled)
    elsewhere. Keys are compared as text, so an id read as a number from CSV matches the same id
    read as text from Parquet.

    Parameters
    ----------
    items : pandas.DataFrame
        The item table; its rows and columns are kept, in order.
    grades : pandas.DataFrame
        The grades: the key column(s) ``on`` and the label column.
    on : str or sequence of str, optional
        Key column(s), present in both tables, that name one row of each (for a long table of
        several models, the model column and the item id). Default ``"item_id"``.
    label : str, optional
        Label column of ``grades`` (numbers or booleans in [0, 1]; NaN = not graded). Default:
        the only column of ``grades`` that is not a key; other columns of ``grades`` are not
        used.

    Returns
    -------
    pandas.DataFrame
        A copy of ``items`` with the float64 column ``label`` appended.

    Raises
    ------
    ValueError
        If a key column is missing from either table; a key is missing or repeated in either
        table (count and up to 5 keys); ``label`` is not given and ``grades`` has several
        non-key columns, or it is given and absent; ``items`` already has a column of that
        name; the label is non-numeric or outside [0, 1]; or a grades key matches no item
        (count and up to 5 keys: no grade is dropped silently).

    Example
    -------
    >>> items = pd.DataFrame({"model": ["a", "a", "b"], "qid": [1, 2, 1], "acc": [1, 0, 1]})
    >>> grades = pd.DataFrame({"model": ["a", "b"], "qid": ["2", "1"], "human": [0, 1]})
    >>> add_grades(items, grades, on=["model", "qid"])
      model  qid  acc  human
    0     a    1    1    NaN
    1     a    2    0    0.0
    2     b    1    1    1.0
    """
    for name, frame in (("items", items), ("grades", grades)):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"`{name}` must be a pandas DataFrame; got {type(frame).__name__}.")
    keys = _names(on, parameter="on")
    if not keys:
        raise ValueError("`on` names no key column; give at least one.")
    _check_has(items, keys, where="`items`", role="key (`on`)")
    _check_has(grades, keys, where="`grades`", role="key (`on`)")
    if label is None:
        others = [str(c) for c in grades.columns if c not in keys]
        if len(others) != 1:
            raise ValueError(
                f"`grades` has {len(others)} columns besides the key {format_examples(keys)} "
                f"({format_examples(others)}); name the label column with `label`."
            )
        label = others[0]
    _check_has(grades, [label], where="`grades`", role="label (`label`)")
    if label in items.columns:
        raise ValueError(
            f"`items` already has a column '{label}' (`label`); rename it in one of the tables."
        )
    item_keys = _keys(items, keys, where="`items`")
    grade_keys = _keys(grades, keys, where="`grades`")
    unmatched = grade_keys[~grade_keys.isin(set(item_keys))].tolist()
    if unmatched:
        raise ValueError(
            f"`grades` has {len(unmatched)} of {len(grade_keys)} keys that match no row of "
            f"`items` ({format_examples(unmatched)}); check the key columns "
            f"{format_examples(keys)} (`on`) and that the grades belong to these items."
        )
    y = _gold_labels(grades[label], where="`grades`")
    by_key = pd.Series(y.to_numpy(), index=grade_keys.to_numpy())
    out = items.copy()
    out[label] = by_key.reindex(item_keys.to_numpy()).to_numpy(dtype=np.float64)
    return out
