"""Passes over a pool that streams in Arrow record batches: each is a map (one batch to a small
partial state) and an associative merge, so the same pass runs over a local stream (DuckDB,
Arrow) or on Spark executors (one state per partition, merged on the driver).

Three passes make a profile's pool side, in memory bounded by the batch size and the grid:

* :class:`StatsPass`: the row count, missing values, the mean and standard deviation of every
  signal and numeric profile column (Chan's merge of per-batch moments), minimum and maximum,
  the distinct profile values (categorical and ordinal profiles), and the labeled rows (those
  that match a gold key, or carry a label);
* :class:`HistogramPass` / :class:`CollectPass`: exact order statistics by histogram refinement
  (:func:`exact_percentiles`), for the grid of a continuous profile;
* :class:`MomentsPass`: per grid point and kernel scale, the kernel sums of w, w^2, wX and wXX'
  of the standardised signals X (the sums :class:`~slicewise.moments.sums.PoolMoments` is made of).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from .._typing import FloatArray, KernelMatrix
from ..locality.weights import Locality
from ..moments.pool import ScaleSums
from ..moments.sums import column_sums, square_column_sums, weighted_products, weighted_sums

S = TypeVar("S")

#: Name of the key-text column added to the labeled rows a pass collects.
KEY = "__slicewise_key__"
#: Distinct values tracked for a categorical or explicit ordinal profile before giving up.
MAX_LEVELS = 100_000
#: Distinct values tracked to infer the kind of a numeric profile (ordinal if integer and <= 20).
INFER_LEVELS = 21
#: Histogram bins per refinement pass, and the candidate count at which values are collected.
BINS = 4096
COLLECT = 200_000


class Pass(Protocol[S]):
    """A map-reduce pass over record batches (``columns`` are the columns it reads)."""

    @property
    def columns(self) -> tuple[str, ...]: ...

    def partial(self, batch: Any) -> S: ...

    def merge(self, a: S, b: S) -> S: ...


Runner = Callable[[Pass[Any]], Any]


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


# ---------------------------------------------------------------------------------------------
# exact percentiles by histogram refinement


@dataclass(frozen=True)
class HistogramPass:
    """Counts of one numeric column's values in the bins of several intervals [lo, hi)."""

    column: str
    edges: tuple[FloatArray, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def partial(self, batch: Any) -> list[FloatArray]:
        x = column_values(batch, self.column)
        out = []
        for edges in self.edges:
            inside = x[(x >= edges[0]) & (x < edges[-1])]
            bins = np.searchsorted(edges, inside, side="right") - 1
            out.append(np.bincount(bins, minlength=edges.size - 1).astype(np.float64))
        return out

    def merge(self, a: list[FloatArray], b: list[FloatArray]) -> list[FloatArray]:
        return [x + y for x, y in zip(a, b, strict=True)]


@dataclass(frozen=True)
class CollectPass:
    """The distinct values (with counts) of one column inside several intervals [lo, hi)."""

    column: str
    intervals: tuple[tuple[float, float], ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def partial(self, batch: Any) -> list[dict[float, int]]:
        x = column_values(batch, self.column)
        out = []
        for lo, hi in self.intervals:
            values, counts = np.unique(x[(x >= lo) & (x < hi)], return_counts=True)
            out.append(dict(zip(values.tolist(), counts.tolist(), strict=True)))
        return out

    def merge(self, a: list[dict[float, int]], b: list[dict[float, int]]) -> list[dict[float, int]]:
        merged = []
        for x, y in zip(a, b, strict=True):
            both = dict(x)
            for value, count in y.items():
                both[value] = both.get(value, 0) + count
            merged.append(both)
        return merged


def exact_percentiles(
    run: Runner, column: str, q: Sequence[float], *, n: int, lo: float, hi: float
) -> FloatArray:
    """``np.percentile(x, q)`` (linear interpolation) of a streamed column, exactly.

    Each order statistic needed is located by histogram refinement: a pass counts the values in
    :data:`BINS` bins of the interval known to hold it, and the bin holding its rank becomes the
    next interval; once an interval holds at most :data:`COLLECT` values (or one value, however
    often repeated) a last pass collects them. Memory is O(BINS + COLLECT) whatever the pool size;
    a smooth column needs two passes.
    """
    virtual = np.asarray(q, dtype=np.float64) / 100 * (n - 1)
    below = np.floor(virtual).astype(np.int64)
    ranks = sorted({int(r) for r in below} | {min(int(r) + 1, n - 1) for r in below})
    # per rank: interval [a, b), count of values < a, count inside (None: unknown)
    state: dict[int, list[Any]] = {r: [lo, float(np.nextafter(hi, np.inf)), 0, n] for r in ranks}
    for _ in range(64):
        pending = [
            r
            for r in ranks
            if state[r][3] > COLLECT and np.nextafter(state[r][0], np.inf) < state[r][1]
        ]
        if not pending:
            break
        edges = tuple(np.linspace(state[r][0], state[r][1], BINS + 1) for r in pending)
        counts = run(HistogramPass(column, edges))
        for r, e, c in zip(pending, edges, counts, strict=True):
            cumulative = state[r][2] + np.cumsum(c)
            i = int(np.searchsorted(cumulative, r, side="right"))
            state[r] = [float(e[i]), float(e[i + 1]), int(cumulative[i] - c[i]), int(c[i])]
    found = run(CollectPass(column, tuple((state[r][0], state[r][1]) for r in ranks)))
    value: dict[int, float] = {}
    for r, counts in zip(ranks, found, strict=True):
        position = r - state[r][2]
        for v in sorted(counts):
            position -= counts[v]
            if position < 0:
                value[r] = v
                break
    out = np.empty(virtual.size)
    for j, (v, r) in enumerate(zip(virtual, below, strict=True)):
        a, b = value[int(r)], value[min(int(r) + 1, n - 1)]
        t = v - r
        diff = b - a
        out[j] = b - diff * (1 - t) if t >= 0.5 else a + diff * t
    return out


# ---------------------------------------------------------------------------------------------
# kernel sums


def kernel_at(locality: Locality, z: FloatArray, scale: float) -> KernelMatrix:
    """The kernel at ``scale`` x h, as :meth:`slicewise.methods.base.PoolContext.kernel` forms it."""
    if math.isinf(scale):
        return np.broadcast_to(np.ones((1, locality.size)), (z.shape[0], locality.size))
    if scale == 1.0 or locality.kind == "categorical":
        return locality.kernel(z)
    return locality.kernel(z, locality.bandwidth * scale)


@dataclass(frozen=True)
class MomentsPass:
    """Kernel sums of the standardised signals at each scale (``inf``: the global sums)."""

    z: tuple[str, ...]
    levels: tuple[Any, ...] | None
    signals: tuple[str, ...]
    mean: FloatArray
    scale: FloatArray
    locality: Locality
    scales: tuple[float, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.z, *self.signals)))

    def profile_values(self, batch: Any) -> FloatArray:
        """The batch's Z as the item table holds it (codes into the levels for a categorical Z)."""
        if self.levels is None:
            return np.column_stack([column_values(batch, c) for c in self.z])
        import pyarrow as pa
        import pyarrow.compute as pc

        column = batch.column(batch.schema.get_field_index(self.z[0]))
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        levels = pa.array(list(self.levels), type=column.type)
        codes = pc.index_in(column, value_set=levels).to_numpy(zero_copy_only=False)
        return np.asarray(codes, dtype=np.float64).reshape(-1, 1)

    def features(self, batch: Any) -> FloatArray:
        """The batch's signals standardised over the pool, (rows, K)."""
        raw = (
            np.column_stack([column_values(batch, c) for c in self.signals])
            if self.signals
            else np.zeros((batch.num_rows, 0))
        )
        return np.asarray((raw - self.mean) / self.scale, dtype=np.float64)

    def partial(self, batch: Any) -> dict[float, ScaleSums]:
        z = self.profile_values(batch)
        x = self.features(batch)
        out = {}
        for scale in self.scales:
            if math.isinf(scale):
                ones = np.ones((x.shape[0], 1))
                sums = ScaleSums(
                    mass=np.full(1, float(x.shape[0])),
                    sq_mass=np.full(1, float(x.shape[0])),
                    first=weighted_sums(ones, x),
                    second=weighted_products(ones, x),
                )
            elif self.locality.kind == "categorical":
                sums = _category_sums(self.locality, z[:, 0].astype(np.intp), x)
            else:
                kernel = kernel_at(self.locality, z, scale)
                sums = ScaleSums(
                    mass=column_sums(kernel),
                    sq_mass=square_column_sums(kernel),
                    first=weighted_sums(kernel, x),
                    second=weighted_products(kernel, x),
                )
            out[scale] = sums
        return out

    def merge(self, a: dict[float, ScaleSums], b: dict[float, ScaleSums]) -> dict[float, ScaleSums]:
        return {scale: a[scale] + b[scale] for scale in a}


def _category_sums(locality: Locality, codes: Any, x: FloatArray) -> ScaleSums:
    """The sums of the indicator kernel 1(Z_i = g) by counting, without a sparse matrix."""
    size = locality.size
    grid = locality.grid[:, 0].astype(np.intp)
    position = np.full(int(max(codes.max(initial=0), grid.max(initial=0))) + 1, -1)
    position[grid] = np.arange(size)
    col = position[codes]
    keep = col >= 0
    col, xk = col[keep], x[keep]
    rows, cols = np.triu_indices(x.shape[1])
    mass = np.bincount(col, minlength=size).astype(np.float64)
    first = np.zeros((size, x.shape[1]))
    second = np.zeros((size, rows.size))
    for j in range(x.shape[1]):
        first[:, j] = np.bincount(col, weights=xk[:, j], minlength=size)
    for t, (a, b) in enumerate(zip(rows, cols, strict=True)):
        second[:, t] = np.bincount(col, weights=xk[:, a] * xk[:, b], minlength=size)
    return ScaleSums(mass=mass, sq_mass=mass.copy(), first=first, second=second)


# ---------------------------------------------------------------------------------------------
# kernel sums of columns made per item (predictions of fitted models)

#: Rows of a record batch turned into learner design rows at a time.
DESIGN_ROWS = 8192


@dataclass(frozen=True)
class ColumnSumsPass:
    """Kernel sums at each scale of the kernel mass and of columns computed per item.

    ``compute(z, x)`` maps a batch's profile values and standardised signals (as ``reader``, a
    :class:`MomentsPass`, reads them) to a (rows, d) matrix; the state is, per scale, the
    (G, 1 + d) sums [w, w columns] (one row for ``inf``: the global sums).
    """

    reader: MomentsPass
    scales: tuple[float, ...]
    compute: Callable[[FloatArray, FloatArray], FloatArray]

    @property
    def columns(self) -> tuple[str, ...]:
        return self.reader.columns

    def partial(self, batch: Any) -> dict[float, FloatArray]:
        z = self.reader.profile_values(batch)
        x = self.reader.features(batch)
        values = np.column_stack([np.ones(z.shape[0]), self.compute(z, x)])
        out = {}
        for scale in self.scales:
            if math.isinf(scale):
                out[scale] = values.sum(axis=0, keepdims=True)
            else:
                out[scale] = weighted_sums(kernel_at(self.reader.locality, z, scale), values)
        return out

    def merge(
        self, a: dict[float, FloatArray], b: dict[float, FloatArray]
    ) -> dict[float, FloatArray]:
        return {scale: a[scale] + b[scale] for scale in a}


@dataclass(frozen=True, eq=False)
class LearnedColumns:
    """Per item: every fold model's prediction P^(k), the fold average a, a^2, a x and x.

    The learner's design rows are built :data:`DESIGN_ROWS` at a time with the pool's
    :class:`~slicewise.estimators.learned.DesignBasis`, as the in-memory pool builds them.
    """

    models: tuple[Any, ...]
    kind: str
    learner: str
    basis: Any

    def __call__(self, z: FloatArray, x: FloatArray) -> FloatArray:
        from ..estimators.learned import learner_design

        folds, k = len(self.models), x.shape[1]
        out = np.empty((z.shape[0], folds + 2 + 2 * k))
        for start in range(0, z.shape[0], DESIGN_ROWS):
            stop = min(start + DESIGN_ROWS, z.shape[0])
            xs = x[start:stop]
            design = learner_design(z[start:stop], self.kind, xs, self.learner, self.basis)  # type: ignore[arg-type]
            predictions = np.vstack([model.predict(design) for model in self.models])
            average = predictions.mean(axis=0)
            out[start:stop, :folds] = predictions.T
            out[start:stop, folds] = average
            out[start:stop, folds + 1] = average * average
            out[start:stop, folds + 2 : folds + 2 + k] = average[:, None] * xs
            out[start:stop, folds + 2 + k :] = xs
        return out


@dataclass(frozen=True, eq=False)
class PredictionColumns:
    """Per item: a model's prediction from the standardised signals (one column)."""

    model: Any

    def __call__(self, z: FloatArray, x: FloatArray) -> FloatArray:
        return np.asarray(self.model.predict(x), dtype=np.float64).reshape(-1, 1)


@dataclass(frozen=True)
class ProfileMomentsPass:
    """Count, mean and sum of squared deviations (Chan's merge) of the profile values as the
    item table holds them (codes for a categorical Z), or, with ``center`` and ``scale``, of
    the squares of the standardised values ((z - center) / scale)^2."""

    reader: MomentsPass
    center: FloatArray | None = None
    scale: FloatArray | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        return self.reader.z

    def partial(self, batch: Any) -> tuple[int, FloatArray, FloatArray]:
        z = self.reader.profile_values(batch)
        if self.center is not None and self.scale is not None:
            z = ((z - self.center) / self.scale) ** 2
        return _moments(z)

    def merge(
        self, a: tuple[int, FloatArray, FloatArray], b: tuple[int, FloatArray, FloatArray]
    ) -> tuple[int, FloatArray, FloatArray]:
        return merge_moments(a, b)
