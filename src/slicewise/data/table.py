"""The item table: one row per pool item, validated once at the public boundary.

A table holds the profile covariate Z (continuous in R^q, ordinal, or categorical), the cheap
signals S (K >= 0 numeric columns; missing values are imputed with the column's pool mean and
flagged by a missingness-indicator signal, or rejected) and the gold label Y in [0, 1], missing on
unlabeled items; the labeled set L is where Y is present. After :func:`make_table` every array is
clean, so estimators never re-check their input.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._threads import one_blas_thread
from .._typing import KINDS, BoolArray, FloatArray, IntArray, Kind, ObjectArray
from .._validation import check_choice, column_list, format_examples
from .files import as_frame

#: Integer-valued numeric profiles with at most this many distinct values are read as ordinal
#: when ``kind`` is not given.
ORDINAL_MAX_LEVELS = 20

MissingRule: TypeAlias = Literal["impute", "error"]
#: What :func:`make_table` does with missing signal values (see its ``missing`` parameter).
MISSING_RULES: tuple[MissingRule, ...] = ("impute", "error")

#: Suffix of the missingness-indicator signal added for a signal column with missing values.
INDICATOR_SUFFIX = "_missing"


@dataclass(frozen=True, eq=False)
class ItemTable:
    """A validated item table (arrays only; no reference to the source frame).

    Attributes
    ----------
    z : ndarray of shape (M, q)
        Profile values. For categorical profiles, integer codes into :attr:`levels` (q = 1); for
        ordinal profiles given as an ordered categorical, the category codes.
    kind : {'continuous', 'ordinal', 'categorical'}
    z_names : tuple of str
    levels : ndarray of object or None
        Display labels of the categorical or ordered-categorical levels, indexed by code.
    signals : ndarray of shape (M, K)
        Raw cheap signals (finite). With ``missing='impute'``, a column with missing values holds
        its pool mean there and is followed (after all given columns) by its indicator column.
    signal_names : tuple of str
    label : ndarray of shape (M,)
        Gold labels in [0, 1]; NaN marks an unlabeled item.
    label_name : str
    ids : ndarray of object or None
    notes : tuple of str
        What validation did to the input that a user should know (imputed signal values).
    rows : ndarray of int or None
        Row of the input frame that each item came from, when the table was put in canonical
        order (``make_table(canonical=True)``); None when the items are in input order.
    """

    z: FloatArray
    kind: Kind
    z_names: tuple[str, ...]
    levels: ObjectArray | None
    signals: FloatArray
    signal_names: tuple[str, ...]
    label: FloatArray
    label_name: str
    ids: ObjectArray | None = None
    notes: tuple[str, ...] = ()
    rows: IntArray | None = None

    def __post_init__(self) -> None:
        for array in (self.z, self.signals, self.label):
            array.setflags(write=False)

    def input_rows(self, index: IntArray) -> IntArray:
        """Rows of the input frame of the table items at positions ``index``."""
        return index if self.rows is None else self.rows[index]

    @cached_property
    def signal_moments(self) -> tuple[FloatArray, FloatArray]:
        """Pool mean and standard deviation of every signal column, shape (K,) each; computed
        once (:func:`column_moments`)."""
        return column_moments(self.signals)

    @property
    def n_pool(self) -> int:
        """M, the number of pool items."""
        return int(self.label.shape[0])

    @property
    def labeled(self) -> BoolArray:
        """Boolean mask of the labeled set L."""
        return ~np.isnan(self.label)

    @property
    def labeled_index(self) -> IntArray:
        """Positions of the labeled items, in table order."""
        return np.flatnonzero(self.labeled)

    @property
    def n_labeled(self) -> int:
        """n = |L|."""
        return int(self.labeled.sum())


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


def role_columns(
    z: str | Sequence[str], signals: str | Sequence[str] | None, label: object, func: str
) -> tuple[list[str], list[str]]:
    """The profile and signal column lists of a public function's ``z=`` and ``signals=``,
    checked for shape: at least one profile column, and ``label`` one column name."""
    z_cols = column_list(z, name="z", func=func)
    if not z_cols:
        raise ValueError(f"The 'z' parameter of {func} must name at least one column.")
    s_cols = column_list(signals, name="signals", func=func)
    if not isinstance(label, str):
        raise TypeError(
            f"The 'label' parameter of {func} must be a column name. Got {label!r} instead."
        )
    return z_cols, s_cols


def check_roles(s_cols: Sequence[str], label: str, func: str) -> None:
    """Each signal listed once, and the label not among the signals."""
    duplicated = sorted({c for c in s_cols if s_cols.count(c) > 1})
    if duplicated:
        raise ValueError(
            f"The 'signals' parameter of {func} lists column(s) {format_examples(duplicated)} more than "
            "once; each signal must appear once."
        )
    if label in s_cols:
        raise ValueError(
            f"The label column '{label}' is also listed in `signals`; a gold label cannot be its "
            "own cheap signal."
        )


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], *, name: str, func: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(
            f"The '{name}' parameter of {func} names column(s) {format_examples(missing)} that are not in "
            f"the table. Available columns: {format_examples(list(frame.columns), 30)}."
        )


def _numeric(series: pd.Series, *, role: str) -> FloatArray:
    """Convert a column to float64, raising on non-numeric entries."""
    if isinstance(series.dtype, pd.CategoricalDtype) or series.dtype == object:
        converted = pd.to_numeric(series, errors="coerce")
        bad = converted.isna() & series.notna()
        if bad.any():
            examples = format_examples(series[bad].unique().tolist())
            raise ValueError(
                f"{role} column '{series.name}' has {int(bad.sum())} non-numeric values "
                f"(e.g. {examples}); it must be numeric."
            )
        series = converted
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise ValueError(
            f"{role} column '{series.name}' has dtype {series.dtype}; it must be numeric."
        )
    return np.asarray(series.astype("float64"), dtype=np.float64)


def _infer_kind(series: pd.Series) -> Kind:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return "ordinal" if series.cat.ordered else "categorical"
    if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        return "categorical"
    values = np.asarray(series, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if (
        finite.size
        and np.all(finite == np.round(finite))
        and np.unique(finite).size <= ORDINAL_MAX_LEVELS
    ):
        return "ordinal"
    return "continuous"


def _profile_columns(
    frame: pd.DataFrame, z_cols: list[str], kind: Kind | None, func: str
) -> tuple[FloatArray, Kind, ObjectArray | None]:
    for col in z_cols:
        n_missing = int(frame[col].isna().sum())
        if n_missing:
            raise ValueError(
                f"`z` column '{col}' has {n_missing} missing values; profile covariates must be "
                f"observed on every item."
            )
    if kind is None:
        kinds = {_infer_kind(frame[c]) for c in z_cols}
        if len(z_cols) > 1:
            kind = "continuous"
            if kinds != {"continuous"} and kinds != {"continuous", "ordinal"}:
                raise ValueError(
                    f"`z` columns {z_cols} mix non-numeric columns with others; a profile over "
                    "several columns must be continuous (numeric). Pass kind= explicitly."
                )
        else:
            kind = kinds.pop()
    kind = check_choice(kind, KINDS, name="kind", func=func)
    if kind != "continuous" and len(z_cols) > 1:
        raise ValueError(
            f"The 'kind' parameter of {func} is {kind!r}, but {len(z_cols)} `z` columns were "
            f"given ({z_cols}); only continuous profiles may have several dimensions."
        )
    if kind == "categorical":
        codes, uniques = pd.factorize(frame[z_cols[0]], sort=True)
        levels = np.asarray(uniques, dtype=object)
        return codes.astype(np.float64).reshape(-1, 1), kind, levels
    if kind == "ordinal" and isinstance(frame[z_cols[0]].dtype, pd.CategoricalDtype):
        series = frame[z_cols[0]]
        if not series.cat.ordered:
            raise ValueError(
                f"`z` column '{z_cols[0]}' is an unordered categorical; an ordinal profile needs "
                "numeric levels or an ordered categorical (or use kind='categorical')."
            )
        levels = np.asarray(series.cat.categories, dtype=object)
        codes_f = np.asarray(series.cat.codes, dtype=np.float64).reshape(-1, 1)
        return codes_f, kind, levels
    columns = [_numeric(frame[c], role="`z`") for c in z_cols]
    z = np.column_stack(columns)
    bad = ~np.isfinite(z)
    if bad.any():
        col = z_cols[int(np.flatnonzero(bad.any(axis=0))[0])]
        raise ValueError(
            f"`z` column '{col}' has {int(bad.sum())} non-finite values; profile covariates must "
            "be finite numbers."
        )
    return z, kind, None


def _indicator_name(col: str, taken: Sequence[str]) -> str:
    name = f"{col}{INDICATOR_SUFFIX}"
    while name in taken:
        name += "_"
    return name


def _signal_columns(
    frame: pd.DataFrame, s_cols: list[str], missing: MissingRule
) -> tuple[list[FloatArray], list[int]]:
    """The signal columns as float64, or float32 as given (views of the frame's own when they
    are float64 or float32 already), NaN where a value is missing, and the count of missing
    values of each; raises on what ``missing`` forbids."""
    n_items = len(frame)
    columns: list[FloatArray] = []
    counts: list[int] = []
    for col in s_cols:
        series = frame[col]
        # float32 as given: converted when written into the table's float64 array (a float64
        # copy of each column first cost 0.4 s of fresh pages at 10^7 x 6)
        column = (
            series.to_numpy() if series.dtype == np.float32 else _numeric(series, role="Signal")
        )
        infinite = np.isinf(column)
        if infinite.any():
            raise ValueError(
                f"Signal column '{col}' has {int(infinite.sum())} infinite values; cheap signals "
                "must be finite numbers (missing values are allowed, infinite ones are not)."
            )
        n_absent = int(np.isnan(column).sum())
        if n_absent and missing == "error":
            raise ValueError(
                f"Signal column '{col}' has {n_absent} missing values (of {n_items} items); with "
                "missing='error' cheap signals must be observed on every item. Use "
                "missing='impute' (the default) to impute them with the pool mean and add a "
                "missingness indicator."
            )
        if n_absent == n_items:
            raise ValueError(
                f"Signal column '{col}' has no observed value (all {n_items} are missing); it "
                "carries no information, so drop it from `signals`."
            )
        columns.append(column)
        counts.append(n_absent)
    return columns, counts


def _impute(
    raw: FloatArray, s_cols: list[str], counts: Sequence[int]
) -> tuple[FloatArray, tuple[str, ...], tuple[str, ...]]:
    """Pool-mean imputation plus one missingness indicator per signal column with gaps.

    ``raw`` (our own (M, K + K_missing) array, filled in place) holds the K given columns, NaN
    where a value is missing, ``counts`` the number of them per column, and room for one
    indicator per column with gaps after them. Returns the matrix (given columns first, then the
    indicators), its column names and one note per imputed column. No label is used, so the
    features are fixed given the pool and a centered control variate built on them stays
    unbiased.
    """
    n_items = raw.shape[0]
    names = list(s_cols)
    notes: list[str] = []
    for j, col in enumerate(s_cols):
        n_absent = counts[j]
        if not n_absent:
            continue
        absent = np.isnan(raw[:, j])
        mean = float(raw[~absent, j].mean())
        raw[absent, j] = mean
        flag = _indicator_name(col, names)
        raw[:, len(names)] = absent
        names.append(flag)
        notes.append(
            f"Signal column '{col}' has {n_absent} missing values (of {n_items} items): they "
            f"were filled with the column's pool mean ({mean:.4g}), and a new signal "
            f"'{flag}' (1 where the value was missing) lets the estimate treat them apart. The "
            "filling uses no gold label, so it cannot bias the estimate."
        )
    return raw, tuple(names), tuple(notes)


def canonical_order(
    z: FloatArray,
    signals: FloatArray | Sequence[FloatArray],
    label: FloatArray,
    ids: ObjectArray | None,
) -> IntArray:
    """A row order that depends on the items, not on the order they were given in.

    By id when there are ids (unique, so a total order); otherwise lexicographic over the
    profile values, the raw signals (an (M, K) array or its K columns) and the label (missing
    values last). Rows that tie agree on every used column, so their relative order cannot
    change a result.
    """
    if ids is not None:
        try:
            codes = pd.factorize(pd.Series(ids, dtype=object), sort=True)[0]
        except TypeError:  # ids of several types that do not compare: order by their text
            codes = pd.factorize(pd.Series([f"{type(v).__name__}:{v}" for v in ids]), sort=True)[0]
        return np.argsort(codes, kind="stable").astype(np.intp)
    columns = list(signals.T) if isinstance(signals, np.ndarray) else list(signals)
    return lexsort_by_ties([*z.T, *columns, label])


def _ties(values: FloatArray) -> BoolArray:
    """``out[j]``: sorted ``values[j + 1]`` equals ``values[j]`` (NaNs, sorted last, tie)."""
    with np.errstate(invalid="ignore"):
        same = values[1:] == values[:-1]
    return np.asarray(same | (np.isnan(values[1:]) & np.isnan(values[:-1])), dtype=np.bool_)


#: A run of tied rows is sorted on its own (in cache) when the runs that tie on the earlier keys
#: average at least this many rows (a categorical profile: a few runs of many items each).
LONG_RUNS = 256


def is_sorted(values: FloatArray) -> bool:
    """``values`` (one column) is non-decreasing: a continuous profile's Z in a table in
    canonical order without ids, which the balance strata and the kernel passes use."""
    return values.size < 2 or bool(np.all(values[1:] >= values[:-1]))


def small_codes(values: FloatArray) -> npt.NDArray[np.uint16] | None:
    """``values`` as uint16 when every one is an integer in [0, 65535] (category or level codes;
    -0.0 is 0), else None."""
    with np.errstate(invalid="ignore"):
        codes = values.astype(np.uint16)
    return codes if np.array_equal(codes, values) else None


def lexsort_by_ties(keys: Sequence[FloatArray]) -> IntArray:
    """``np.lexsort(keys[::-1])`` (first key primary, stable), sorting each later key only
    within the runs that tie on the earlier ones.

    ``np.lexsort`` sorts every key over every row (1.1-1.5 s for eight keys over 10^6 items);
    a continuous profile rarely ties, so one sort of Z usually decides the order. That first
    sort need not be stable (an unstable one is three times faster at 10^6 items): the first
    sort of the tied runs also sorts them by input row, after the later key, so the rows of a
    run reach the same order as after a stable sort, and the later sorts, stable, keep it.
    Rows that tie on every key so keep their input order, as in ``np.lexsort``.

    Category or level codes (small non-negative integers) are sorted stably by radix sort
    instead, which is faster still and leaves each run in input-row order. Their runs are
    long (every item of a category): each is sorted on its own by the next key, unstably
    (``np.lexsort`` of three keys over 3 * 10^6 items of 50 categories took 2.7 s, the runs
    one by one 0.3 s), and the rows that then tie again are put in input-row order by the next
    round, as after the first unstable sort.
    """
    codes = small_codes(keys[0])
    order = np.argsort(
        keys[0] if codes is None else codes, kind="quicksort" if codes is None else "stable"
    )
    # tied[i] = j: sorted rows j and j + 1 tie on every key so far (the work of each round is
    # proportional to the ties, not to M: a round over every item cost 0.6 s at 10^7)
    tied = np.flatnonzero(_ties(keys[0][order]))
    by_row = codes is None  # the next sort of the tied runs also puts them in input-row order
    for key in [*keys[1:], None]:
        if not tied.size:
            break
        starts = np.ones(tied.size, dtype=np.bool_)  # a run of tied rows begins
        starts[1:] = tied[1:] != tied[:-1] + 1
        chain = np.cumsum(starts) - 1
        last = np.ones(tied.size, dtype=np.bool_)
        last[:-1] = starts[1:]
        after = np.flatnonzero(last) + 1  # each run's last row follows its last tie
        positions = np.insert(tied, after, tied[last] + 1)
        run = np.insert(chain, after, chain[last])
        rows = order[positions]
        if key is None:  # every key ties: input-row order within the runs, if not yet made
            if by_row:
                order[positions] = rows[np.lexsort((rows, run))]
            break
        bounds = np.flatnonzero(run[1:] != run[:-1]) + 1
        if not by_row and positions.size >= LONG_RUNS * (bounds.size + 1):
            values = key[rows]
            for lo, hi in zip([0, *bounds.tolist()], [*bounds.tolist(), rows.size], strict=True):
                rows[lo:hi] = rows[lo:hi][np.argsort(values[lo:hi], kind="quicksort")]
            order[positions] = rows
            by_row = True  # rows that tie on this key too are in no particular order
        else:
            order[positions] = rows[
                np.lexsort((rows, key[rows], run) if by_row else (key[rows], run))
            ]
            by_row = False
        left, right = key[order[tied]], key[order[tied + 1]]
        with np.errstate(invalid="ignore"):
            tied = tied[(left == right) | (np.isnan(left) & np.isnan(right))]
    return np.asarray(order, dtype=np.intp)


def make_table(
    data: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None,
    label: str,
    kind: Kind | None = None,
    id: str | None = None,
    missing: MissingRule = "impute",
    canonical: bool = False,
    func: str = "profile",
) -> ItemTable:
    """Validate an item table once, at the boundary.

    Parameters
    ----------
    data : DataFrame or path
        One row per pool item; a path to a CSV, Parquet, JSON (array of records) or JSON Lines file is read first.
    z : str or list of str
        Profile column(s). Several columns make a continuous profile in R^q.
    signals : str, list of str or None
        Cheap-signal columns: numeric and finite where observed (booleans become 0/1).
    label : str
        Gold label column: values in [0, 1]; missing values mark unlabeled items.
    kind : {'continuous', 'ordinal', 'categorical'}, optional
        How to localise in Z. Inferred when omitted: non-numeric or unordered categorical columns
        are categorical, ordered categoricals and integer columns with at most 20 distinct values
        are ordinal, other numeric columns are continuous.
    id : str, optional
        Item id column; ids must be unique.
    missing : {'impute', 'error'}, default 'impute'
        Missing signal values. ``'impute'``: each signal column with missing values gets its
        pool mean (over the items where it is observed) there, and a missingness indicator
        ``'<column>_missing'`` (1 where missing) is added as an extra signal; the table's
        :attr:`~ItemTable.notes` say which columns and how many values. The imputation uses no
        label, so every centered control variate stays unbiased. ``'error'``: raise instead.
    canonical : bool, default False
        Put the items in :func:`canonical_order` (by ``id`` when given, else lexicographically by
        Z, signals and label), so that cross-fitting folds, and every result, do not depend on
        the order of the rows. Off for callers that align the table with the frame's rows.
    func : str
        Name of the calling public function, used in error messages.

    Returns
    -------
    ItemTable

    Raises
    ------
    ValueError
        On a missing column, a missing or non-finite Z, a non-numeric or infinite signal, a
        missing signal value with ``missing='error'``, a signal never observed, a label outside
        [0, 1], no labeled rows, or duplicate ids; each message names the column, the rule and the
        offending count.
    """
    frame = as_frame(data, name="table", func=func)
    missing = check_choice(missing, MISSING_RULES, name="missing", func=func)
    z_cols, s_cols = role_columns(z, signals, label, func)
    _check_columns(frame, z_cols, name="z", func=func)
    _check_columns(frame, s_cols, name="signals", func=func)
    _check_columns(frame, [label], name="label", func=func)
    check_roles(s_cols, label, func)
    if len(frame) == 0:
        raise ValueError(f"The table passed to {func} has no rows.")

    z_values, kind_checked, levels = _profile_columns(frame, z_cols, kind, func)

    signal_columns, absent_counts = _signal_columns(frame, s_cols, missing)

    label_values = _numeric(frame[label], role="Label")
    present = ~np.isnan(label_values)
    outside = present & ~((label_values >= 0.0) & (label_values <= 1.0))
    if outside.any():
        examples = format_examples(np.unique(label_values[outside]).tolist())
        raise ValueError(
            f"Label column '{label}' has {int(outside.sum())} values outside [0, 1] (e.g. "
            f"{examples}); gold labels must be binary or a score rescaled into [0, 1]."
        )
    if not present.any():
        raise ValueError(
            f"Label column '{label}' has no labeled rows (all {len(frame)} values are missing); "
            "at least one gold label is needed."
        )

    ids = None
    if id is not None:
        _check_columns(frame, [id], name="id", func=func)
        id_series = frame[id]
        if id_series.isna().any():
            raise ValueError(
                f"Id column '{id}' has {int(id_series.isna().sum())} missing values; every item "
                "needs an id."
            )
        dup = id_series[id_series.duplicated(keep=False)]
        if len(dup):
            raise ValueError(
                f"Id column '{id}' has {dup.nunique()} duplicated ids (e.g. "
                f"{format_examples(dup.unique().tolist())}); ids must be unique."
            )
        ids = np.asarray(id_series, dtype=object)

    rows: IntArray | None = None
    if canonical:
        rows = canonical_order(z_values, signal_columns, label_values, ids)
        z_values = np.take(z_values, rows, axis=0)
        label_values = np.take(label_values, rows)
        ids = None if ids is None else ids[rows]
    # the (M x K) signals are written once, already in table order, from the validated columns,
    # column-major with the indicators of _impute's columns: each column is one contiguous
    # gather (reordering a stored (M x K) array costs 2.5x; row-major, the writes strided by K
    # cost twice as much: 0.10 s against 0.05 s for 10^6 x 6)
    width = len(s_cols) + sum(count > 0 for count in absent_counts)
    raw_signals = np.empty((width, len(frame))).T
    for j, column in enumerate(signal_columns):
        if rows is None:
            raw_signals[:, j] = column
        elif column.dtype == np.float64:
            np.take(column, rows, out=raw_signals[:, j])
        else:  # float32 as given: converted as it is written
            raw_signals[:, j] = column[rows]
    del signal_columns
    signal_values, signal_names, notes = _impute(raw_signals, s_cols, absent_counts)
    return ItemTable(
        z=z_values,
        kind=kind_checked,
        z_names=tuple(z_cols),
        levels=levels,
        signals=signal_values,
        signal_names=signal_names,
        label=label_values,
        label_name=label,
        ids=ids,
        notes=notes,
        rows=rows,
    )
