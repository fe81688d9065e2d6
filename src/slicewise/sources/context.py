"""A pool context whose pool side was computed by a streaming pass.

:class:`StreamedContext` is a :class:`~slicewise.methods.base.PoolContext` whose ``table`` holds
only the labeled items (their Z, raw signals and labels) and whose pool moments come from the
kernel sums of :class:`~slicewise.sources.scan.MomentsPass`. The methods read the pool through
``ctx.moments(...)`` and the labeled items through ``ctx.kernel(scale)`` rows and
``ctx.features``, so the labeled set is ``LabeledSet(arange(n), y)`` and every pool-side quantity
is the one the in-memory context would compute, up to the order of summation.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray, Kind, ObjectArray
from ..estimators.learned import CrossFit, Predictor
from ..estimators.learner_design import (
    MAX_INTERACTION_LEVELS,
    DesignBasis,
    Learner,
    LearnerDesign,
)
from ..locality.weights import (
    DEFAULT_GRID_SIZE,
    DEFAULT_GRID_SIZE_MULTI,
    Locality,
    _check_bandwidth,
    _grid_values,
    _lookup_levels,
)
from ..methods.base import PoolContext
from ..methods.candidates import NUISANCE_GRID
from ..moments.pool import LearnedSums, ScaleSums, moments_from_sums, standardised_sums
from ..moments.sums import PoolMoments
from .kernel_passes import (
    ColumnSumsPass,
    JoinedColumns,
    LearnedColumns,
    MomentsPass,
    PredictionColumns,
    ProfileMomentsPass,
)
from .scan import Runner

#: Feature sets a streamed pool can give moments of, by the name the methods use.
FEATURE_SETS = ("none", "signals", "primary")


def streamed_locality(
    kind: Kind,
    *,
    levels: ObjectArray | None,
    n: int,
    z_sd: FloatArray,
    percentiles: FloatArray | None,
    grid: Any,
    bandwidth: Any,
) -> Locality:
    """The locality :func:`slicewise.locality.weights.make_locality` builds, from pool summaries.

    ``levels`` are the sorted distinct values (categorical, ordinal), ``z_sd`` the ddof=1
    standard deviation of each profile column, ``percentiles`` their 5th and 95th percentiles
    (shape (2, q); only for a continuous profile with a default grid).
    """
    if kind == "categorical":
        if bandwidth is not None:
            raise ValueError(
                "The 'bandwidth' parameter of profile does not apply to categorical profiles "
                f"(weights are group indicators). Got {bandwidth!r}; omit it."
            )
        assert levels is not None
        codes = (
            np.arange(levels.size) if grid is None else _lookup_levels(levels, grid, "categories")
        )
        return Locality(
            kind="categorical",
            grid=codes.astype(np.float64).reshape(-1, 1),
            bandwidth=np.zeros(0),
            labels=levels[codes].astype(object),
        )
    if kind == "ordinal":
        assert levels is not None
        b_ord = _check_bandwidth(1.0 if bandwidth is None else bandwidth, q=1)
        points = (
            np.asarray(levels, dtype=np.float64) if grid is None else _grid_values(grid, q=1)[:, 0]
        )
        return Locality(
            kind="ordinal",
            grid=points.reshape(-1, 1),
            bandwidth=b_ord,
            labels=points.astype(object),
        )
    q = z_sd.size
    if bandwidth is None:
        if np.any(z_sd <= 0) or n < 2:
            raise ValueError(
                "A continuous profile needs variation in Z to set a bandwidth, but a `z` column "
                "is constant over the pool; pass bandwidth= explicitly or use kind='categorical'."
            )
        h = np.asarray(1.5 * 1.06 * z_sd * n ** (-1.0 / (4 + q)), dtype=np.float64)
    else:
        h = _check_bandwidth(bandwidth, q=q)
    if grid is None or isinstance(grid, int | np.integer):
        size = (DEFAULT_GRID_SIZE if q == 1 else DEFAULT_GRID_SIZE_MULTI) if grid is None else grid
        if isinstance(size, bool) or int(size) < 1:
            raise ValueError(
                f"The 'grid' parameter of profile must be a positive number of points or an array "
                f"of points. Got {grid!r} instead."
            )
        assert percentiles is not None
        axes = [np.linspace(percentiles[0, d], percentiles[1, d], int(size)) for d in range(q)]
        mesh = np.meshgrid(*axes, indexing="ij")
        points2d = np.column_stack([m.ravel() for m in mesh])
    else:
        points2d = _grid_values(grid, q=q)
    labels = points2d[:, 0].astype(object) if q == 1 else points2d.astype(object)
    return Locality(kind="continuous", grid=points2d, bandwidth=h, labels=labels)


def pool_moments(
    sums: Mapping[float, ScaleSums],
    columns: Sequence[int],
    *,
    p: int,
    scale_b: float,
    kernel: Any,
    kernel_b: Any,
) -> PoolMoments:
    """:class:`PoolMoments` of the feature ``columns`` from the kernel sums at h and at b (the
    arithmetic of the in-memory pool, :func:`slicewise.moments.pool.moments_from_sums`)."""
    return moments_from_sums(
        sums[1.0],
        sums[scale_b],
        columns,
        p=p,
        kernel=kernel,
        kernel_b=kernel if scale_b == 1.0 else kernel_b,
    )


@dataclass(frozen=True, eq=False)
class StreamedContext(PoolContext):
    """Pool context of an out-of-core pool: labeled items in memory, pool side as kernel sums.

    Attributes
    ----------
    pool_size : int
        M, the number of pool items.
    sums : mapping of float to ScaleSums, optional
        Kernel sums of the standardised signals at each scale (multiple of h) that was scanned;
        None when they are not scanned yet (a continuous profile): the first method that needs
        them scans the pool with ``reader`` (:meth:`scanned`), or :meth:`learned_sums` sums
        them in its own pass.
    run : callable, optional
        Runs a pass of :mod:`slicewise.sources.scan` over the pool (the source's ``run``), for
        the pool sums of predictions fitted on the labeled items (learned control variates,
        the smoothing's synthetic covariate).
    reader : MomentsPass, optional
        The pool's profile and signal columns and their standardisation, as those passes read
        them.
    level_values : ndarray, optional
        The distinct profile values of the pool as the item table holds them (codes of a
        categorical profile, levels of an ordinal one).
    level_counts : ndarray, optional
        The number of pool items at each of ``level_values``, when the scan gave them.
    synthetic_c : float, optional
        The inverse penalty of the smoothing's synthetic covariate
        (:func:`slicewise.methods.smoothed.synthetic_covariate`) when the method will need it:
        the pass of :meth:`learned_sums` then also sums the predictions of the logistic model
        that covariate fits, and :meth:`prediction_sums` finds them (one scan less).
    profile_moments : tuple, optional
        Count, mean and sum of squared deviations of each profile column over the pool, from
        the statistics pass (a continuous profile): the learner's standardisation of Z
        (:meth:`design_basis`, :func:`standardisation`) then needs no pass of its own.
    square_moments : tuple, optional
        The same of the squares of the profile columns standardised by ``profile_moments``
        ((z - mean) / scale)^2, when a pass took them beside its own (the percentiles' first):
        :meth:`design_basis` then needs no pass over the pool.
    """

    pool_size: int = 0
    sums: Mapping[float, ScaleSums] | None = None
    run: Runner | None = None
    reader: MomentsPass | None = None
    level_values: FloatArray | None = None
    level_counts: FloatArray | None = None
    synthetic_c: float | None = None
    profile_moments: tuple[int, FloatArray, FloatArray] | None = None
    square_moments: tuple[int, FloatArray, FloatArray] | None = None

    @property
    def n_pool(self) -> int:
        """M."""
        return self.pool_size

    def scanned(self) -> Mapping[float, ScaleSums]:
        """The kernel sums of the standardised signals (:attr:`sums`; the pass of ``reader``
        the first time when they were not scanned yet)."""
        if self.sums is not None:
            return self.sums
        if ("scanned sums",) not in self._cache:
            run, reader = self._runner()
            self._cache[("scanned sums",)] = run(reader)
        return self._cache[("scanned sums",)]  # type: ignore[no-any-return]

    def _scales(self) -> Collection[float]:
        """The scales whose signal sums are (or will be, on first use) scanned."""
        if self.sums is not None:
            return self.sums
        return () if self.reader is None else self.reader.scales

    def pool_kernel(self, scale: float = 1.0) -> Any:
        """The kernel rows of the labeled items (the only items held in memory)."""
        return self.kernel(scale)

    def moments(
        self,
        name: str = "signals",
        features: FloatArray | None = None,
        *,
        nuisance_scale: float = 1.0,
    ) -> PoolMoments:
        """Pool moments of the signals, the primary signal or no feature, from the scanned sums."""
        key = ("moments", name, float(nuisance_scale))
        if key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        scale = float(nuisance_scale)
        if name not in FEATURE_SETS or scale not in self._scales():
            raise ValueError(
                f"The pool moments of {name!r} at nuisance scale {nuisance_scale} were not "
                "computed by the scan of this out-of-core pool; this method needs the pool in "
                "memory for now."
            )
        p = self.features.shape[1]
        if name == "none":
            columns: list[int] = []
        elif name == "signals":
            columns = list(range(p))
        else:
            assert self.primary is not None
            columns = [self.primary]
        kernel = self.kernel(1.0)
        kernel_b = kernel if scale == 1.0 else self.kernel(scale)
        moments = pool_moments(
            self.scanned(), columns, p=p, scale_b=scale, kernel=kernel, kernel_b=kernel_b
        )
        self._cache[key] = moments
        return moments

    def kernel_sums(
        self, name: str, features: FloatArray | None = None, *, scale: float = 1.0
    ) -> ScaleSums:
        """The scanned kernel sums of the signals (``'signals'``) or their masses (``'none'``)."""
        scale = float(scale)
        if name not in ("none", "signals") or scale not in self._scales():
            raise ValueError(
                f"The pool kernel sums of {name!r} at scale {scale} were not computed by the "
                "scan of this out-of-core pool; this method needs the pool in memory for now."
            )
        sums = self.scanned()[scale].broadcast(self.grid_size)
        if name == "none":
            empty = np.zeros((self.grid_size, 0))
            return ScaleSums(sums.mass, sums.sq_mass, empty, empty)
        return sums

    def _runner(self) -> tuple[Runner, MomentsPass]:
        if self.run is None or self.reader is None:
            raise ValueError(
                "This out-of-core pool context cannot scan its pool again; the learned "
                "control variates need the pool in memory."
            )
        return self.run, self.reader

    def design_basis(self, learner: Learner) -> DesignBasis:
        """The pool's :class:`~slicewise.estimators.learner_design.DesignBasis`: the levels of a
        discrete profile, or the pool standardisation of Z and of its square (from
        :attr:`profile_moments` and :attr:`square_moments` when given, otherwise a pass over the
        profile columns for each)."""

        def compute() -> DesignBasis:
            if learner == "boosting":
                return DesignBasis(levels=None)
            levels = self.level_values
            few = levels is not None and levels.size <= MAX_INTERACTION_LEVELS
            if self.locality.kind != "continuous" and few:
                return DesignBasis(levels=levels)
            if levels is not None and self.level_counts is not None:
                return counted_basis(levels, self.level_counts)
            run, reader = self._runner()
            moments = self.profile_moments
            mean, scale = standardisation(
                run(ProfileMomentsPass(reader)) if moments is None else moments
            )
            squares = self.square_moments
            if squares is None or moments is None:
                squares = run(ProfileMomentsPass(reader, mean, scale))
            n2, mean2, m22 = squares
            sd2 = np.sqrt(m22 / n2)
            return DesignBasis(None, mean, scale, mean2, np.where(sd2 > 0, sd2, 1.0))

        return self.cached(("design basis", learner), compute)

    def learner_design(self, learner: Learner) -> LearnerDesign:
        """The learner's covariates of the labeled items, standardised as over the whole pool."""
        return self.cached(
            ("learner design", learner),
            lambda: LearnerDesign.build(
                self.table.z,
                self.locality.kind,
                self.features,
                learner,
                self.design_basis(learner),
            ),
        )

    def learned_sums(self, fit: CrossFit, scales: Sequence[float]) -> LearnedSums:
        """One pass over the pool: the fold models of ``fit`` predict every batch, and the
        kernel sums of the predictions, of their average a and of [a, a^2, a X] at h, at the
        nuisance ``scales`` and globally give those of the standardised c = (a - mean) / sd
        (c's sums are affine in a's, with the pool mean and sd of a from the global sums).
        The signals' sums those need are the scanned ones (as the in-memory pool uses its
        signals' sums), or, at a scale that was not scanned, summed in the same pass; when the
        signals' sums were not scanned yet (a continuous profile), the one pass of
        :class:`~.fused_pass.FusedPass` gives both."""
        run, reader = self._runner()
        folds, k = len(fit.models), self.features.shape[1]
        every = tuple(sorted({1.0, *map(float, scales), math.inf}))
        synthetic = self._synthetic_model()
        fused = (
            self.sums is None
            and ("scanned sums",) not in self._cache
            and synthetic is None
            and self.locality.kind == "continuous"
            and all(s in reader.scales for s in every)
        )
        scanned = fused or all(s in self._scales() for s in every)
        columns: Any = LearnedColumns(
            fit.models,
            self.locality.kind,
            fit.learner,
            self.design_basis(fit.learner),
            signals=not scanned,
        )
        if fused:
            from .fused_pass import FusedPass

            self._cache[("scanned sums",)], raw = run(FusedPass(reader, columns))
        else:
            if synthetic is not None:  # the smoothing's prediction in the same pass
                columns = JoinedColumns(columns, PredictionColumns(synthetic), split=folds)
            raw = run(ColumnSumsPass(reader, every, columns))
        if synthetic is not None:
            self._cache[_prediction_key(synthetic)] = np.asarray(raw[1.0][:, -1])
            raw = {s: block[:, :-1] for s, block in raw.items()}
        total = raw[math.inf][0]
        mean = float(total[1 + folds] / total[0])
        sd = float(np.sqrt(max(total[2 + folds] / total[0] - mean**2, 0.0)))
        scale = sd if sd > 0 else 1.0

        def standardised(s: float) -> FloatArray:
            block = raw[s]
            x = self.scanned()[s].first if scanned else block[:, 3 + folds + k :]
            return standardised_sums(
                block[:, 1 + folds : 3 + folds + k], block[:, 0], x, mean, scale
            )

        at_h = np.column_stack([raw[1.0][:, 1 : 1 + folds], standardised(1.0)])
        at_b = {
            s: np.repeat(standardised(s), self.grid_size // raw[s].shape[0], axis=0)
            for s in every
            if s != 1.0
        }
        return LearnedSums(mean=mean, scale=scale, at_h=at_h, at_b=at_b)

    def prediction_sums(self, model: Predictor) -> FloatArray:
        """Kernel sums at h of ``model``'s predictions over the pool, one pass (none when the
        pass of :meth:`learned_sums` summed them already)."""
        key = _prediction_key(model)
        if key is not None and key in self._cache:
            return self._cache[key]  # type: ignore[no-any-return]
        run, reader = self._runner()
        return np.asarray(run(ColumnSumsPass(reader, (1.0,), PredictionColumns(model)))[1.0][:, 1])

    def _synthetic_model(self) -> Any:
        """The logistic model :func:`slicewise.methods.smoothed.synthetic_covariate` will fit on
        all the labeled items (they are this context's table), when it will be needed and its
        sums are not known yet; None otherwise."""
        if self.synthetic_c is None:
            return None
        from ..estimators.predictors import fit_logistic

        model = fit_logistic(self.features, np.asarray(self.table.label), c=self.synthetic_c)
        key = _prediction_key(model)
        return None if key is None or key in self._cache else model


def _prediction_key(model: Any) -> tuple[Any, ...] | None:
    """The cache key of a logistic model's prediction sums: its exact coefficients."""
    from ..estimators.predictors import LogisticModel

    if not isinstance(model, LogisticModel) or model.constant is not None:
        return None
    coef = np.asarray(model.coef, dtype=np.float64)
    return ("prediction sums", float(model.intercept), coef.tobytes())


def standardisation(moments: tuple[int, FloatArray, FloatArray]) -> tuple[FloatArray, FloatArray]:
    """The mean and scale (the sd, ddof 0; 1 where it is 0) of each column from its count,
    mean and sum of squared deviations: the learner's standardisation of Z."""
    n, mean, m2 = moments
    sd = np.sqrt(m2 / n)
    return mean, np.where(sd > 0, sd, 1.0)


def counted_basis(values: FloatArray, counts: FloatArray) -> DesignBasis:
    """:func:`~slicewise.estimators.learner_design.design_basis` of a discrete profile from the count
    of pool items at each value: the mean and sd (ddof 0) of Z and of its standardised square
    over the items, as count-weighted sums over the levels (no pass over the pool)."""
    n = float(counts.sum())
    mean = float(counts @ values) / n
    sd = math.sqrt(float(counts @ (values - mean) ** 2) / n)
    scale = sd if sd > 0 else 1.0
    square = ((values - mean) / scale) ** 2
    mean2 = float(counts @ square) / n
    sd2 = math.sqrt(float(counts @ (square - mean2) ** 2) / n)
    return DesignBasis(
        None,
        np.array([mean]),
        np.array([scale]),
        np.array([mean2]),
        np.array([sd2 if sd2 > 0 else 1.0]),
    )


#: Methods of :mod:`slicewise.methods.borrowing`: signal moments at the nuisance scales they try.
BORROWING_METHODS = ("auto", "lace_shrunk", "lace_learned")


def needed_scales(method: str, nuisance_scale: float, *, ordered: bool = True) -> tuple[float, ...]:
    """Kernel scales (multiples of h) whose pool sums ``method`` reads (``ordered``: the
    profile is continuous or ordinal)."""

    scales = {1.0}
    if method in ("lace", "per_signal_cv"):
        scales.add(float(nuisance_scale))
    if method == "global_cv":
        scales.add(math.inf)
    if method in BORROWING_METHODS:  # the candidates of methods.candidates.family_candidates
        scales.update({float(nuisance_scale), math.inf})
        if ordered and nuisance_scale == 1.0:
            scales.update(float(s) for s in NUISANCE_GRID)
    return tuple(sorted(scales))
