"""Paired tables: the difference of two models' gold labels on the items both were evaluated on.

The paired outcome D = Y_a - Y_b lies in [-1, 1]; the table stores the exact affine image
D' = (D + 1) / 2 in [0, 1], so every profile method applies unchanged and its estimate and standard
error map back exactly: theta_D = 2 theta_D' - 1, se_D = 2 se_D'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from .._typing import BoolArray, FloatArray, IntArray
from .panel import ModelPanel
from .table import ItemTable

PairedSignals = Literal["both", "difference"]
PAIRED_SIGNALS: tuple[PairedSignals, ...] = ("both", "difference")


@dataclass(frozen=True, eq=False)
class PairData:
    """One pair's pool and paired labels.

    Attributes
    ----------
    table : ItemTable
        The pair pool (items with rows for both models): Z, paired features and the label
        D' = (Y_a - Y_b + 1) / 2, present where both labels are present (and ``keep`` allows).
    items : ndarray of int
        Positions of the pair pool's items in the panel's item table.
    n_pairs : int
        Items labeled for both models (and kept).
    n_only_a, n_only_b : int
        Pool items labeled for one model only (not used by the direct estimator).
    n_dropped : int
        Items labeled for both but dropped by ``keep`` (rank_models: not labeled for every model).
    n_unmatched_a, n_unmatched_b : int
        A model's rows whose item has no row for the other model (outside the pair pool).
    item_level : tuple of str
        Signal columns whose values agree for the two models on every pool item: used once.
    """

    table: ItemTable
    items: IntArray
    n_pairs: int
    n_only_a: int
    n_only_b: int
    n_dropped: int
    n_unmatched_a: int
    n_unmatched_b: int
    item_level: tuple[str, ...]


def _positions(panel: ModelPanel, k: int, items: IntArray) -> IntArray:
    lookup = np.full(panel.items.n_pool, -1, dtype=np.intp)
    lookup[panel.rows[k]] = np.arange(panel.rows[k].size, dtype=np.intp)
    return lookup[items]


def common_items(panel: ModelPanel, models: tuple[str, ...]) -> IntArray:
    """Item positions with a row for every one of ``models`` (sorted)."""
    rows = [panel.rows[panel.position(m)] for m in models]
    if all(r is rows[0] or np.array_equal(r, rows[0]) for r in rows[1:]):
        return np.unique(rows[0])
    out = rows[0]
    for other in rows[1:]:
        out = np.intersect1d(out, other)
    return np.unique(out)


def labeled_for_all(panel: ModelPanel, models: tuple[str, ...], items: IntArray) -> BoolArray:
    """Mask over ``items``: labeled for every one of ``models``."""
    mask = np.ones(items.size, dtype=bool)
    for m in models:
        k = panel.position(m)
        mask &= ~np.isnan(panel.tables[k].label[_positions(panel, k, items)])
    return mask


def paired_features(
    panel: ModelPanel,
    a: str,
    b: str,
    items: IntArray,
    mode: PairedSignals,
    *,
    func: str,
) -> tuple[FloatArray, tuple[str, ...], tuple[str, ...]]:
    """Paired signal matrix on ``items``: item-level columns once, model-specific ones paired.

    Returns
    -------
    features : (n, K') raw signals
    names : column names
    item_level : names of the columns used once
    """
    ka, kb = panel.position(a), panel.position(b)
    ta, tb = panel.tables[ka], panel.tables[kb]
    sa = ta.signals[_positions(panel, ka, items)]
    sb = tb.signals[_positions(panel, kb, items)]
    shared: list[str] = []
    for j, name in enumerate(ta.signal_names):
        if name in tb.signal_names:
            other = tb.signal_names.index(name)
            if np.array_equal(sa[:, j], sb[:, other]):
                shared.append(name)
    spec_a = [j for j, n in enumerate(ta.signal_names) if n not in shared]
    spec_b = [j for j, n in enumerate(tb.signal_names) if n not in shared]
    cols = [sa[:, ta.signal_names.index(n)] for n in shared]
    names = list(shared)
    if mode == "both":
        cols += [sa[:, j] for j in spec_a] + [sb[:, j] for j in spec_b]
        names += [f"{a}:{ta.signal_names[j]}" for j in spec_a]
        names += [f"{b}:{tb.signal_names[j]}" for j in spec_b]
    else:
        if len(spec_a) != len(spec_b):
            raise ValueError(
                f"The 'paired_signals' parameter of {func} is 'difference', which pairs the "
                f"model-specific signal columns of {a!r} and {b!r} in order, but {a!r} has "
                f"{len(spec_a)} ({[ta.signal_names[j] for j in spec_a]}) and {b!r} has "
                f"{len(spec_b)} ({[tb.signal_names[j] for j in spec_b]}). Use 'both'."
            )
        for ja, jb in zip(spec_a, spec_b, strict=True):
            na, nb = ta.signal_names[ja], tb.signal_names[jb]
            cols.append(sa[:, ja] - sb[:, jb])
            names.append(f"{na} ({a} - {b})" if na == nb else f"{na} - {nb}")
    features = np.column_stack(cols) if cols else np.zeros((items.size, 0))
    return np.asarray(features, dtype=np.float64), tuple(names), tuple(shared)


def _pair_table_notes(panel: ModelPanel, a: str, b: str) -> tuple[str, ...]:
    """The two models' table notes (imputed signals), each naming its model; shared ones once."""
    notes_a = panel.table(a).notes
    notes_b = panel.table(b).notes
    shared = [n for n in notes_a if n in notes_b]
    own = [
        f"model {m!r}: {n}" for m, ns in ((a, notes_a), (b, notes_b)) for n in ns if n not in shared
    ]
    return (*shared, *own)


def pair_data(
    panel: ModelPanel,
    a: str,
    b: str,
    *,
    paired_signals: PairedSignals,
    func: str,
    items: IntArray | None = None,
    keep: BoolArray | None = None,
) -> PairData:
    """Build the paired table of models ``a`` and ``b``.

    Parameters
    ----------
    panel : ModelPanel
    a, b : str
        Model names (distinct).
    paired_signals : {'both', 'difference'}
        Model-specific signal columns enter as the two models' columns side by side ('both', the
        default of the public functions: any linear combination, the difference included), or as
        their differences S_a - S_b ('difference', K columns instead of 2K). Item-level columns
        (equal values for both models) enter once either way.
    func : str
        Calling public function, for error messages.
    items : ndarray of int, optional
        The pool (item positions); default: every item with a row for both models.
    keep : ndarray of bool, optional
        Mask over ``items``: pairs outside it are treated as unlabeled (rank_models keeps the
        items labeled for every ranked model).

    Returns
    -------
    PairData
    """
    ka, kb = panel.position(a), panel.position(b)
    pool = common_items(panel, (a, b)) if items is None else items
    ya = panel.tables[ka].label[_positions(panel, ka, pool)]
    yb = panel.tables[kb].label[_positions(panel, kb, pool)]
    has_a, has_b = ~np.isnan(ya), ~np.isnan(yb)
    both = has_a & has_b
    used = both if keep is None else both & keep
    if not used.any():
        raise ValueError(
            f"Models {a!r} and {b!r} have no item labeled for both"
            + ("" if keep is None else " (and for every other ranked model)")
            + f" among the {pool.size} items evaluated by both; a paired gap needs items graded "
            "for both models."
        )
    d = np.full(pool.size, np.nan)
    d[used] = (ya[used] - yb[used] + 1.0) / 2.0
    features, names, shared = paired_features(panel, a, b, pool, paired_signals, func=func)
    items_table = panel.items
    table = ItemTable(
        z=items_table.z[pool],
        kind=items_table.kind,
        z_names=items_table.z_names,
        levels=items_table.levels,
        signals=features,
        signal_names=names,
        label=d,
        label_name=f"({a} - {b} + 1) / 2",
        ids=None if items_table.ids is None else items_table.ids[pool],
        notes=_pair_table_notes(panel, a, b),
    )
    in_pool = np.zeros(panel.items.n_pool, dtype=bool)
    in_pool[pool] = True
    return PairData(
        table=table,
        items=pool,
        n_pairs=int(used.sum()),
        n_only_a=int((has_a & ~has_b).sum()),
        n_only_b=int((has_b & ~has_a).sum()),
        n_dropped=int((both & ~used).sum()),
        n_unmatched_a=int((~in_pool[panel.rows[ka]]).sum()),
        n_unmatched_b=int((~in_pool[panel.rows[kb]]).sum()),
        item_level=shared,
    )
