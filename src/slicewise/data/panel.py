"""Model-item panels: several models' gold labels and cheap signals on one item pool.

Two layouts are accepted, both validated once here:

* **long**: one row per (model, item); a ``model`` column names the model, ``label`` is one column,
  and ``signals`` are the row's own columns (the judge score of that model's answer, or an item
  property repeated on every model's row). Items are matched across models by an ``id`` column, or,
  without one, by their order of appearance within each model (every model then needs the same
  number of rows, and the same Z row by row).
* **wide**: one row per item; ``label`` is a list of label columns (one per model, named by the
  column) or a mapping model -> column; ``signals`` is a list of item-level columns shared by every
  model, or a mapping model -> list of that model's columns.

The profile covariate Z is an item property: it is validated once on the item level (so
categorical levels get the same codes for every model) and must agree across a matched item's
rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from .._typing import IntArray, Kind
from .._validation import check_choice, format_examples
from .files import as_frame
from .table import MISSING_RULES, ItemTable, MissingRule, make_table

Layout = Literal["long", "wide"]
LabelSpec = str | Sequence[str] | Mapping[str, str]
SignalSpec = str | Sequence[str] | Mapping[str, str | Sequence[str]] | None


@dataclass(frozen=True, eq=False)
class ModelPanel:
    """Validated labels and signals of several models on one item pool.

    Attributes
    ----------
    items : ItemTable
        Item-level table: Z of every item in the union of the models' pools (its label is a
        constant placeholder and its signals are empty).
    models : tuple of str
    rows : tuple of ndarray
        For each model, the positions (into :attr:`items`) of that model's rows, in table order.
    tables : tuple of ItemTable
        For each model, its own pool: Z with the item-level codes, its signals and gold labels,
        in the canonical order of :func:`slicewise.data.ordering.canonical_order` (so a model's
        profile does not depend on the order of its rows); ``rows`` of each table gives the
        position of each item among that model's rows of the frame.
    layout : {'long', 'wide'}
    """

    items: ItemTable
    models: tuple[str, ...]
    rows: tuple[IntArray, ...]
    tables: tuple[ItemTable, ...]
    layout: Layout

    def position(self, name: str) -> int:
        """Index of model ``name`` in :attr:`models`."""
        return self.models.index(name)

    def table(self, name: str) -> ItemTable:
        """The item table of model ``name``."""
        return self.tables[self.position(name)]


def _column_list(value: str | Sequence[str], *, name: str, func: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = list(value)
    if not all(isinstance(v, str) for v in items):
        raise TypeError(
            f"The '{name}' parameter of {func} must hold column names (str). Got {items!r}."
        )
    return items


def check_models(
    requested: Sequence[str] | None, available: Sequence[str], *, func: str, name: str = "models"
) -> list[str]:
    """The requested model names (default: all), checked against the available ones."""
    if requested is None:
        return list(available)
    wanted = [requested] if isinstance(requested, str) else list(requested)
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise ValueError(
            f"The '{name}' parameter of {func} names model(s) {format_examples(unknown, 8)} that are not in "
            f"the table. Available models: {format_examples(list(available), 30)}."
        )
    dup = sorted({m for m in wanted if wanted.count(m) > 1})
    if dup:
        raise ValueError(
            f"The '{name}' parameter of {func} lists model(s) {format_examples(dup, 8)} more than once."
        )
    if not wanted:
        raise ValueError(f"The '{name}' parameter of {func} must name at least one model.")
    return wanted


def _signals_for(
    signals: SignalSpec, models: Sequence[str], available: Sequence[str], *, func: str
) -> dict[str, list[str]]:
    if signals is None:
        return {m: [] for m in models}
    if isinstance(signals, Mapping):
        missing = [m for m in models if m not in signals]
        extra = [k for k in signals if k not in available]
        if missing or extra:
            raise ValueError(
                f"The 'signals' mapping of {func} must have one entry per model. Missing: "
                f"{format_examples(missing, 8)}; not a model: {format_examples(extra, 8)}."
            )
        return {m: _column_list(signals[m], name="signals", func=func) for m in models}
    columns = _column_list(signals, name="signals", func=func)
    return {m: columns for m in models}


def _item_table(
    frame: pd.DataFrame, z_cols: list[str], kind: Kind | None, id: str | None, func: str
) -> ItemTable:
    """Validate Z (and ids) once on the item level; the label is a constant placeholder."""
    placeholder = "__slicewise_item__"
    while placeholder in frame.columns:
        placeholder += "_"
    keep = [*z_cols, *([id] if id is not None and id not in z_cols else [])]
    item_frame = frame[keep].copy()
    item_frame[placeholder] = 0.0
    return make_table(
        item_frame, z=z_cols, signals=None, label=placeholder, kind=kind, id=id, func=func
    )


def _model_table(
    frame: pd.DataFrame,
    *,
    name: str,
    items: ItemTable,
    rows: IntArray,
    z_cols: list[str],
    signals: list[str],
    label: str,
    id: str | None,
    missing: MissingRule,
    func: str,
) -> ItemTable:
    try:
        table = make_table(
            frame,
            z=z_cols,
            signals=signals,
            label=label,
            kind=items.kind,
            id=id,
            missing=missing,
            canonical=True,
            func=func,
        )
    except ValueError as err:
        raise ValueError(f"Model {name!r}: {err}") from err
    order = np.arange(rows.size, dtype=np.intp) if table.rows is None else table.rows
    return ItemTable(
        z=items.z[rows[order]],
        kind=items.kind,
        z_names=items.z_names,
        levels=items.levels,
        signals=table.signals,
        signal_names=table.signal_names,
        label=table.label,
        label_name=table.label_name,
        ids=table.ids,
        notes=table.notes,
        rows=order,
    )


def _item_rows(rows: IntArray, table: ItemTable) -> IntArray:
    """Item positions of a model table's rows, in its (canonical) table order."""
    return rows if table.rows is None else rows[table.rows]


def make_panel(
    data: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    label: LabelSpec,
    signals: SignalSpec = None,
    model: str | None = None,
    id: str | None = None,
    kind: Kind | None = None,
    models: Sequence[str] | None = None,
    missing: MissingRule = "impute",
    func: str = "profile_models",
    models_name: str = "models",
) -> ModelPanel:
    """Validate a long or wide model-item table once, at the boundary.

    Parameters
    ----------
    data : DataFrame or path
    z : str or list of str
        Profile column(s): an item property, equal on every row of a matched item.
    label : str, list of str or mapping
        Long layout (``model`` given): one gold-label column. Wide layout: one label column per
        model, as a list (model names = column names) or a mapping model -> column.
    signals : str, list of str or mapping, optional
        Cheap-signal columns shared by every model, or a mapping model -> list of columns.
    model : str, optional
        The model column of a long table; omit it for a wide table.
    id : str, optional
        Item id column. In a long table it matches items across models (unique per model); in a
        wide table it is checked for duplicates.
    kind : {'continuous', 'ordinal', 'categorical'}, optional
        Locality rule, inferred from the item-level Z when omitted.
    models : list of str, optional
        The models to keep, in this order (default: all, in order of appearance).
    missing : {'impute', 'error'}, default 'impute'
        Missing signal values, as in :func:`slicewise.make_table`, for each model's own rows:
        imputed with that model's pool mean plus a missingness indicator (noted in the model
        table's notes), or rejected.
    func : str
        Calling public function, for error messages.
    models_name : str
        How the caller's parameter naming the models is called, for error messages.

    Returns
    -------
    ModelPanel

    Raises
    ------
    ValueError
        Unknown models or columns, a label given in the wrong layout, rows of one item disagreeing
        on Z, duplicated (model, id) pairs, unequal row counts without ``id``, and every error of
        :func:`slicewise.make_table` for each model's own rows (prefixed by the model name).
    """
    frame = as_frame(data, name="table", func=func)
    if len(frame) == 0:
        raise ValueError(f"The table passed to {func} has no rows.")
    missing = check_choice(missing, MISSING_RULES, name="missing", func=func)
    z_cols = _column_list(z, name="z", func=func)
    absent = [
        c for c in [*z_cols, *([id] if id else []), *([model] if model else [])] if c not in frame
    ]
    if absent:
        raise ValueError(
            f"{func} names column(s) {format_examples(absent, 8)} that are not in the table. Available "
            f"columns: {format_examples(list(frame.columns), 30)}."
        )
    if model is not None:
        if not isinstance(label, str):
            raise ValueError(
                f"The 'label' parameter of {func} must be one column name for a long table "
                f"(model={model!r}). Got {label!r}; pass a list or mapping of label columns only "
                "for a wide table (model=None)."
            )
        return _long_panel(
            frame, z_cols, label, signals, model, id, kind, models, missing, func, models_name
        )
    if isinstance(label, str):
        raise ValueError(
            f"The 'label' parameter of {func} is one column ({label!r}) but no 'model' column was "
            "given: pass model='<column>' for a long table (one row per model-item), or a list / "
            "mapping model -> label column for a wide table."
        )
    return _wide_panel(frame, z_cols, label, signals, id, kind, models, missing, func, models_name)


def _wide_panel(
    frame: pd.DataFrame,
    z_cols: list[str],
    label: Sequence[str] | Mapping[str, str],
    signals: SignalSpec,
    id: str | None,
    kind: Kind | None,
    models: Sequence[str] | None,
    missing: MissingRule,
    func: str,
    models_name: str,
) -> ModelPanel:
    if isinstance(label, Mapping):
        label_of = {str(k): v for k, v in label.items()}
    else:
        columns = _column_list(label, name="label", func=func)
        dup = sorted({c for c in columns if columns.count(c) > 1})
        if dup:
            raise ValueError(
                f"The 'label' parameter of {func} lists column(s) {format_examples(dup, 8)} more than once; "
                "each model needs its own label column."
            )
        label_of = {c: c for c in columns}
    if not label_of:
        raise ValueError(f"The 'label' parameter of {func} must name at least one label column.")
    names = check_models(models, list(label_of), func=func, name=models_name)
    signal_of = _signals_for(signals, names, list(label_of), func=func)
    items = _item_table(frame, z_cols, kind, id, func)
    rows = np.arange(len(frame), dtype=np.intp)
    tables = tuple(
        _model_table(
            frame,
            name=m,
            items=items,
            rows=rows,
            z_cols=z_cols,
            signals=signal_of[m],
            label=label_of[m],
            id=id,
            missing=missing,
            func=func,
        )
        for m in names
    )
    return ModelPanel(
        items=items,
        models=tuple(names),
        rows=tuple(_item_rows(rows, t) for t in tables),
        tables=tables,
        layout="wide",
    )


def _long_panel(
    frame: pd.DataFrame,
    z_cols: list[str],
    label: str,
    signals: SignalSpec,
    model: str,
    id: str | None,
    kind: Kind | None,
    models: Sequence[str] | None,
    missing: MissingRule,
    func: str,
    models_name: str,
) -> ModelPanel:
    n_missing = int(frame[model].isna().sum())
    if n_missing:
        raise ValueError(
            f"Model column '{model}' has {n_missing} missing values; every row of a long table "
            "must name its model."
        )
    # rows are matched by position: a duplicated index (the usual result of pd.concat) is no key
    frame = frame.reset_index(drop=True)
    names_all = frame[model].astype(str)
    available = list(pd.unique(names_all))
    names = check_models(models, available, func=func, name=models_name)
    keep = names_all.isin(names).to_numpy()
    frame = frame.loc[keep]
    names_col = names_all.to_numpy()[keep]
    signal_of = _signals_for(signals, names, available, func=func)
    masks = {m: names_col == m for m in names}
    if id is not None:
        ids = frame[id]
        if ids.isna().any():
            raise ValueError(
                f"Id column '{id}' has {int(ids.isna().sum())} missing values; every row needs an "
                "item id."
            )
        dup = frame.duplicated(subset=[model, id], keep=False).to_numpy()
        if dup.any():
            pairs = frame.loc[dup, [model, id]].drop_duplicates()
            raise ValueError(
                f"{len(pairs)} (model, id) pairs appear on more than one row ({int(dup.sum())} "
                f"rows; e.g. {pairs.head(5).to_numpy().tolist()}); each model may have one row "
                f"per item in column '{id}'."
            )
        for col in z_cols:
            spread = frame.groupby(id, sort=False)[col].nunique(dropna=False)
            bad = spread[spread > 1]
            if len(bad):
                raise ValueError(
                    f"`z` column '{col}' differs between models' rows of the same item for "
                    f"{len(bad)} ids (e.g. {format_examples(bad.index.tolist(), 5)}); Z is an item "
                    "property and must agree across models."
                )
        item_frame = frame.drop_duplicates(subset=[id])
        items = _item_table(item_frame, z_cols, kind, id, func)
        index = pd.Index(item_frame[id])
        rows_of = {
            m: np.asarray(index.get_indexer(frame.loc[masks[m], id]), dtype=np.intp) for m in names
        }
    else:
        counts = {m: int(masks[m].sum()) for m in names}
        if len(set(counts.values())) > 1:
            raise ValueError(
                f"Without an `id` column, rows are matched across models by their order, so every "
                f"model needs the same number of rows; got {counts}. Pass id='<item id column>'."
            )
        first = frame.loc[masks[names[0]], z_cols].reset_index(drop=True)
        for m in names[1:]:
            other = frame.loc[masks[m], z_cols].reset_index(drop=True)
            if not first.equals(other):
                raise ValueError(
                    f"Without an `id` column, the k-th row of each model is taken as the same "
                    f"item, but model {m!r} has different `z` values than {names[0]!r} row by "
                    "row. Pass id='<item id column>' to match items."
                )
        items = _item_table(frame.loc[masks[names[0]]], z_cols, kind, None, func)
        rows_of = {m: np.arange(counts[m], dtype=np.intp) for m in names}
    tables = tuple(
        _model_table(
            frame.loc[masks[m]],
            name=m,
            items=items,
            rows=rows_of[m],
            z_cols=z_cols,
            signals=signal_of[m],
            label=label,
            id=id,
            missing=missing,
            func=func,
        )
        for m in names
    )
    return ModelPanel(
        items=items,
        models=tuple(names),
        rows=tuple(_item_rows(rows_of[m], t) for m, t in zip(names, tables, strict=True)),
        tables=tables,
        layout="long",
    )
