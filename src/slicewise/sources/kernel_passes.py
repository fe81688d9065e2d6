"""Passes over an out-of-core pool that add up kernel sums: of the standardised signals
(:class:`MomentsPass`), of columns made per item by fitted models (the learned predictions), and of
the profile moments (:class:`ProfileMomentsPass`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import FloatArray, KernelMatrix, Kind
from ..locality.weights import BlockKernel, Locality
from ..moments.kernel_ops import column_sums, square_column_sums, weighted_products, weighted_sums
from ..moments.pool import ScaleSums
from .scan import _moments, column_values, merge_moments

if TYPE_CHECKING:
    from ..estimators.learner_design import Learner


def kernel_at(locality: Locality, z: FloatArray, scale: float) -> KernelMatrix:
    """The kernel at ``scale`` x h, as :meth:`slicewise.methods.base.PoolContext.kernel` forms it."""
    if math.isinf(scale):
        return np.broadcast_to(np.ones((1, locality.size)), (z.shape[0], locality.size))
    if scale == 1.0 or locality.kind == "categorical":
        return locality.kernel(z)
    return locality.kernel(z, locality.bandwidth * scale)


def block_kernels(locality: Locality, z: FloatArray, scales: Sequence[float]) -> list[BlockKernel]:
    """The Gaussian kernels at each finite scale x h of a batch sorted by a one-column Z, as
    :class:`~slicewise.locality.weights.BlockKernel` s (the entries of :func:`kernel_at`)."""
    return [BlockKernel(z, locality.grid, locality.bandwidth * scale) for scale in scales]


def profile_values(batch: Any, z: tuple[str, ...], levels: tuple[Any, ...] | None) -> FloatArray:
    """A batch's profile columns ``z`` as the item table holds them (codes into ``levels`` for
    a categorical Z)."""
    if levels is None:
        return np.column_stack([column_values(batch, c) for c in z])
    import pyarrow as pa
    import pyarrow.compute as pc

    column = batch.column(batch.schema.get_field_index(z[0]))
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    values = pa.array(list(levels), type=column.type)
    codes = pc.index_in(column, value_set=values).to_numpy(zero_copy_only=False)
    return np.asarray(codes, dtype=np.float64).reshape(-1, 1)


@dataclass(frozen=True)
class ProfileColumns:
    """A pool's profile columns and levels as the passes read them (the part of a
    :class:`MomentsPass` that :class:`ProfileMomentsPass` reads, before there is a locality)."""

    z: tuple[str, ...]
    levels: tuple[Any, ...] | None = None

    def profile_values(self, batch: Any) -> FloatArray:
        """The batch's Z as the item table holds it."""
        return profile_values(batch, self.z, self.levels)


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
        return profile_values(batch, self.z, self.levels)

    def features(self, batch: Any) -> FloatArray:
        """The batch's signals standardised over the pool, (rows, K)."""
        x = np.empty((batch.num_rows, len(self.signals)))
        for j, c in enumerate(self.signals):  # filled in place: no (rows, K) temporaries
            x[:, j] = column_values(batch, c)
        x -= self.mean
        x /= self.scale
        return x

    def sorted_rows(self, batch: Any) -> tuple[FloatArray, FloatArray]:
        """The batch's Z and standardised signals (column-major) in increasing order of a
        one-column Z (:func:`sorted_by_profile`'s order; unsorted for several columns).

        Each signal is gathered in Z's order as it is read, so the rows are not moved
        twice; the values are those of :meth:`features`, sorted."""
        z = self.profile_values(batch)
        order = None
        if z.shape[1] == 1 and not bool(np.all(z[1:, 0] >= z[:-1, 0])):
            order = np.argsort(z[:, 0])
            z = np.take(z, order, axis=0)
        x = np.empty((batch.num_rows, len(self.signals)), order="F")
        for j, c in enumerate(self.signals):
            values = column_values(batch, c)
            x[:, j] = values if order is None else np.take(values, order)
        x -= self.mean
        x /= self.scale
        return z, x

    def partial(self, batch: Any) -> dict[float, ScaleSums]:
        out: dict[float, ScaleSums] = {}
        if self.locality.kind == "continuous":  # every scale, the global sums too, at once
            from .block_sums import block_sums

            z, x = self.sorted_rows(batch)
            finite = [scale for scale in self.scales if not math.isinf(scale)]
            kernels = block_kernels(self.locality, z, finite)
            found, (everywhere, _) = block_sums(kernels, x, _no_columns, 0, shared=0)
            out.update((scale, sums) for scale, (sums, _) in zip(finite, found, strict=True))
            if any(math.isinf(scale) for scale in self.scales):
                out[math.inf] = everywhere
        else:
            z, x = self.profile_values(batch), self.features(batch)
        for scale in self.scales:
            if scale in out:
                continue
            if math.isinf(scale):
                sums = global_sums(x)
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


def _no_columns(start: int, stop: int, out: FloatArray) -> None:
    """No learned columns beside the signals (:func:`~.block_sums.block_sums`)."""


def global_sums(x: FloatArray) -> ScaleSums:
    """The sums of the rows ``x`` at the infinite scale (every item weighs 1: the global sums)."""
    rows = float(x.shape[0])
    ones = np.ones((x.shape[0], 1))
    return ScaleSums(
        mass=np.full(1, rows),
        sq_mass=np.full(1, rows),
        first=weighted_sums(ones, x),
        second=weighted_products(ones, x),
    )


def sorted_by_profile(z: FloatArray, x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A batch's rows in increasing order of a one-column Z (as they are for several columns).

    numpy's default sort and ``np.take`` along the rows: at 131,072 rows and 6 signals a
    stable sort took 24 ms against 10, and fancy indexing of the rows 23 ms against 2.6.
    """
    if z.shape[1] != 1 or bool(np.all(z[1:, 0] >= z[:-1, 0])):
        return z, x
    order = np.argsort(z[:, 0])
    return np.take(z, order, axis=0), np.take(x, order, axis=0)


def continuous_sums(
    locality: Locality,
    z: FloatArray,
    x: FloatArray,
    scales: list[float],
    *,
    products: bool = True,
    ordered: bool = False,
) -> list[ScaleSums]:
    """The Gaussian kernel sums of a batch at each (finite) scale x h, in one pass over its rows
    (:func:`~slicewise.moments.pool.scales_sums_with`, as the in-memory pool sums them).

    The rows are put in increasing order of Z first (unless ``ordered``): the kernels are then
    :class:`~slicewise.locality.weights.BlockKernel` s on a sorted Z, whose blocks leave out the
    grid points where every entry is negligible (below 1e-30 of the point's largest), and the
    columns [1, x, x x'] of a block are made once for every scale. Each kernel entry is the one
    the dense kernel of :func:`kernel_at` holds; only the order of summation differs. Measured at 1e7 rows (20 grid
    points, 6 signals): the dense kernel at each scale, each sum taken apart, was most of a
    continuous profile's time.
    """
    from ..moments.pool import scales_sums_with

    if not scales:
        return []
    if not ordered:
        z, x = sorted_by_profile(z, x)
    kernels: list[Any] = block_kernels(locality, z, scales)
    found = scales_sums_with(kernels, x, None, 0, shared=0, products=products)
    return [sums for sums, _ in found]


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
        locality = self.reader.locality
        out: dict[float, FloatArray] = {}
        if locality.kind == "continuous":
            z, x = self.reader.sorted_rows(batch)
        else:
            z, x = self.reader.profile_values(batch), self.reader.features(batch)
        values = self.compute(z, x)
        if locality.kind == "continuous":
            finite = [scale for scale in self.scales if not math.isinf(scale)]
            found = continuous_sums(locality, z, values, finite, products=False, ordered=True)
            for scale, found_sums in zip(finite, found, strict=True):
                out[scale] = np.hstack([found_sums.mass[:, None], found_sums.first])
        for scale in self.scales:
            if scale in out:
                continue
            if math.isinf(scale):
                mass, sums = np.full((1, 1), float(z.shape[0])), values.sum(axis=0, keepdims=True)
            else:
                kernel = kernel_at(self.reader.locality, z, scale)
                mass, sums = column_sums(kernel)[:, None], weighted_sums(kernel, values)
            out[scale] = np.hstack([mass, sums])
        return out

    def merge(
        self, a: dict[float, FloatArray], b: dict[float, FloatArray]
    ) -> dict[float, FloatArray]:
        return {scale: a[scale] + b[scale] for scale in a}


@dataclass(frozen=True, eq=False)
class LearnedColumns:
    """Per item: every fold model's prediction P^(k), the fold average a, a^2, a x and, with
    ``signals``, x (without: the caller has the signals' sums at every scale already).

    The fold models predict :data:`DESIGN_ROWS` rows at a time with the pool's
    :class:`~slicewise.estimators.learner_design.DesignBasis`, as the in-memory pool does: from
    the factored linear predictor
    (:func:`~slicewise.estimators.learner_design.predict_factored`) for logistic models, from
    the learner's design rows otherwise.
    """

    models: tuple[Any, ...]
    kind: Kind
    learner: Learner
    basis: Any
    signals: bool = True

    def __call__(self, z: FloatArray, x: FloatArray) -> FloatArray:
        from ..estimators.learner_design import predict_models

        folds, k = len(self.models), x.shape[1]
        out = np.empty((z.shape[0], folds + 2 + (2 if self.signals else 1) * k))
        for start in range(0, z.shape[0], DESIGN_ROWS):
            stop = min(start + DESIGN_ROWS, z.shape[0])
            xs = x[start:stop]
            predictions = predict_models(
                self.models, z[start:stop], xs, self.kind, self.learner, self.basis
            )
            average = predictions.mean(axis=0)
            out[start:stop, :folds] = predictions.T
            out[start:stop, folds] = average
            out[start:stop, folds + 1] = average * average
            out[start:stop, folds + 2 : folds + 2 + k] = average[:, None] * xs
            if self.signals:
                out[start:stop, folds + 2 + k :] = xs
        return out

    def linear_predictors(self, codes: FloatArray, x: list[str], prefix: str) -> LinearSQL | None:
        """The fold models' linear predictors in SQL (see :class:`LinearSQL`): with the pool's
        standardisation of Z, the learner's design [x, zs, square, zs x] made in SQL from zs and
        the square joined per level, the coefficients written as numbers; with level
        indicators, the per-level intercepts and slopes of :func:`level_logits` joined."""
        models = self.models
        if self.learner != "logistic" or not all(map(_writable, models)):
            return None
        k = len(x)
        basis = self.basis
        if basis.levels is None:  # design [x, zs, square, zs x] (learner_design, q = 1)
            zs = (codes - basis.z_mean[0]) / basis.z_scale[0]
            square = (zs**2 - basis.square_mean[0]) / basis.square_scale[0]
            u, v = f"{prefix}zs", f"{prefix}square"
            shared = [f"{u} * {c} AS {prefix}zx{j}" for j, c in enumerate(x)]
            design = [*x, u, v, *(f"{prefix}zx{j}" for j in range(k))]
            etas = [
                " + ".join(
                    [sql_number(float(m.intercept))]
                    + [f"{sql_number(float(b))} * {d}" for b, d in zip(m.coef, design, strict=True)]
                )
                for m in models
            ]
            return LinearSQL(np.column_stack([zs, square]), [u, v], etas, shared)
        table = level_logits(models, codes, k, self.kind, self.learner, basis)
        assert table is not None
        names = [f"{prefix}{m}_{j}" for m in range(len(models)) for j in range(1 + k)]
        etas = [
            " + ".join([f"{prefix}{m}_0", *(f"{prefix}{m}_{j + 1} * {c}" for j, c in enumerate(x))])
            for m in range(len(models))
        ]
        return LinearSQL(table.reshape(codes.size, -1), names, etas)

    def sql_columns(self, p: list[str], x: list[str]) -> tuple[list[str], list[str]]:
        """The columns of :meth:`__call__` as SQL, from the fold models' predictions ``p`` and
        the standardised signals ``x``: the expressions made once per row (the average a,
        summed in numpy's order) and the summed columns."""
        a = f"{p[0]}_average"
        made = [f"({' + '.join(p)}) / {len(p)} AS {a}"]
        signals = x if self.signals else []
        return made, [*p, a, f"{a} * {a}", *(f"{a} * {v}" for v in x), *signals]


@dataclass(frozen=True, eq=False)
class PredictionColumns:
    """Per item: a model's prediction from the standardised signals (one column)."""

    model: Any

    def __call__(self, z: FloatArray, x: FloatArray) -> FloatArray:
        return np.asarray(self.model.predict(x), dtype=np.float64).reshape(-1, 1)

    def linear_predictors(self, codes: FloatArray, x: list[str], prefix: str) -> LinearSQL | None:
        """The model's linear predictor in SQL, the same at every level (nothing joined), or
        None when it is not a non-constant logistic model."""
        model = self.model
        if not _writable(model):
            return None
        eta = " + ".join(
            [sql_number(float(model.intercept))]
            + [f"{sql_number(float(b))} * {c}" for b, c in zip(model.coef, x, strict=True)]
        )
        return LinearSQL(np.zeros((codes.size, 0)), [], [eta])

    def sql_columns(self, p: list[str], x: list[str]) -> tuple[list[str], list[str]]:
        """The prediction ``p[0]``."""
        return [], [p[0]]


@dataclass(frozen=True, eq=False)
class JoinedColumns:
    """The columns of two column makers side by side, so that two prediction passes are one
    (``split``: the number of models of ``first``)."""

    first: Any
    second: Any
    split: int

    def __call__(self, z: FloatArray, x: FloatArray) -> FloatArray:
        return np.hstack([self.first(z, x), self.second(z, x)])

    def linear_predictors(self, codes: FloatArray, x: list[str], prefix: str) -> LinearSQL | None:
        """The models of both, in order (None when either has no linear predictor in SQL)."""
        a = self.first.linear_predictors(codes, x, f"{prefix}a")
        b = self.second.linear_predictors(codes, x, f"{prefix}b")
        if a is None or b is None:
            return None
        joined = np.column_stack([a.joined, b.joined])
        return LinearSQL(joined, [*a.names, *b.names], [*a.etas, *b.etas], [*a.made, *b.made])

    def sql_columns(self, p: list[str], x: list[str]) -> tuple[list[str], list[str]]:
        made_a, first = self.first.sql_columns(p[: self.split], x)
        made_b, second = self.second.sql_columns(p[self.split :], x)
        return [*made_a, *made_b], [*first, *second]


def _writable(model: Any) -> bool:
    """Whether ``model`` is a non-constant logistic model with finite coefficients (its linear
    predictor can be written as SQL)."""
    from ..estimators.predictors import LogisticModel

    if not isinstance(model, LogisticModel) or model.constant is not None:
        return False
    return bool(np.isfinite(model.intercept) and np.all(np.isfinite(model.coef)))


def sql_number(value: float) -> str:
    """A float as a SQL DOUBLE literal that parses back to the same value (17 digits, with an
    exponent so that it is not read as a DECIMAL)."""
    return f"{value:.17e}"


@dataclass(frozen=True)
class LinearSQL:
    """Linear predictors of logistic models on a categorical profile, as SQL: ``joined`` (one
    row per level code, one column per name of ``names``) is joined to the pool by level,
    ``made`` are columns made once per row from those and the standardised signals (``expr AS
    name``, shared by the models), and ``etas`` are the models' linear predictors, expressions
    of the standardised signals and of the joined and made columns."""

    joined: FloatArray
    names: list[str]
    etas: list[str]
    made: list[str] = field(default_factory=list)


def level_logits(
    models: tuple[Any, ...], codes: FloatArray, k: int, kind: str, learner: str, basis: Any
) -> FloatArray | None:
    """Per profile code c, each logistic model's linear predictor as an affine function of the
    standardised signals x: eta(c, x) = intercept + design(c, x)' coef = a(c) + b(c)' x, shape
    (codes, models, 1 + k) [a, b]; None when a model is not a non-constant logistic model.

    The learner's design is affine in x at a fixed profile value (signals, level indicators or
    the standardised Z and its square, and their products with the signals), so its rows at
    x = 0 and at the unit vectors give a and b: the rows at a unit vector differ from the row at
    0 exactly by the columns of that signal. A record batch's predictions are then expit(a(c) +
    b(c)' x), what :func:`~slicewise.estimators.predictors.predict_all` gives up to the order of
    summation of the linear predictor.
    """
    from ..estimators.learner_design import learner_design
    from ..estimators.predictors import LogisticModel

    if not all(isinstance(m, LogisticModel) and m.constant is None for m in models):
        return None
    coef = np.column_stack([m.coef for m in models])
    intercept = np.array([m.intercept for m in models], dtype=np.float64)
    probe = np.vstack([np.zeros(k), np.eye(k)])
    out = np.empty((codes.size, len(models), 1 + k))
    for i, code in enumerate(codes):
        z = np.full((k + 1, 1), float(code))
        design = learner_design(z, kind, probe, learner, basis)  # type: ignore[arg-type]
        out[i, :, 0] = intercept + design[0] @ coef
        out[i, :, 1:] = ((design[1:] - design[0]) @ coef).T
    return out


@dataclass(frozen=True)
class ProfileMomentsPass:
    """Count, mean and sum of squared deviations (Chan's merge) of the profile values as the
    item table holds them (codes for a categorical Z), or, with ``center`` and ``scale``, of
    the squares of the standardised values ((z - center) / scale)^2."""

    reader: MomentsPass | ProfileColumns
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
