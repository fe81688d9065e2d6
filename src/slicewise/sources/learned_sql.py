"""The learned pass of a categorical profile as one SQL aggregate, for the sources that run SQL
over the pool (DuckDB, Spark).

A :class:`~.kernel_passes.ColumnSumsPass` of logistic models' predictions (the fold models of a
cross-fit, the smoothing's synthetic covariate) needs, per level of the profile, the count and the
sums of the predictions and of products of their average with the signals. Each model's linear
predictor is a SQL expression of the standardised signals and of a few values per level joined
to the pool (``linear_predictors`` of the pass's column maker: the standardised Z and its square,
or the per-level intercepts and slopes where the learner's design has level indicators; the
fewer joined columns, the faster the join), so every row's prediction is 1 / (1 + exp(-eta))
(scipy's ``expit``, to the last bits), and the per-level sums of the pass's columns
(``sql_columns``) are one ``GROUP BY`` that the engine runs on all its workers: no row reaches
Python. :func:`learned_query` writes the query in an engine's :class:`Dialect`;
:func:`level_state` turns its rows into the pass's state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray
from .kernel_passes import ColumnSumsPass, MomentsPass, sql_number

#: Most levels whose per-level values are written into the query (a VALUES table).
SQL_MODEL_LEVELS = 1000


@dataclass(frozen=True)
class Dialect:
    """How an engine writes a quoted column name, a text literal (None when the text cannot be
    written safely) and a table of literal rows ``rows`` with column ``names``, named ``models``."""

    quote: Callable[[str], str]
    text: Callable[[str], str | None]
    values: Callable[[str, Sequence[str]], str]


def standardised(pass_: MomentsPass, quote: Callable[[str], str]) -> list[str]:
    """The standardised signals x_j = (s_j - mean_j) / scale_j as SQL columns ``x0``, ``x1``,
    ... (the same double arithmetic as :meth:`~.kernel_passes.MomentsPass.features`)."""
    return [
        f"(CAST({quote(name)} AS DOUBLE) - {sql_number(float(m))}) / {sql_number(float(s))} AS x{j}"
        for j, (name, m, s) in enumerate(zip(pass_.signals, pass_.mean, pass_.scale, strict=True))
    ]


def learned_query(pass_: ColumnSumsPass, dialect: Dialect, table: str) -> str | None:
    """The pass as one grouped aggregate over the pool ``table``: per level, the count and the
    sums of the pass's columns (in the order of the pass's ``compute``).

    None (the caller scans record batches) when the profile is not one text column of at most
    :data:`SQL_MODEL_LEVELS` levels that the dialect can write, or when a model is not a
    non-constant logistic one with finite coefficients (boosting, a constant fold).
    """
    reader = pass_.reader
    levels = reader.levels
    if reader.locality.kind != "categorical" or levels is None or len(reader.z) != 1:
        return None
    if len(levels) > SQL_MODEL_LEVELS or not all(isinstance(v, str) for v in levels):
        return None
    linear = getattr(pass_.compute, "linear_predictors", None)
    columns = getattr(pass_.compute, "sql_columns", None)
    if linear is None or columns is None:
        return None
    x = [f"x{j}" for j in range(len(reader.signals))]
    models = linear(np.arange(len(levels), dtype=np.float64), x, "u")
    if models is None or not np.all(np.isfinite(models.joined)):
        return None
    p = [f"p{m}" for m in range(len(models.etas))]
    predictions = [
        f"1 / (1 + exp(-({eta}))) AS {name}" for eta, name in zip(models.etas, p, strict=True)
    ]
    scanned = [f"{dialect.quote(reader.z[0])} AS level", *standardised(reader, dialect.quote)]
    rows = f"(SELECT {', '.join(scanned)} FROM {table}) AS pool_rows"
    if models.names:  # the per-level values the linear predictors read
        written = []
        for level, row in zip(levels, models.joined, strict=True):
            literal = dialect.text(level)
            if literal is None:
                return None
            written.append("(" + ", ".join([literal, *(sql_number(float(v)) for v in row)]) + ")")
        joined = dialect.values(", ".join(written), ["level", *models.names])
        rows = f"{rows} LEFT JOIN {joined} USING (level)"
    if models.made:  # once per row, read by every model
        rows = f"(SELECT *, {', '.join(models.made)} FROM {rows}) AS with_made"
    made, summed = columns(p, x)
    sums = ", ".join(["count(*)", *(f"sum({c})" for c in summed)])
    return (
        f"SELECT level, {sums} FROM (SELECT {', '.join(['*', *made])} FROM "
        f"(SELECT {', '.join(['level', *x, *predictions])} FROM {rows}) AS predicted) "
        "AS made GROUP BY level"
    )


def level_state(
    pass_: ColumnSumsPass, found: Sequence[Sequence[Any]]
) -> dict[float, FloatArray] | None:
    """The pass's state from the query's rows (level, count, sums): per scale, (G, 1 + d) sums
    [w, w columns] (one row for ``inf``, the sum over the levels); None when a row's level is
    not one of the pass's (the engine converted a level differently)."""
    levels = pass_.reader.levels
    assert levels is not None
    position = {level: i for i, level in enumerate(levels)}
    per_level = np.zeros((len(levels), len(found[0]) - 1 if found else 1))
    for row in found:
        i = position.get(row[0])
        if i is None:
            return None
        per_level[i] = np.asarray(list(row[1:]), dtype=np.float64)
    grid = pass_.reader.locality.grid[:, 0].astype(np.intp)
    return {
        scale: per_level.sum(axis=0, keepdims=True) if np.isinf(scale) else per_level[grid]
        for scale in pass_.scales
    }
