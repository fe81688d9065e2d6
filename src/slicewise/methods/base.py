"""What every profile method shares: the pool context, the labeled set, options and the registry.

A method is a function ``fit(ctx, labeled, options) -> MethodFit``. The :class:`PoolContext` holds
everything that depends only on the pool (standardised signals, kernel matrices, pool-side local
sums), computed once and reused across label draws, budgets and tuning values; the labeled side is
small and recomputed per draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._typing import BoolArray, FloatArray, IntArray, KernelMatrix, PoolKernel
from ..data.column_stats import standardize
from ..data.table import ItemTable
from ..estimators.centered import CoefficientFit, centered_estimate
from ..estimators.learned import CrossFit, Predictor
from ..estimators.learner_design import Learner, LearnerDesign
from ..inference.calibration import given_set_factor
from ..inference.cv_variance import dense_weights
from ..inference.variance import local_variance
from ..locality.weights import BlockKernel, Locality
from ..moments.kernel_ops import column_sums, square_column_sums, take_rows
from ..moments.pool import (
    LearnedSums,
    ScaleSums,
    block_sums,
    column_products,
    moments_from_sums,
    scale_sums,
    scale_sums_with,
    scales_sums_with,
    standardised_sums,
)
from ..moments.sums import LabeledMoments, PoolMoments
from .options import MethodOptions

T = TypeVar("T")

#: A dense pool kernel with at most this many entries (items x grid points) is stored once and
#: shared; a larger one is a :class:`~slicewise.locality.weights.BlockKernel`, evaluated block by
#: block in each pass over the pool (2^22 entries: 32 MB, M = 200,000 at G = 20).
STORED_KERNEL_LIMIT = 1 << 22
#: The attributes of a context made by :meth:`PoolContext.build` that are computed from the
#: table's signals on first use.
STANDARDISED = ("features", "signal_mean", "signal_scale")


@dataclass(frozen=True, eq=False)
class PoolContext:
    """Pool-side state of a profile problem, built once per pool.

    Attributes
    ----------
    table : ItemTable
        The validated pool (labels are not read from it by the methods; see :class:`LabeledSet`).
    locality : Locality
        Grid and locality rule (profile bandwidth h).
    features : ndarray of shape (M, K)
        Signals standardised over the pool (by :meth:`build`: on first use).
    signal_mean, signal_scale : ndarray of shape (K,)
        The standardisation, to map coefficients back to raw signal units.
    primary : int or None
        Column of the primary judge signal, when one was named.
    """

    table: ItemTable
    locality: Locality
    features: FloatArray
    signal_mean: FloatArray
    signal_scale: FloatArray
    primary: int | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        table: ItemTable,
        locality: Locality,
        *,
        primary: int | None = None,
        kernels: Mapping[float, KernelMatrix] | None = None,
    ) -> PoolContext:
        """Prepare the caches; the signals are standardised when first used.

        ``kernels`` optionally seeds the kernel cache with matrices already computed for these
        items (rows in this table's order), keyed by the scale of :meth:`kernel`; tables that share
        their items (several models on one pool) then share one kernel matrix.
        """
        cache: dict[Any, Any] = {}
        for key, matrix in (kernels or {}).items():
            cache[("kernel", float(key))] = matrix
        pending = np.zeros(0)
        ctx = cls(
            table=table,
            locality=locality,
            features=pending,
            signal_mean=pending,
            signal_scale=pending,
            primary=primary,
            _cache=cache,
        )
        for name in STANDARDISED:  # made on first use (__getattr__)
            object.__delattr__(ctx, name)
        return ctx

    if not TYPE_CHECKING:  # (so that mypy still checks every attribute name)

        def __getattr__(self, name: str) -> Any:
            """The standardisation of a context made by :meth:`build`, made the first time one
            of :data:`STANDARDISED` is asked for: a method that never reads the standardised
            signals (naive) pays for no (M x K) copy and no pass over the signals."""
            if name not in STANDARDISED or "table" not in self.__dict__:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            values = standardize(self.table.signals, self.table.signal_moments)
            for key, value in zip(STANDARDISED, values, strict=True):
                object.__setattr__(self, key, value)
            return self.__dict__[name]

    @property
    def grid_size(self) -> int:
        """G."""
        return self.locality.size

    @property
    def n_pool(self) -> int:
        """M."""
        return self.table.n_pool

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value cached under ``key``, computed by ``compute()`` the first time.

        The one way to keep pool-side work (anything that depends on the pool, not on the
        labels) for the other methods and label draws that use this context.
        """
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]  # type: ignore[no-any-return]

    def _bandwidth(self, scale: float) -> FloatArray | None:
        if np.isinf(scale):
            return np.full(1, np.inf)
        if scale == 1.0 or self.locality.kind == "categorical":
            return None
        return self.locality.bandwidth * scale

    def kernel(self, scale: float = 1.0) -> KernelMatrix:
        """Kernel matrix at ``scale`` times the profile bandwidth (``inf``: one global neighbourhood).

        Cached, so every method and label draw shares one matrix per bandwidth.
        """
        return self.cached(
            ("kernel", float(scale)),
            lambda: self.locality.kernel(self.table.z, self._bandwidth(scale)),
        )

    def pool_kernel(self, scale: float = 1.0) -> PoolKernel:
        """The kernel at ``scale`` x h for sums over the pool and rows of labeled items.

        The stored :meth:`kernel` when it is small, already stored or sparse; a
        :class:`~slicewise.locality.weights.BlockKernel` (the same entries, never stored whole)
        for a dense Gaussian kernel above :data:`STORED_KERNEL_LIMIT` entries.
        """
        scale = float(scale)
        stored = ("kernel", scale)
        large = self.n_pool * self.grid_size > STORED_KERNEL_LIMIT
        if stored in self._cache or self.locality.kind != "continuous" or np.isinf(scale):
            return self.kernel(scale)
        if not large:
            return self.kernel(scale)
        bandwidth = self._bandwidth(scale)
        return self.cached(
            ("block kernel", scale),
            lambda: BlockKernel(
                self.table.z,
                self.locality.grid,
                self.locality.bandwidth if bandwidth is None else bandwidth,
            ),
        )

    def kernel_sums(
        self, name: str, features: FloatArray | None = None, *, scale: float = 1.0
    ) -> ScaleSums:
        """Kernel sums at ``scale`` x h of a named feature matrix (default: the standardised
        signals), one pass over the pool (:func:`~slicewise.moments.pool.scale_sums`); cached by
        (name, scale). The feature set ``'none'`` has the masses only."""
        x = self.features if features is None else features
        scale = float(scale)
        if name == "none":  # the masses of any feature set's sums at this scale will do
            for key, value in self._cache.items():
                if key[:1] == ("sums",) and key[2] == scale:
                    g = value.mass.size
                    return ScaleSums(value.mass, value.sq_mass, np.zeros((g, 0)), np.zeros((g, 0)))
        return self.cached(("sums", name, scale), lambda: scale_sums(self.pool_kernel(scale), x))

    def moments(
        self,
        name: str = "signals",
        features: FloatArray | None = None,
        *,
        nuisance_scale: float = 1.0,
    ) -> PoolMoments:
        """Pool moments of a named feature matrix (default: the standardised signals).

        ``nuisance_scale`` is b / h, the nuisance bandwidth as a multiple of the profile bandwidth.
        Cached by (name, nuisance_scale); pass ``features`` the first time a new name is used.
        """

        def compute() -> PoolMoments:
            x = self.features if features is None else features
            kernel = self.pool_kernel(1.0)
            at_h = self.kernel_sums(name, x)
            if nuisance_scale == 1.0:
                kernel_b, at_b = kernel, at_h
            else:
                kernel_b, at_b = (
                    self.pool_kernel(nuisance_scale),
                    self.kernel_sums(name, x, scale=nuisance_scale),
                )
            p = x.shape[1]
            return moments_from_sums(at_h, at_b, range(p), p=p, kernel=kernel, kernel_b=kernel_b)

        return self.cached(("moments", name, float(nuisance_scale)), compute)

    def learner_design(self, learner: Learner) -> LearnerDesign:
        """Covariates of the learner (:class:`~slicewise.estimators.learner_design.LearnerDesign`) for
        the items of :attr:`table`, made block by block when asked; cached per learner."""
        return self.cached(
            ("learner design", learner),
            lambda: LearnerDesign.build(self.table.z, self.locality.kind, self.features, learner),
        )

    def _sums_with(
        self, scale: float, columns: Callable[[int, int], FloatArray], width: int
    ) -> tuple[ScaleSums, FloatArray]:
        """The kernel sums at ``scale`` of the signals and, in the same pass over the pool, of
        the (M, width) columns made by ``columns(start, stop)``: a pass already made for the
        signals (cached) is not made again, only the columns' one."""
        key = ("sums", "signals", float(scale))
        kernel = self.pool_kernel(scale)
        if key in self._cache:
            return self._cache[key], block_sums(kernel, columns, items=self.n_pool)
        sums, extra = scale_sums_with(kernel, self.features, columns, width)
        self._cache[key] = sums
        return sums, extra

    def learned_sums(self, fit: CrossFit, scales: Sequence[float]) -> LearnedSums:
        """Pool sums of the cross-fitted prediction ``fit`` at h and at the nuisance ``scales``
        (and ``inf``), which also give the signals' kernel sums at those scales when they were
        not computed yet.

        The pass at h makes the fold models' predictions block by block
        (:meth:`~slicewise.estimators.learned.CrossFit.predictions`) and keeps only their
        average a (M,); the sums of the standardised c = (a - mean) / sd are affine in those of
        [a, a^2, a X] (:func:`standardised_sums`), as on an out-of-core pool. On a new pool
        with dense kernels every scale is summed in that one pass
        (:func:`~slicewise.moments.pool.scales_sums_with`: each block's columns are made once
        for all the kernels); otherwise in one pass per kernel.
        """
        folds, k = fit.folds, self.features.shape[1]
        x = self.features
        average = np.empty(self.n_pool)
        others = sorted({*map(float, scales), math.inf} - {1.0})
        all_scales = [1.0, *others]
        kernels = [self.pool_kernel(s) for s in all_scales]

        def fill(start: int, stop: int, out: FloatArray) -> None:
            """[a, a^2, a X, P^(1), ..., P^(F)] into the column-major ``out``: the fold
            models' predictions straight into their columns, whose transpose is C-ordered."""
            predictions = fit.predictions(start, stop, out=out[:, 2 + k :].T)
            np.mean(predictions, axis=0, out=average[start:stop])
            column_products(x, average, start, stop, out=out[:, : 2 + k])

        def at_h(start: int, stop: int) -> FloatArray:
            out = np.empty((stop - start, 2 + k + folds), order="F")
            fill(start, stop, out)
            return out

        new = all(("sums", "signals", s) not in self._cache for s in all_scales)
        dense = [kernel for kernel in kernels if isinstance(kernel, np.ndarray | BlockKernel)]
        if new and len(dense) == len(kernels):
            passes = scales_sums_with(dense, x, at_h, 2 + k + folds, shared=2 + k, fill=fill)
            for s, (sums, _) in zip(all_scales, passes, strict=True):
                self._cache[("sums", "signals", s)] = sums
        else:
            passes = [self._sums_with(1.0, at_h, 2 + k + folds)]
            passes += [
                self._sums_with(
                    s, lambda start, stop: column_products(x, average, start, stop), 2 + k
                )
                for s in others
            ]
        signals_h, raw_h = passes[0]
        mean, sd = float(average.mean()), float(average.std())
        scale = sd if sd > 0 else 1.0
        sums_h = np.column_stack(
            [
                raw_h[:, 2 + k :],
                standardised_sums(raw_h[:, : 2 + k], signals_h.mass, signals_h.first, mean, scale),
            ]
        )
        at_b = {
            s: standardised_sums(raw_b, signals_b.mass, signals_b.first, mean, scale)
            for s, (signals_b, raw_b) in zip(others, passes[1:], strict=True)
        }
        return LearnedSums(mean=mean, scale=scale, at_h=sums_h, at_b=at_b)

    def prediction_sums(self, model: Predictor) -> FloatArray:
        """Kernel sums at h of ``model``'s predictions from the standardised signals, (G,),
        predicted block by block."""
        x = self.features
        return block_sums(
            self.pool_kernel(1.0),
            lambda start, stop: model.predict(x[start:stop]).reshape(-1, 1),
            items=self.n_pool,
        )[:, 0]


@dataclass(frozen=True, eq=False)
class LabeledSet:
    """One labeled set L: pool positions, their gold labels and, optionally, inclusion probabilities.

    ``pi`` (shape (n,), values in (0, 1]) gives each labeled item's known inclusion probability;
    the methods that support design weights (``MethodSpec.design_weights``) then weight item i by
    1 / pi_i (Hajek local means, :class:`~slicewise.moments.sums.LabeledMoments`). None means
    simple random sampling of L from T.
    """

    index: IntArray
    y: FloatArray
    pi: FloatArray | None = None
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value kept under ``key`` for this labeled set, computed the first time.

        For what depends on the labels and is asked for more than once in one fit (the naive
        fit beside ``auto``, the synthetic covariate of the smoothing); keys name the pool
        context they were computed on.
        """
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return]

    @classmethod
    def from_table(cls, table: ItemTable) -> LabeledSet:
        """The items of ``table`` whose label is present."""
        index = table.labeled_index
        return cls(index=index, y=np.asarray(table.label[index], dtype=np.float64))

    @property
    def n(self) -> int:
        """n = |L|."""
        return int(self.index.size)


def labeled_sizes(ctx: PoolContext, labeled: LabeledSet) -> tuple[FloatArray, FloatArray]:
    """Per grid point: the labeled effective size (sum_L k)^2 / sum_L k^2 (0 without labels) and
    the labeled fraction of the kernel mass sum_L k / sum_T k (NaN where the pool has none)."""
    rows = take_rows(ctx.pool_kernel(1.0), labeled.index)
    mass = column_sums(rows)
    sq = square_column_sums(rows)
    pool_mass = ctx.moments("none", np.zeros((ctx.n_pool, 0))).mass
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(sq > 0, mass**2 / np.where(sq > 0, sq, 1.0), 0.0)
        fraction = np.where(pool_mass > 0, mass / np.where(pool_mass > 0, pool_mass, 1.0), np.nan)
    return n_eff, fraction


@dataclass(frozen=True, eq=False)
class MethodFit:
    """What a method returns for one labeled set (before it is wrapped in a ProfileResult).

    Attributes
    ----------
    estimate : ndarray of shape (G,)
    var_pool, var_population : ndarray of shape (G,)
        NaN where the method has no variance formula.
    r2, gain : ndarray of shape (G,)
        Estimated local R^2 and predicted gain (0 and 1 where not applicable).
    borrowed : ndarray of bool, shape (G,)
    params : dict
        Tuning values used.
    notes : tuple of str
    df : ndarray of shape (G,), optional
        Degrees of freedom for Student-t intervals (None: normal intervals).
    bias_bound : ndarray of shape (G,), optional
        Bound on the bias of a smoothed estimate, added to the interval's half-width
        (:mod:`slicewise.smoothing.objective`; None: 0 everywhere).
    floored : ndarray of bool, shape (G,), optional
        Where the variance is the residual floor of
        :func:`~slicewise.estimators.centered.residual_floor` (None: nowhere).
    crowded : ndarray of bool, shape (G,), optional
        Where a coefficient fitted on the labels has more than :data:`SIGNALS_PER_LABEL`
        features per effective labeled item of its fit (None: nowhere).
    """

    estimate: FloatArray
    var_pool: FloatArray
    var_population: FloatArray
    r2: FloatArray
    gain: FloatArray
    borrowed: BoolArray
    params: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    df: FloatArray | None = None
    bias_bound: FloatArray | None = None
    floored: BoolArray | None = None
    crowded: BoolArray | None = None


#: An in-sample coefficient with more features than this per effective labeled item of its fit
#: (Kish's size at the nuisance bandwidth) is flagged (:attr:`MethodFit.crowded`). ``lace``'s
#: in-sample fit biases the estimate by O(K / n); measured on AlpacaEval, LLMBar and UniEval
#: (``research.per_slice --method lace``, 200 draws, 1,000 slices with at least 10 labels), the
#: mean |bias| was 0.04-0.08 of the RMSE at up to 0.05 signals per label, 0.18 at 0.05-0.1,
#: 0.26 at 0.1-0.2, 0.36 at 0.2-0.4 and 0.44 above, and single slices covered down to 0.78.
SIGNALS_PER_LABEL = 0.1


@dataclass(frozen=True, eq=False)
class GivenSet:
    """What the residual variance given the labeled set needs (:func:`linear_fit`): the labeled
    set, its rows ``x`` of the fit's features, its rows ``signals`` of the standardised features
    the variance calibrates on and their local pool means ``signal_mean`` (shape (G, K))."""

    labeled: LabeledSet
    x: FloatArray
    signals: FloatArray
    signal_mean: FloatArray


def linear_fit(
    pool: PoolMoments,
    lab: LabeledMoments,
    coef: CoefficientFit,
    *,
    params: dict[str, Any] | None = None,
    notes: tuple[str, ...] = (),
    given: GivenSet | None = None,
) -> MethodFit:
    """Estimate and variances of the centered control variate with coefficient ``coef``.

    With ``given`` the residual variance is the one given the labeled set
    (:func:`~slicewise.inference.calibration.given_set_factor`) where that is the larger: for
    coefficients fitted on the labels (not for a fixed or supplied one).
    """
    factor: FloatArray | None = None
    crowded: BoolArray | None = None
    if given is not None:
        crowded = coef.coef.shape[1] * lab.sum_wb2 > SIGNALS_PER_LABEL
        weights, _ = dense_weights(pool.kernel, given.labeled.index)
        sample_mass = lab.mass if lab.sample_mass is None else lab.sample_mass
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.where(pool.mass > 0, sample_mass / pool.mass, 1.0)
        factor = given_set_factor(
            weights,
            given.labeled.y,
            given.x,
            coef.coef,
            given.signals,
            given.signal_mean,
            fraction,
            pi=given.labeled.pi,
        )
    variance = local_variance(pool, lab, coef, given_factor=factor)
    return MethodFit(
        estimate=centered_estimate(pool, lab, coef.coef),
        var_pool=variance.pool,
        var_population=variance.population,
        r2=variance.r2,
        gain=variance.gain,
        borrowed=np.zeros(coef.coef.shape[0], dtype=bool),
        params={} if params is None else params,
        notes=notes,
        df=variance.df,
        floored=variance.floored,
        crowded=crowded,
    )


MethodFunction = Callable[[PoolContext, LabeledSet, MethodOptions], MethodFit]


@dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : str
    description : str
        One line.
    needs : tuple of str
        What the method needs beyond gold labels: 'signals', 'primary' (a named primary judge
        signal), 'coef' (a supplied coefficient), 'continuous' (a numeric profile).
    tunable : str or None
        Its tuning parameter for :func:`slicewise.select` (an option of :class:`MethodOptions`).
    grid : tuple of float
        The default cross-validation grid for that parameter (LACE paper, Appendix H.1).
    variance : bool
        Whether the method has a variance formula (otherwise se is NaN).
    fit : callable
    design_weights : bool
        Whether the method weights by known inclusion probabilities (``LabeledSet.pi``); the
        others refuse a labeled set that carries them.
    entry_points : tuple of {'profile', 'domains'}
        The public functions whose ``method=`` takes the name: :func:`slicewise.profile` (and
        the functions built on it) and :func:`slicewise.domains`. A domains-only method's
        ``fit`` refuses profiles (its smoothing is ``profile(smooth=...)`` there).
    """

    name: str
    description: str
    needs: tuple[str, ...]
    tunable: str | None
    grid: tuple[float, ...]
    variance: bool
    fit: MethodFunction
    design_weights: bool = False
    entry_points: tuple[str, ...] = ("profile",)
