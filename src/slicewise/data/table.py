"""The item table: one row per pool item, validated once at the public boundary.

A table holds the profile covariate Z (continuous in R^q, ordinal, or categorical), the cheap
signals S (K >= 0 numeric columns; missing values are imputed with the column's pool mean and
flagged by a missingness-indicator signal, or rejected) and the gold label Y in [0, 1], missing on
unlabeled items; the labeled set L is where Y is present. After :func:`make_table` every array is
clean, so estimators never re-check their input.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, TypeAlias

import numpy as np
import pandas as pd

from .._typing import KINDS, BoolArray, FloatArray, IntArray, Kind, ObjectArray
from .._validation import check_choice, column_list, format_examples
from ..exceptions import DuplicateItemsWarning
from .column_stats import column_moments
from .duplicates import repeated_items_note
from .files import as_frame
from .ordering import canonical_order

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


#: The magnitudes a signal column may reach: beyond, squares and sums of squares leave float64
#: (overflow past 1e154, underflow below 1e-154) and the signals' pool sd is wrong.
SIGNAL_SCALE = (1e-100, 1e100)
#: Labels lie in [0, 1]; a column whose largest label is positive but below 1e-50 has a variance
#: and fourth moments that underflow (the degrees of freedom use the fourth).
LABEL_SCALE = (1e-50, 1.0)
SIGNAL_ADVICE = (
    "divide the column by a constant (signals are standardised over the pool, so the estimate "
    "does not change)."
)
LABEL_ADVICE = "rescale the labels so that the best possible score is 1."


def _check_scale(values: FloatArray, what: str, limits: tuple[float, float], advice: str) -> None:
    """Refuse a column whose largest |value| lies outside ``limits`` (0 itself is allowed: an
    all-zero column is a constant, which the callers handle)."""
    if not values.size or np.isnan(values).all():
        return
    peak = float(max(abs(np.nanmin(values)), abs(np.nanmax(values))))
    small, large = limits
    if peak > large or 0.0 < peak < small:
        raise ValueError(
            f"{what} reaches |value| = {peak:.3g}, outside {small:g} to {large:g}, the "
            f"magnitudes whose squares stay within floating point; {advice}"
        )


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
        _check_scale(column, f"Signal column '{col}'", SIGNAL_SCALE, SIGNAL_ADVICE)
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
    uncertainty: str | Sequence[str] | None = None,
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
    uncertainty : sequence of str, optional
        Columns that say how reliable the signals are on each item: each enters the signals
        with its products with every given signal (:mod:`slicewise.data.uncertainty`).

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
    _check_scale(label_values, f"Label column '{label}'", LABEL_SCALE, LABEL_ADVICE)

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
    if uncertainty:
        from .uncertainty import with_uncertainty

        columns = column_list(uncertainty, name="uncertainty", func=func)
        signal_values, signal_names, note = with_uncertainty(
            frame, signal_values, signal_names, s_cols, columns, rows, func=func
        )
        notes = (*notes, note)
    repeated = repeated_items_note(frame, [*z_cols, *s_cols, label]) if id is None else None
    if repeated is not None:
        warnings.warn(repeated, DuplicateItemsWarning, stacklevel=3)
        notes = (*notes, repeated)
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
