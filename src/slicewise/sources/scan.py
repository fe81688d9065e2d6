"""Passes over a pool that streams in Arrow record batches: each is a map (one batch to a small
partial state) and an associative merge, so the same pass runs over a local stream (DuckDB,
Arrow) or on Spark executors (one state per partition, merged on the driver).

Three passes make a profile's pool side, in memory bounded by the batch size and the grid:

* :class:`StatsPass`: the row count, missing values, the mean and standard deviation of every
  signal and numeric profile column (Chan's merge of per-batch moments), minimum and maximum,
  the distinct profile values (categorical and ordinal profiles), and the labeled rows (those
  that match a gold key, or carry a label);
* :class:`~.percentiles.HistogramPass` / :class:`~.percentiles.CollectPass`: exact order
  statistics by histogram refinement (:func:`~.percentiles.exact_percentiles`), for the grid of a
  continuous profile;
* :class:`~.kernel_passes.MomentsPass`: per grid point and kernel scale, the kernel sums of w,
  w^2, wX and wXX' of the standardised signals X (the sums
  :class:`~slicewise.moments.sums.PoolMoments` is made of).

This module holds the pass protocol and the statistics pass; the other two are in
:mod:`.percentiles` and :mod:`.kernel_passes`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from .._typing import FloatArray

S = TypeVar("S")

#: Name of the key-text column added to the labeled rows a pass collects.
KEY = "__slicewise_key__"
#: Distinct values tracked for a categorical or explicit ordinal profile before giving up.
MAX_LEVELS = 100_000
#: Distinct values tracked to infer the kind of a numeric profile (ordinal if integer and <= 20).
INFER_LEVELS = 21


class Pass(Protocol[S]):
    """A map-reduce pass over record batches (``columns`` are the columns it reads)."""

    @property
    def columns(self) -> tuple[str, ...]: ...

    def partial(self, batch: Any) -> S: ...

    def merge(self, a: S, b: S) -> S: ...


Runner = Callable[[Pass[Any]], Any]


@dataclass(frozen=True)
class PairPass:
    """Two passes in one scan: the columns of both, their partial states side by side."""

    first: Any
    second: Any

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.first.columns, *self.second.columns)))

    def partial(self, batch: Any) -> tuple[Any, Any]:
        return self.first.partial(batch), self.second.partial(batch)

    def merge(self, a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
        return self.first.merge(a[0], b[0]), self.second.merge(a[1], b[1])


class Rider:
    """A runner that scans ``extra`` beside the first pass it runs (one scan for both) and
    keeps ``extra``'s state in :attr:`state`; every other pass runs alone."""

    def __init__(self, run: Runner, extra: Pass[Any]) -> None:
        self.run, self.extra = run, extra
        self.state: Any = None

    def __call__(self, pass_: Pass[Any]) -> Any:
        if self.state is not None:
            return self.run(pass_)
        found, self.state = self.run(PairPass(pass_, self.extra))
        return found


def column_values(batch: Any, name: str) -> FloatArray:
    """A numeric (or boolean) column of a record batch as float64, nulls as NaN."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = batch.column(batch.schema.get_field_index(name))
    if pa.types.is_boolean(column.type):
        column = pc.cast(column, pa.float64())
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)


def is_numeric(arrow_type: Any) -> bool:
    """Whether a column of this Arrow type is read as numbers (booleans are categorical in Z)."""
    import pyarrow as pa

    return bool(pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type))


def _moments(x: FloatArray) -> tuple[int, FloatArray, FloatArray]:
    """Count, mean and sum of squared deviations of each column of ``x`` (shape (n, p))."""
    n = x.shape[0]
    if n == 0:
        return 0, np.zeros(x.shape[1]), np.zeros(x.shape[1])
    mean = x.mean(axis=0)
    return n, mean, ((x - mean) ** 2).sum(axis=0)


def merge_moments(
    a: tuple[int, FloatArray, FloatArray], b: tuple[int, FloatArray, FloatArray]
) -> tuple[int, FloatArray, FloatArray]:
    """Chan et al.'s pairwise merge of (count, mean, M2), stable for large means."""
    na, ma, qa = a
    nb, mb, qb = b
    n = na + nb
    if n == 0:
        return a
    delta = mb - ma
    return n, ma + delta * (nb / n), qa + qb + delta**2 * (na * nb / n)


def _merge_sets(a: set[Any] | None, b: set[Any] | None, cap: int) -> set[Any] | None:
    if a is None or b is None:
        return None
    out = a | b
    return out if len(out) <= cap else None


@dataclass(frozen=True)
class Stats:
    """The merged state of :class:`StatsPass`."""

    rows: int
    z_missing: tuple[int, ...]
    z_nonfinite: tuple[int, ...]
    z_moments: tuple[int, FloatArray, FloatArray]
    z_min: FloatArray
    z_max: FloatArray
    z_integer: tuple[bool, ...]
    z_levels: tuple[set[Any] | None, ...]
    signal_bad: tuple[int, ...]
    signal_moments: tuple[int, FloatArray, FloatArray]
    labeled: pd.DataFrame


@dataclass(frozen=True)
class StatsPass:
    """Counts, moments, distinct profile values and the labeled rows, in one pass.

    ``gold_keys`` (key text, as :func:`slicewise.io.join.add_grades` compares keys) selects the
    rows to collect; without it, the rows whose ``label`` column is present are collected.
    """

    z: tuple[str, ...]
    numeric_z: tuple[bool, ...]
    level_cap: int
    signals: tuple[str, ...]
    on: tuple[str, ...]
    gold_keys: tuple[str, ...] | None
    label: str | None

    @property
    def columns(self) -> tuple[str, ...]:
        extra = self.on if self.gold_keys is not None else (self.label,) if self.label else ()
        return tuple(dict.fromkeys((*self.z, *self.signals, *extra)))

    def partial(self, batch: Any) -> Stats:
        import pyarrow as pa
        import pyarrow.compute as pc

        numeric = [j for j, flag in enumerate(self.numeric_z) if flag]
        zcols = [column_values(batch, self.z[j]) for j in numeric]
        z = np.column_stack(zcols) if zcols else np.zeros((batch.num_rows, 0))
        finite = np.isfinite(z)
        z_ok = z[finite.all(axis=1)]
        levels: list[set[Any] | None] = []
        for j, name in enumerate(self.z):
            if self.level_cap == 0 and self.numeric_z[j]:
                levels.append(None)
                continue
            cap = self.level_cap if self.numeric_z[j] else MAX_LEVELS
            column = batch.column(batch.schema.get_field_index(name))
            values = set(pc.unique(column.drop_null()).to_pylist())
            levels.append(values if len(values) <= cap else None)
        integer = tuple(
            bool(np.all(z_ok[:, k] == np.round(z_ok[:, k]))) for k in range(z_ok.shape[1])
        )
        s = (
            np.column_stack([column_values(batch, c) for c in self.signals])
            if self.signals
            else (np.zeros((batch.num_rows, 0)))
        )
        s_finite = np.isfinite(s)
        labeled = self._labeled_rows(batch, pa, pc)
        return Stats(
            rows=batch.num_rows,
            z_missing=tuple(
                int(batch.column(batch.schema.get_field_index(c)).null_count) for c in self.z
            ),
            z_nonfinite=tuple(int((~finite[:, k]).sum()) for k in range(z.shape[1])),
            z_moments=_moments(z_ok),
            z_min=z_ok.min(axis=0) if z_ok.shape[0] else np.full(z.shape[1], np.inf),
            z_max=z_ok.max(axis=0) if z_ok.shape[0] else np.full(z.shape[1], -np.inf),
            z_integer=integer,
            z_levels=tuple(levels),
            signal_bad=tuple(int((~s_finite[:, k]).sum()) for k in range(s.shape[1])),
            signal_moments=_moments(s[s_finite.all(axis=1)]),
            labeled=labeled,
        )

    def _labeled_rows(self, batch: Any, pa: Any, pc: Any) -> pd.DataFrame:
        columns = [*dict.fromkeys((*self.z, *self.signals))]
        if self.gold_keys is not None:
            key = key_text(batch, self.on)
            mask = pc.is_in(key, value_set=pa.array(self.gold_keys, type=pa.string()))
            rows = batch.filter(mask)
            frame: pd.DataFrame = rows.select(columns).to_pandas()
            frame[KEY] = key.filter(mask).to_numpy(zero_copy_only=False)
            return frame
        assert self.label is not None
        label = batch.column(batch.schema.get_field_index(self.label))
        rows = batch.filter(pc.is_valid(label))
        labeled: pd.DataFrame = rows.select([*columns, self.label]).to_pandas()
        return labeled

    def merge(self, a: Stats, b: Stats) -> Stats:
        caps = [self.level_cap if flag else MAX_LEVELS for flag in self.numeric_z]
        return Stats(
            rows=a.rows + b.rows,
            z_missing=tuple(x + y for x, y in zip(a.z_missing, b.z_missing, strict=True)),
            z_nonfinite=tuple(x + y for x, y in zip(a.z_nonfinite, b.z_nonfinite, strict=True)),
            z_moments=merge_moments(a.z_moments, b.z_moments),
            z_min=np.minimum(a.z_min, b.z_min),
            z_max=np.maximum(a.z_max, b.z_max),
            z_integer=tuple(x and y for x, y in zip(a.z_integer, b.z_integer, strict=True)),
            z_levels=tuple(
                _merge_sets(x, y, cap)
                for x, y, cap in zip(a.z_levels, b.z_levels, caps, strict=True)
            ),
            signal_bad=tuple(x + y for x, y in zip(a.signal_bad, b.signal_bad, strict=True)),
            signal_moments=merge_moments(a.signal_moments, b.signal_moments),
            labeled=_concat(a.labeled, b.labeled),
        )


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    if len(b) == 0:
        return a
    if len(a) == 0:
        return b
    return pd.concat([a, b], ignore_index=True)


def key_text(batch: Any, on: Sequence[str]) -> Any:
    """The key of every row as text (columns joined by '|'), as Arrow strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = [pc.cast(batch.column(batch.schema.get_field_index(c)), pa.string()) for c in on]
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, "|")
