"""The candidates of ``auto`` and ``lace_shrunk``: feature sets (the standardised signals; a
cross-fitted learned prediction with or without them) with their pool moments, the coefficient
rules tried on them (shrinkage strength kappa toward the pooled coefficient, nuisance bandwidth b),
and the plain words a report uses for each (:func:`candidate_words`). The choice among them is in
:mod:`.borrowing`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .._typing import FloatArray, IntArray, KernelMatrix
from ..estimators.centered import (
    CoefficientFit,
    ridge_coefficient,
    shrunk_coefficient,
)
from ..estimators.learned import (
    CrossFit,
)
from ..moments.kernel_ops import as_dense_if_small, safe_divide, take_rows
from ..moments.pool import LearnedSums, prepend_column
from ..moments.row_sums import LabeledRowSums
from ..moments.sums import LabeledMoments, PoolMoments
from .base import LabeledSet, PoolContext
from .options import MethodOptions

#: Shrinkage strengths kappa tried when none is given (0 = LACE, inf = one pooled coefficient).
SHRINKAGE_GRID: tuple[float, ...] = (0.0, 4.0, 16.0, 64.0, np.inf)
#: Nuisance bandwidths b / h tried for ordered profiles when none is given.
NUISANCE_GRID: tuple[float, ...] = (1.0, 2.0)


@dataclass(frozen=True, eq=False)
class FeatureSet:
    """Features of one candidate family for one labeled set.

    Attributes
    ----------
    name : str
    pool : dict
        Pool moments by nuisance scale b / h (and ``inf`` for the pooled coefficient); for learned
        features the pool mean of the prediction column is the exact centering Mbar(z).
    x_lab : ndarray of shape (n, p)
        Features of the labeled items (out-of-fold predictions for learned ones).
    prior : ndarray of shape (p,), optional
        Coefficient the ridge penalty pulls toward (1 on the raw prediction, 0 on the signals).
    """

    name: str
    pool: dict[float, PoolMoments]
    x_lab: FloatArray
    prior: FloatArray | None = None

    def first(self, count: int, name: str) -> FeatureSet:
        """The same features restricted to the first ``count`` columns."""
        return FeatureSet(
            name=name,
            pool={s: m.first_columns(count) for s, m in self.pool.items()},
            x_lab=self.x_lab[:, :count],
            prior=None if self.prior is None else self.prior[:count],
        )


@dataclass(frozen=True)
class Candidate:
    """One coefficient rule on one feature set."""

    features: str
    nuisance_scale: float
    shrinkage: float

    @property
    def complexity(self) -> float:
        """Order of simplicity for the one-standard-error rule (smaller is simpler).

        Naive, then the signals before learned features; within a family the pooled coefficient,
        then strong to weak shrinkage, and wide before narrow nuisance bandwidths.
        """
        if self.features == "none":
            return -1.0
        family = {"signals": 0.0, "learned": 10.0, "learned+signals": 20.0}[self.features]
        if np.isinf(self.shrinkage):
            return family
        strength = 1.0 + 5.0 / (1.0 + self.shrinkage)  # kappa 64 -> ~1.1, kappa 0 -> 6
        return family + strength + 0.1 * (4.0 / self.nuisance_scale)

    @property
    def label(self) -> str:
        """Readable name, e.g. ``signals: b = 2h, kappa = 16``."""
        if self.features == "none":
            return "naive"
        kappa = "pooled" if np.isinf(self.shrinkage) else f"kappa = {self.shrinkage:g}"
        if np.isinf(self.shrinkage):
            return f"{self.features}: pooled coefficient"
        return f"{self.features}: b = {self.nuisance_scale:g}h, {kappa}"


def signal_features(ctx: PoolContext, labeled: LabeledSet, scales: Sequence[float]) -> FeatureSet:
    """The standardised signals, pool moments at every needed nuisance scale (cached per pool)."""
    pool = {s: ctx.moments("signals", nuisance_scale=s) for s in {*scales, np.inf}}
    return FeatureSet(name="signals", pool=pool, x_lab=ctx.features[labeled.index])


def learned_features(
    ctx: PoolContext,
    labeled: LabeledSet,
    fit: CrossFit,
    scales: Sequence[float],
    residual: FloatArray | None = None,
    sums: LearnedSums | None = None,
) -> FeatureSet:
    """Cross-fitted prediction (standardised over the pool) followed by the signals.

    :meth:`FeatureSet.first` gives the prediction alone.

    The pool moments use the fold-averaged prediction for the covariance and the exact centering
    Mbar(z) of :class:`~slicewise.estimators.learned.CrossFit` for the mean. One pass over the
    pool per kernel gives every sum that involves the prediction: at h the fold models'
    predictions (for Mbar) and [c, c^2, c S] of the standardised prediction c, at each wider
    nuisance bandwidth [c, c^2, c S] again (``sums``, :meth:`PoolContext.learned_sums`, when
    already computed).
    """
    if sums is None:
        sums = ctx.learned_sums(fit, scales)
    mean, scale = sums.mean, sums.scale
    lab_x = (fit.oof - mean) / scale
    folds = fit.folds
    x = ctx.features
    kernel = ctx.pool_kernel(1.0)
    sums_h = sums.at_h
    mass = ctx.kernel_sums("none", np.zeros((ctx.n_pool, 0))).mass
    if residual is None:
        centre = fit.centering(kernel, labeled.index, pool_mass=mass, pool_sums=sums_h[:, :folds])
    else:  # unequal inclusion probabilities: residual weights of the design
        centre = fit.design_centering(
            kernel, labeled.index, residual, pool_mass=mass, pool_sums=sums_h[:, :folds]
        )
    centre = (centre - mean) / scale
    lab_x = np.column_stack([lab_x, x[labeled.index]])
    pool: dict[float, PoolMoments] = {}
    for s in sorted({*scales, np.inf}):
        signals = ctx.moments("signals", nuisance_scale=s)
        mean_c = safe_divide(sums_h[:, folds : folds + 1], signals.mass)[:, 0]
        if signals.kernel_b is signals.kernel:
            sums_b, mean_sb = sums_h[:, folds:], signals.mean
        else:
            sums_b = sums.at_b[s]
            mean_sb = safe_divide(ctx.kernel_sums("signals", scale=s).first, signals.mass_b)
        moments = prepend_column(signals, mean_c, safe_divide(sums_b, signals.mass_b), mean_sb)
        adjusted = moments.mean.copy()
        adjusted[:, 0] = np.where(np.isfinite(moments.mean[:, 0]), centre, np.nan)
        pool[s] = replace(moments, mean=adjusted)
    name = "learned+signals"
    prior = np.zeros(lab_x.shape[1])
    prior[0] = scale  # coefficient 1 on the raw prediction, in standardised units
    return FeatureSet(name=name, pool=pool, x_lab=lab_x, prior=prior)


class CoefficientCache:
    """Local (per nuisance scale) and pooled coefficients of one feature set, fitted on subsets of
    the labeled set and memoised, so that every shrinkage strength reuses the same fits.

    Labeled kernel rows are taken (and densified when small) once per scale. Given the folds of
    the cross-validation (``fold``, one per labeled item), the labeled sums of a training set
    made of whole folds (and of all of L) are those of its folds added up
    (:class:`~slicewise.moments.row_sums.LabeledRowSums`), each fold's made once per scale: one
    pass over L's rows per scale instead of one per training set (equal up to the order of the
    additions). With ``source`` = (cache, columns), a cache of the same labeled set and folds
    whose features include these as ``columns``, the fold sums are the source's restricted to
    them (:meth:`~slicewise.moments.row_sums.LabeledRowSums.select`): the signals and the
    learned prediction alone take theirs from the learned prediction with the signals.
    """

    def __init__(
        self,
        ctx: PoolContext,
        labeled: LabeledSet,
        features: FeatureSet,
        ridge: float,
        *,
        fold: IntArray | None = None,
        source: tuple[CoefficientCache, Sequence[int]] | None = None,
    ) -> None:
        self._ctx = ctx
        self._labeled = labeled
        self._features = features
        self._ridge = ridge
        self._fold = fold
        self._rows: dict[float, KernelMatrix] = {}
        self._fits: dict[tuple[float, bytes], tuple[CoefficientFit, FloatArray]] = {}
        self._fold_sums: dict[float, list[LabeledRowSums]] = {}
        self._fold_sizes = None if fold is None else np.unique(fold, return_counts=True)
        self._source = source

    def _kernel_rows(self, scale: float) -> KernelMatrix:
        if scale not in self._rows:  # one copy per labeled set, shared by the feature sets
            ctx, labeled = self._ctx, self._labeled
            self._rows[scale] = labeled.memo(
                ("kernel rows", ctx, scale),
                lambda: as_dense_if_small(take_rows(ctx.pool_kernel(scale), labeled.index)),
            )
        return self._rows[scale]

    def fit(self, scale: float, rows: IntArray) -> tuple[CoefficientFit, FloatArray]:
        """Ridge coefficient at nuisance scale ``scale`` (inf = pooled) on labeled positions
        ``rows``, and the labeled effective size n_eff,b(z) = 1 / sum (w^b)^2 of that subset."""
        key = (scale, rows.tobytes())
        if key not in self._fits:
            lab = self._by_folds(scale, rows)
            if lab is None:
                y = self._labeled.y[rows]
                x = self._features.x_lab[rows]
                k_rows = self._kernel_rows(1.0)[rows]
                kb_rows = k_rows if scale == 1.0 else self._kernel_rows(scale)[rows]
                pi = None if self._labeled.pi is None else self._labeled.pi[rows]
                lab = LabeledMoments.from_rows(k_rows, kb_rows, y, x, pi=pi)
            coef = ridge_coefficient(
                self._features.pool[scale], lab, self._ridge, prior=self._features.prior
            )
            with np.errstate(divide="ignore"):
                n_eff = np.where(
                    lab.sum_wb2 > 0, 1.0 / np.where(lab.sum_wb2 > 0, lab.sum_wb2, 1), 0
                )
            self._fits[key] = (coef, n_eff)
        return self._fits[key]

    def _by_folds(self, scale: float, rows: IntArray) -> LabeledMoments | None:
        """The labeled moments of ``rows`` from the sums of its folds, or None when ``rows``
        is not a union of whole folds or the kernel rows are sparse."""
        fold = self._fold
        if fold is None or self._fold_sizes is None:
            return None
        k_all = self._kernel_rows(1.0)
        kb_all = k_all if scale == 1.0 else self._kernel_rows(scale)
        if not isinstance(k_all, np.ndarray) or not isinstance(kb_all, np.ndarray):
            return None
        levels, sizes = self._fold_sizes
        present = np.isin(levels, fold[rows], kind="table")  # by lookup: no sort of rows
        if rows.size != int(sizes[present].sum()):
            return None
        if scale not in self._fold_sums and self._source is not None:
            cache, columns = self._source
            self._fold_sums[scale] = [part.select(columns) for part in cache._fold_parts(scale)]
        chosen = [part for part, keep in zip(self._fold_parts(scale), present, strict=True) if keep]
        return LabeledMoments.from_row_sums(functools.reduce(operator.add, chosen))

    def _fold_parts(self, scale: float) -> list[LabeledRowSums]:
        """The labeled sums of every fold at ``scale``, made once (dense kernel rows)."""
        fold = self._fold
        assert fold is not None
        assert self._fold_sizes is not None
        k_all = self._kernel_rows(1.0)
        kb_all = k_all if scale == 1.0 else self._kernel_rows(scale)
        assert isinstance(k_all, np.ndarray)
        assert isinstance(kb_all, np.ndarray)
        if scale not in self._fold_sums:
            parts = []
            for level in self._fold_sizes[0]:
                index = np.flatnonzero(fold == level)
                k = k_all[index]
                parts.append(
                    LabeledRowSums.of(
                        k,
                        k if scale == 1.0 else kb_all[index],
                        self._labeled.y[index],
                        self._features.x_lab[index],
                        pi=None if self._labeled.pi is None else self._labeled.pi[index],
                    )
                )
            self._fold_sums[scale] = parts
        return self._fold_sums[scale]

    def rule(self, candidate: Candidate) -> Callable[[IntArray], tuple[CoefficientFit, FloatArray]]:
        """Coefficient of ``candidate`` on a subset of L, with its shrinkage weight omega(z)."""

        def rule(rows: IntArray) -> tuple[CoefficientFit, FloatArray]:
            pooled, _ = self.fit(np.inf, rows)
            g = pooled.coef.shape[0]
            if np.isinf(candidate.shrinkage):
                return pooled, np.zeros(g)
            local, n_eff = self.fit(candidate.nuisance_scale, rows)
            if candidate.shrinkage == 0:
                return local, np.ones(g)
            fit = shrunk_coefficient(local, pooled, n_eff, candidate.shrinkage)
            return fit, n_eff / (n_eff + candidate.shrinkage)

        return rule


def coefficient_caches(
    ctx: PoolContext,
    labeled: LabeledSet,
    feature_sets: dict[str, FeatureSet],
    ridge: float,
    fold: IntArray,
) -> dict[str, CoefficientCache]:
    """A :class:`CoefficientCache` per feature set; with the learned prediction and the signals,
    the signals' and the prediction's alone take their fold sums from it (``source``)."""
    caches: dict[str, CoefficientCache] = {}
    parts_of: dict[str, tuple[CoefficientCache, list[int]]] = {}
    if "learned+signals" in feature_sets:  # its fold sums hold those of the two others
        whole = caches["learned+signals"] = CoefficientCache(
            ctx, labeled, feature_sets["learned+signals"], ridge, fold=fold
        )
        k = ctx.features.shape[1]
        parts_of = {"learned": (whole, [0]), "signals": (whole, list(range(1, 1 + k)))}
    for name, feats in feature_sets.items():
        if name not in caches:
            caches[name] = CoefficientCache(
                ctx, labeled, feats, ridge, fold=fold, source=parts_of.get(name)
            )
    return caches


def family_candidates(
    ctx: PoolContext, families: Sequence[str], options: MethodOptions
) -> list[Candidate]:
    ordered = ctx.locality.kind != "categorical"
    if options.shrinkage is not None:
        kappas: tuple[float, ...] = (options.shrinkage,)
    else:
        kappas = SHRINKAGE_GRID
    scales = (
        (options.nuisance_scale,) if options.nuisance_scale != 1.0 or not ordered else NUISANCE_GRID
    )
    out: list[Candidate] = []
    for family in families:
        for kappa in kappas:
            if np.isinf(kappa):
                out.append(Candidate(family, 1.0, kappa))
                continue
            for scale in scales:
                out.append(Candidate(family, scale, kappa))
    return out


def candidate_words(label: str) -> str:
    """A candidate of ``auto`` (its :attr:`Candidate.label`, e.g. 'signals: b = 1h, kappa = 64',
    or 'naive') in plain words, for notes and reports."""
    if label == "naive":
        return "the gold labels alone"
    features, _, rest = label.partition(": ")
    what = {
        "signals": "the cheap signals",
        "learned": "a prediction of the label learned from the signals",
        "learned+signals": "the cheap signals and a prediction learned from them",
    }.get(features, features)
    if rest == "pooled coefficient":
        how = "with one adjustment shared by the whole axis"
    elif "kappa" in rest:
        how = (
            "with an adjustment that varies along the axis, pulled toward a shared one where "
            "labels are few"
        )
    else:
        how = rest
    return f"{what}, {how}" if how else what
