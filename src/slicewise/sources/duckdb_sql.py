"""The SQL that DuckDB runs for a pool of :mod:`slicewise.sources.duckdb`: the statistics pass
(:func:`sql_stats`: counts, means, deviations, levels, the labeled rows), the kernel sums of a
categorical profile as one ``GROUP BY`` (:func:`category_sums`, or :class:`LevelSums` taken in
the statistics scan) and the sums of the logistic models' predictions per level
(:func:`learned_level_sums`)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray
from ..moments.pool import ScaleSums
from .kernel_passes import ColumnSumsPass, MomentsPass, sql_number
from .learned_sql import Dialect, learned_query, level_state, standardised
from .scan import KEY, MAX_LEVELS, Stats, StatsPass


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _level_scale_sums(
    pass_: MomentsPass, found: Sequence[tuple[Any, FloatArray]]
) -> dict[float, ScaleSums] | None:
    """The categorical kernel sums from per-level rows [count, sums of x, sums of x_j x_l]
    (``found``: (level as DuckDB returns it, row)); None when a level is not one of the pass's."""
    assert pass_.levels is not None
    p = len(pass_.signals)
    position = {level: i for i, level in enumerate(pass_.levels)}
    table = np.zeros((len(pass_.levels), 1 + p + p * (p + 1) // 2))
    for level, row in found:
        i = position.get(level)
        if i is None:
            return None
        table[i] = row
    grid = pass_.locality.grid[:, 0].astype(np.intp)
    out: dict[float, ScaleSums] = {}
    for scale in pass_.scales:
        part = table.sum(axis=0, keepdims=True) if np.isinf(scale) else table[grid]
        out[scale] = ScaleSums(
            mass=part[:, 0].copy(),
            sq_mass=part[:, 0].copy(),
            first=part[:, 1 : 1 + p],
            second=part[:, 1 + p :],
        )
    return out


@dataclass(frozen=True)
class LevelSums:
    """Per level of a text profile column, taken in the statistics scan: the count and the sums
    of the signals' deviations from their pool means d = s - mean and of d_j d_l (j <= l).

    The kernel sums of a categorical profile are those of x = d / scale, so dividing these sums
    by the scales gives them without a third scan of the signals (:meth:`kernel_sums`).
    """

    signals: tuple[str, ...]
    mean: FloatArray
    rows: tuple[tuple[Any, FloatArray], ...]

    def kernel_sums(self, pass_: MomentsPass) -> dict[float, ScaleSums] | None:
        """The sums :func:`category_sums` gives, or None when ``pass_`` standardises by other
        means (or reads other signals) than these sums were centred at."""
        if pass_.signals != self.signals or not np.array_equal(pass_.mean, self.mean):
            return None
        p = len(self.signals)
        rows, cols = np.triu_indices(p)
        scale = np.asarray(pass_.scale, dtype=np.float64)
        divide = np.concatenate([[1.0], scale, scale[rows] * scale[cols]])
        return _level_scale_sums(pass_, [(level, row / divide) for level, row in self.rows])


def category_sums(relation: Any, pass_: MomentsPass) -> dict[float, ScaleSums] | None:
    """The kernel sums of a categorical profile as one ``GROUP BY`` over the pool.

    Per level: the count, the sums of the standardised signals x = (s - mean) / scale (the same
    double arithmetic as :class:`~slicewise.sources.scan.MomentsPass`) and of their products
    x_j x_l (j <= l, the row-major upper triangle of :class:`ScaleSums`); the global sums (scale
    inf) add up the levels. None when a level DuckDB returns is not one of the pass's levels (a
    type the two engines convert differently): the caller then scans record batches.
    """
    assert pass_.levels is not None
    z = quote(pass_.z[0])
    p = len(pass_.signals)
    standardised = _standardised(pass_)
    rows, cols = np.triu_indices(p)
    sums = ["count(*)"] + [f"sum(x{j})" for j in range(p)]
    sums += [f"sum(x{a} * x{b})" for a, b in zip(rows, cols, strict=True)]
    inner = ", ".join([f"{z} AS level", *standardised])
    sql = f"SELECT level, {', '.join(sums)} FROM (SELECT {inner} FROM pool) GROUP BY level"
    result = relation.query("pool", sql).fetchall()
    found = [(row[0], np.asarray(row[1:], dtype=np.float64)) for row in result]
    return _level_scale_sums(pass_, found)


def _standardised(pass_: MomentsPass) -> list[str]:
    """The standardised signals as SQL columns ``x0``, ``x1``, ...
    (:func:`.learned_sql.standardised`)."""
    return standardised(pass_, quote)


def _values(rows: str, names: Sequence[str]) -> str:
    return f"(VALUES {rows}) AS models({', '.join(names)})"


def learned_level_sums(relation: Any, pass_: ColumnSumsPass) -> dict[float, FloatArray] | None:
    """A :class:`~.kernel_passes.ColumnSumsPass` of logistic models' predictions on a
    categorical profile as one ``GROUP BY`` over the pool (:mod:`.learned_sql`); None when the
    pass cannot be written in SQL (the caller scans record batches)."""
    sql = learned_query(pass_, Dialect(quote=quote, text=_text, values=_values), "pool")
    if sql is None:
        return None
    return level_state(pass_, relation.query("pool", sql).fetchall())


def to_arrow(relation: Any) -> Any:
    """The relation's rows as an Arrow table (the method's name depends on the duckdb version)."""
    to_table = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    return to_table()


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_stats(
    relation: Any, pass_: StatsPass, connection: Any = None
) -> tuple[Stats, LevelSums | None] | None:
    """:class:`~slicewise.sources.scan.StatsPass` as SQL: an aggregate (counts, missing and
    non-finite values, means, minimum, maximum, integrality), a second one for the sums of
    squared deviations from those means (numpy's two-pass variance), one ``DISTINCT`` per
    profile column whose levels are needed, and the labeled rows (a semi join with the gold
    keys on ``connection``, or an ``IN`` list without one; or the rows whose label is present).

    For one text profile column (a categorical profile) the second aggregate is grouped by the
    column: its groups are the levels (no ``DISTINCT``), and its per-level sums of the signals'
    deviations and their products (:class:`LevelSums`, returned beside the statistics) are the
    categorical kernel sums once divided by the scales, so the signals are scanned twice, not
    three times.

    The same definitions as the record-batch pass: non-finite counts include missing values and
    keys match as text (integer key columns are compared as integers with the gold keys that
    are integers written the way a cast to text writes them, which are the only ones whose text
    can match). Where a profile or signal value is missing or non-finite the profile stops with
    an error, so the moments are taken over all rows. None (the caller scans record batches)
    when a key column is neither an integer nor a string, whose text DuckDB and Arrow could
    write differently.
    """
    import pyarrow as pa

    schema = to_arrow(relation.limit(0)).schema
    if pass_.gold_keys is not None:
        for name in pass_.on:
            kind = schema.field(name).type
            if not (pa.types.is_integer(kind) or pa.types.is_string(kind)):
                return None
    numeric = [c for c, flag in zip(pass_.z, pass_.numeric_z, strict=True) if flag]
    values = [f"CAST({quote(c)} AS DOUBLE)" for c in (*numeric, *pass_.signals)]
    grouped = len(pass_.z) == 1 and not pass_.numeric_z[0] and bool(pass_.signals)
    level_sums: LevelSums | None = None
    z_min: list[float] = []
    z_max: list[float] = []
    z_integer: list[bool] = []
    if grouped:  # one text profile column: one grouped aggregate gives every statistic
        rows, z_missing, bad, means, level_sums = _grouped_stats(relation, pass_, values)
        p = len(values)
        upper_rows, upper_cols = np.triu_indices(p)
        diagonal = 1 + p + np.flatnonzero(upper_rows == upper_cols)
        squares = np.zeros(p)
        for _, sums in level_sums.rows:
            squares += sums[diagonal]
    else:
        rows, z_missing, bad, means, squares, z_min, z_max, z_integer = _pool_stats(
            relation, pass_, values, len(numeric)
        )
    q = len(numeric)
    levels: list[set[Any] | None] = []
    for name, flag in zip(pass_.z, pass_.numeric_z, strict=True):
        if level_sums is not None:  # the groups of the grouped aggregate
            present = {level for level, _ in level_sums.rows if level is not None}
            levels.append(present if len(present) <= MAX_LEVELS else None)
            continue
        if pass_.level_cap == 0 and flag:
            levels.append(None)
            continue
        cap = pass_.level_cap if flag else MAX_LEVELS
        sql = f"SELECT DISTINCT {quote(name)} FROM pool WHERE {quote(name)} IS NOT NULL"
        distinct = relation.query("pool", f"{sql} LIMIT {cap + 1}").fetchall()
        levels.append({v[0] for v in distinct} if len(distinct) <= cap else None)
    stats = Stats(
        rows=rows,
        z_missing=z_missing,
        z_nonfinite=tuple(bad[:q]),
        z_moments=(rows, means[:q], squares[:q]),
        z_min=np.asarray(z_min),
        z_max=np.asarray(z_max),
        z_integer=tuple(z_integer),
        z_levels=tuple(levels),
        signal_bad=tuple(bad[q:]),
        signal_moments=(rows, means[q:], squares[q:]),
        labeled=_labeled_rows(relation, pass_, connection),
    )
    return stats, level_sums


def _pool_stats(
    relation: Any, pass_: StatsPass, values: Sequence[str], q: int
) -> tuple[
    int, tuple[int, ...], list[int], FloatArray, FloatArray, list[float], list[float], list[bool]
]:
    """Row count, missing profile values, missing or non-finite values of the numeric columns
    ``values`` (the first ``q`` are the numeric profile columns), their means and sums of
    squared deviations from the means, and the profile columns' minimum, maximum and
    integrality, from one aggregate over the pool.

    The sums are taken of the values minus a shift c (their mean over the first
    :data:`SHIFT_ROWS` rows, as :func:`_grouped_stats` does), d = v - c: the mean is m = c +
    sum d / n and the sum of squared deviations sum d^2 - n (m - c)^2 (the shifted-data
    algorithm; with c near m it cancels no more than numpy's two-pass sums), so one scan gives
    what an aggregate of the means and a second one of the squared deviations gave. The
    missing values are counted per column (``count``), the non-finite ones only when a mean is
    not finite (a second query, on data the profile refuses). The squared deviations are zeros
    when a value is missing or not finite (the profile stops).
    """
    shift = _head_means(relation, values)
    shifted = [
        f"{v} - {sql_number(float(c))} AS d{j}"
        for j, (v, c) in enumerate(zip(values, shift, strict=True))
    ]
    zq = [f"{v} AS v{j}" for j, v in enumerate(values[:q])]
    d = [f"d{j}" for j in range(len(values))]
    terms = ["count(*)"]
    terms += [f"count(*) - count({quote(c)})" for c in pass_.z]
    terms += [f"count({x})" for x in d]
    terms += [f"sum({x})" for x in d]
    terms += [f"sum({x} * {x})" for x in d]
    terms += [
        f"min(v{j}), max(v{j}), coalesce(bool_and(v{j} = round(v{j})), TRUE)" for j in range(q)
    ]
    z_raw = [quote(c) for c in pass_.z]
    rows_of = f"(SELECT {', '.join([*z_raw, *shifted, *zq])} FROM pool) AS shifted"
    row = list(relation.query("pool", f"SELECT {', '.join(terms)} FROM {rows_of}").fetchall()[0])
    rows = int(row.pop(0))
    z_missing = tuple(int(row.pop(0)) for _ in pass_.z)
    present = np.asarray([int(row.pop(0)) for _ in values], dtype=np.float64)
    first = np.asarray([_number(row.pop(0)) for _ in values], dtype=np.float64)
    second = np.asarray([_number(row.pop(0)) for _ in values], dtype=np.float64)
    bad = [int(rows - n) for n in present]
    z_min, z_max, z_integer = [], [], []
    for _ in range(q):
        z_min.append(float(row.pop(0)))
        z_max.append(float(row.pop(0)))
        z_integer.append(bool(row.pop(0)))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        means = np.where(present > 0, shift + first / np.where(present > 0, present, 1), np.nan)
        squares = np.zeros(len(values))
        if rows and not any(bad):
            squares = second - rows * (means - shift) ** 2
    if rows and not np.all(np.isfinite(means[np.asarray(bad) < rows])):
        counted = ", ".join(
            f"count(*) FILTER (WHERE NOT coalesce(isfinite({v}), FALSE))" for v in values
        )
        found = relation.query("pool", f"SELECT {counted} FROM pool").fetchall()[0]
        bad = [int(b) for b in found]
        squares = np.zeros(len(values))
    return rows, z_missing, bad, means, squares, z_min, z_max, z_integer


def _head_means(relation: Any, values: Sequence[str]) -> FloatArray:
    """The means of the finite ``values`` over the first :data:`SHIFT_ROWS` rows (0 where there
    is none): the shift of the sums of :func:`_pool_stats` and :func:`_grouped_stats`."""
    if not values:
        return np.zeros(0)
    head = ", ".join(f"coalesce(avg({v}) FILTER (WHERE isfinite({v})), 0)" for v in values)
    found = relation.query("pool", f"SELECT {head} FROM (SELECT * FROM pool LIMIT {SHIFT_ROWS})")
    return np.asarray(found.fetchall()[0], dtype=np.float64)


def _number(value: Any) -> float:
    """A SQL number as a float, NULL (a sum over no values) as NaN."""
    return math.nan if value is None else float(value)


#: Rows at the head of the pool whose mean signals shift the sums of :func:`_grouped_stats`.
SHIFT_ROWS = 1 << 16


def _grouped_stats(
    relation: Any, pass_: StatsPass, values: Sequence[str]
) -> tuple[int, tuple[int, ...], list[int], FloatArray, LevelSums]:
    """Row count, missing profile values, non-finite signal values, the signals' means and
    their :class:`LevelSums`, from one aggregate grouped by the text profile column.

    The sums are taken of the signals minus a shift c (their mean over the first
    :data:`SHIFT_ROWS` rows), d = s - c, and moved to the pool means m = c + sum d / n
    exactly: sum (s - m) = sum d - n (m - c), sum (s_j - m_j)(s_l - m_l) = sum d_j d_l -
    (m_j - c_j) sum d_l - (m_l - c_l) sum d_j + n (m_j - c_j)(m_l - c_l). With c near m the
    terms cancel no more than in the two-pass sums of squared deviations (the shifted-data
    algorithm), so one scan gives what the means and a second scan gave.

    The missing signal values are counted per signal (``count``), the non-finite ones only when
    a sum of squares is not finite (a second query, on data the profile refuses), and each
    deviation is made once per row: at 1e7 rows the query took 1.65-1.73 processor seconds
    when it tested every value for finiteness (``FILTER (WHERE NOT isfinite(...))``) and wrote
    each deviation once per use, 1.14 this way, and the floor's aggregate of the same sums
    0.9-1.1.
    """
    shift = _head_means(relation, values)
    z = quote(pass_.z[0])
    p = len(values)
    shifted = [
        f"{v} - {sql_number(float(c))} AS d{j}"
        for j, (v, c) in enumerate(zip(values, shift, strict=True))
    ]
    d = [f"d{j}" for j in range(p)]
    upper_rows, upper_cols = np.triu_indices(p)
    sums = [f"sum({x})" for x in d]
    sums += [f"sum({d[a]} * {d[b]})" for a, b in zip(upper_rows, upper_cols, strict=True)]
    # count(d) counts the present values; a non-finite one makes its sum of squares non-finite
    terms = ["count(*)", *(f"count({x})" for x in d), *sums]
    rows_of = f"(SELECT {z} AS level, {', '.join(shifted)} FROM pool) AS shifted"
    sql = f"SELECT level, {', '.join(terms)} FROM {rows_of} GROUP BY level"
    groups = [
        (row[0], np.asarray(row[1:], dtype=np.float64))
        for row in relation.query("pool", sql).fetchall()
    ]
    diagonal = 1 + 2 * p + np.flatnonzero(upper_rows == upper_cols)
    finite = all(np.isfinite(row[diagonal]).all() for _, row in groups)
    for _, row in groups:  # the missing values, as the record-batch pass counts them
        row[1 : 1 + p] = row[0] - row[1 : 1 + p]
    if not finite:  # the non-finite values too, counted exactly (the profile stops anyway)
        bad_values = ", ".join(
            f"count(*) FILTER (WHERE NOT coalesce(isfinite({x}), FALSE))" for x in d
        )
        sql = f"SELECT level, {bad_values} FROM {rows_of} GROUP BY level"
        counted = {row[0]: row[1:] for row in relation.query("pool", sql).fetchall()}
        for level, row in groups:
            row[1 : 1 + p] = counted[level]
    # with a non-finite value the sums are not (the profile stops on the count of them)
    with np.errstate(invalid="ignore", over="ignore"):
        count = np.array([row[0] for _, row in groups])
        rows = int(count.sum())
        missing = int(sum(row[0] for level, row in groups if level is None))
        bad = [int(b) for b in np.sum([row[1 : 1 + p] for _, row in groups], axis=0)]
        first = np.sum([row[1 + p : 1 + 2 * p] for _, row in groups], axis=0)
        means = shift + first / rows if rows else shift
        delta = means - shift
        centred = []
        for level, row in groups:
            n, s1, s2 = row[0], row[1 + p : 1 + 2 * p], row[1 + 2 * p :]
            moved = (
                s2
                - delta[upper_rows] * s1[upper_cols]
                - delta[upper_cols] * s1[upper_rows]
                + n * delta[upper_rows] * delta[upper_cols]
            )
            centred.append((level, np.concatenate([[n], s1 - n * delta, moved])))
    level_sums = LevelSums(signals=tuple(pass_.signals), mean=means, rows=tuple(centred))
    return rows, (missing,), bad, means, level_sums


def _labeled_rows(relation: Any, pass_: StatsPass, connection: Any) -> Any:
    """The rows whose key text is a gold key (with the key in column :data:`KEY`), or whose
    label is present."""
    import pyarrow as pa

    columns = ", ".join(quote(c) for c in dict.fromkeys((*pass_.z, *pass_.signals)))
    if pass_.gold_keys is None:
        assert pass_.label is not None
        extra = "" if pass_.label in (*pass_.z, *pass_.signals) else f", {quote(pass_.label)}"
        sql = f"SELECT {columns}{extra} FROM pool WHERE {quote(pass_.label)} IS NOT NULL"
        return to_arrow(relation.query("pool", sql)).to_pandas()
    key = " || '|' || ".join(f"CAST({quote(c)} AS VARCHAR)" for c in pass_.on)
    select = f"SELECT {columns}, {key} AS {quote(KEY)} FROM pool"
    schema = to_arrow(relation.limit(0)).schema
    numbers = None
    if len(pass_.on) == 1 and pa.types.is_integer(schema.field(pass_.on[0]).type):
        numbers = _integer_keys(pass_.gold_keys)
    if numbers is not None:  # compared as integers: no key of the pool is cast to text
        column = quote(pass_.on[0])
        if connection is None:
            listed = ", ".join(str(k) for k in numbers) or "NULL"
            sql = f"{select} WHERE {column} IN ({listed})"
            return to_arrow(relation.query("pool", sql)).to_pandas()
        name = "__slicewise_gold_keys__"
        connection.register(name, pa.table({"k": pa.array(numbers, type=pa.int64())}))
        try:
            sql = f"{select} WHERE {column} IN (SELECT k FROM {name})"
            return to_arrow(relation.query("pool", sql)).to_pandas()
        finally:
            connection.unregister(name)
    if connection is None:
        listed = ", ".join(_text(k) for k in pass_.gold_keys) or "NULL"
        return to_arrow(relation.query("pool", f"{select} WHERE {key} IN ({listed})")).to_pandas()
    name = "__slicewise_gold_keys__"
    connection.register(name, pa.table({"k": pa.array(pass_.gold_keys, type=pa.string())}))
    try:
        sql = f"{select} WHERE {key} IN (SELECT k FROM {name})"
        return to_arrow(relation.query("pool", sql)).to_pandas()
    finally:
        connection.unregister(name)


#: Integers as a cast to text writes them (no sign but a leading minus, no leading zeros).
_INTEGER_TEXT = re.compile(r"-?(0|[1-9][0-9]*)")
_INT64 = (-(2**63), 2**63 - 1)


def _integer_keys(keys: Sequence[str]) -> list[int] | None:
    """The gold keys that can match an integer key column as text, as integers.

    A key's text equals the text of an integer exactly when it is written as a cast writes
    integers ('7', '-12'; not '07', '+7' or '7.0'), so the others match no row and are left
    out. None (compare as text) when one is beyond the 64-bit range of the registered table.
    """
    numbers = [int(k) for k in keys if _INTEGER_TEXT.fullmatch(k)]
    if any(not _INT64[0] <= k <= _INT64[1] for k in numbers):
        return None
    return numbers
