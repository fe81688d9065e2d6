"""A ranking of several models: all pairwise gaps with simultaneous intervals.

Every pairwise gap is the direct paired gap of :mod:`slicewise.models.gaps` (LACE paper, Section
3.4); their joint covariance comes from the item-level influence values
(:mod:`slicewise.models.influence`), and the simultaneous intervals from single-step min-P over
the t statistics or Bonferroni-t (:mod:`slicewise.inference.simultaneous`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._display import Displayed
from .._typing import FloatArray, Kind, ObjectArray, Target
from .._validation import check_choice, check_common, check_level, check_positive_int, check_rng
from ..data.pairs import PAIRED_SIGNALS, PairedSignals, common_items, labeled_for_all
from ..data.pairs import pair_data as make_pair
from ..data.panel import LabelSpec, SignalSpec, make_panel
from ..exceptions import SlicewiseWarning
from ..inference.influence import correlation
from ..inference.simultaneous import clean_df, min_p_draws, per_interval_level, t_critical
from ..locality.weights import make_locality
from ..methods.base import LabeledSet, MethodFit, PoolContext
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.run import fit_with_warnings
from ..results import ConfidenceInterval, normal_interval, within_gap_range
from .influence import INFLUENCE_METHODS, InfluenceMethod, influence_pieces, scaled_influence

Correction = Literal["maxt", "bonferroni"]
CORRECTIONS: tuple[Correction, ...] = ("maxt", "bonferroni")

#: Labeled items per block when accumulating the joint covariance of all pairwise gaps.
BLOCK = 4096


@dataclass(frozen=True, eq=False, repr=False)
class ModelRanking(Displayed):
    """All pairwise gaps of several models across the profile, with simultaneous intervals.

    Attributes
    ----------
    models : tuple of str
    pairs : tuple of (str, str)
        (model_a, model_b) for a < b in the order of :attr:`models`.
    z : ndarray of object, shape (G,) or (G, q)
    estimate, se : ndarray of shape (P, G)
        Gap estimates theta_a(z) - theta_b(z) and their standard errors.
    df : ndarray of shape (P, G)
        Degrees of freedom of each gap's Student-t interval (those of :func:`gap`); NaN means a
        normal interval.
    correction : {'maxt', 'bonferroni'}
    null_min_p : ndarray
        Sorted draws of the smallest two-sided p-value over the family under the joint t law of
        :mod:`slicewise.inference.simultaneous` ('maxt'; empty for 'bonferroni'); their quantile
        at 1 - level is the per-interval level alpha*.
    n_family : int
        Number of (pair, grid point) intervals in the family (finite se).
    level : float
    target, method, kind : str
    z_names : tuple of str
    n_labeled : int
        Items labeled for every model (the common labeled set used by every pair).
    n_pool : int
        Items evaluated by every model.
    params : mapping
    notes : tuple of str
    """

    models: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    z: ObjectArray
    estimate: FloatArray
    se: FloatArray
    df: FloatArray
    correction: str
    null_min_p: FloatArray
    n_family: int
    level: float
    target: str
    method: str
    kind: str
    z_names: tuple[str, ...]
    n_labeled: int
    n_pool: int
    params: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("estimate", "se", "df", "null_min_p"):
            arr = np.array(getattr(self, name), dtype=np.float64, copy=True)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        z = np.array(self.z, dtype=object, copy=True)
        z.setflags(write=False)
        object.__setattr__(self, "z", z)
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        check_level(self.level, func="ModelRanking")

    def per_interval_level(self, level: float | None = None) -> float:
        """alpha*: the two-sided level each interval is built at so that all hold jointly.

        'maxt': the (1 - level) quantile of the min-p draws, clamped to [alpha / J, alpha];
        'bonferroni': alpha / J (see :mod:`slicewise.inference.simultaneous`).
        """
        lvl = self.level if level is None else check_level(level, func="per_interval_level")
        draws = self.null_min_p if self.correction == "maxt" else np.zeros(0)
        return per_interval_level(draws, lvl, self.n_family)

    def critical_value(self, level: float | None = None) -> float:
        """Simultaneous critical value of a normal interval, z_{1 - alpha*/2}.

        Intervals with finite :attr:`df` use t_{df, 1 - alpha*/2} (:meth:`critical_values`).
        """
        return float(t_critical(self.per_interval_level(level), np.array([np.inf]))[0])

    def critical_values(self, level: float | None = None) -> FloatArray:
        """Simultaneous critical value of every interval, t_{df, 1 - alpha*/2}, shape (P, G)."""
        return t_critical(self.per_interval_level(level), self.df)

    def ci(self, level: float | None = None) -> ConfidenceInterval:
        """Simultaneous intervals over every pair and grid point, arrays of shape (P, G).

        Never narrower than :meth:`pointwise_ci`: both use Student t with :attr:`df`, at the
        levels alpha* <= alpha.
        """
        half = self.critical_values(level) * self.se
        return within_gap_range(self.estimate, self.estimate - half, self.estimate + half)

    def pointwise_ci(self, level: float | None = None) -> ConfidenceInterval:
        """Pointwise (unadjusted) intervals, shape (P, G): those of :func:`gap` (Student t)."""
        lvl = self.level if level is None else check_level(level, func="pointwise_ci")
        interval = normal_interval(self.estimate, self.se, lvl, self.df)
        return within_gap_range(self.estimate, interval.low, interval.high)

    def _z_frame(self) -> pd.DataFrame:
        if self.z.ndim == 1:
            return pd.DataFrame({"z": self.z})
        return pd.DataFrame({name: self.z[:, d] for d, name in enumerate(self.z_names)})

    def to_frame(self, level: float | None = None) -> pd.DataFrame:
        """Tidy table: one row per (pair, grid point).

        Columns: model_a, model_b, z (or one per profile dimension), estimate, se, df (of the
        Student-t law; inf for a normal interval), lower, upper (simultaneous), pointwise_lower,
        pointwise_upper, verdict ('<winner> > <loser>' with the models' names, or 'unresolved',
        by the simultaneous interval).
        """
        sim = self.ci(level)
        point = self.pointwise_ci(level)
        frames = []
        for p, (a, b) in enumerate(self.pairs):
            frame = self._z_frame()
            frame.insert(0, "model_b", b)
            frame.insert(0, "model_a", a)
            frame["estimate"] = self.estimate[p]
            frame["se"] = self.se[p]
            frame["df"] = clean_df(self.df[p])
            frame["lower"] = sim.low[p]
            frame["upper"] = sim.high[p]
            frame["pointwise_lower"] = point.low[p]
            frame["pointwise_upper"] = point.high[p]
            frame["verdict"] = np.where(
                sim.low[p] > 0,
                f"{a} > {b}",
                np.where(sim.high[p] < 0, f"{b} > {a}", "unresolved"),
            )
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def rank_frame(self, level: float | None = None) -> pd.DataFrame:
        """Ranking view: one row per (grid point, model).

        Columns: z..., model, score (mean estimated gap against the other models), wins and
        losses (models it beats / that beat it by a simultaneous interval), rank_best
        (1 + losses) and rank_worst (n_models - wins). Higher theta is better. Because the
        intervals are simultaneous over every pair and grid point, all the rank ranges hold
        jointly at the interval level.
        """
        sim = self.ci(level)
        m = len(self.models)
        g = self.estimate.shape[1]
        gap_mat = np.zeros((m, m, g))
        win = np.zeros((m, m, g), dtype=bool)
        for p, (a, b) in enumerate(self.pairs):
            i, j = self.models.index(a), self.models.index(b)
            gap_mat[i, j], gap_mat[j, i] = self.estimate[p], -self.estimate[p]
            win[i, j], win[j, i] = sim.low[p] > 0, sim.high[p] < 0
        wins = win.sum(axis=1)
        losses = win.sum(axis=0)
        score = gap_mat.sum(axis=1) / max(m - 1, 1)
        frames = []
        for k, name in enumerate(self.models):
            frame = self._z_frame()
            frame["model"] = name
            frame["score"] = score[k]
            frame["wins"] = wins[k]
            frame["losses"] = losses[k]
            frame["rank_best"] = 1 + losses[k]
            frame["rank_worst"] = m - wins[k]
            frames.append(frame)
        out = pd.concat(frames, ignore_index=True)
        keys = list(self._z_frame().columns)
        order = out.groupby(keys, sort=False).ngroup()
        return (
            out.assign(_g=order)
            .sort_values(["_g", "score"], ascending=[True, False])
            .drop(columns="_g")
            .reset_index(drop=True)
        )


def rank_models(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    label: LabelSpec,
    signals: SignalSpec = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    id: str | None = None,
    kind: Kind | None = None,
    method: InfluenceMethod = "auto",
    paired_signals: PairedSignals = "both",
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    correction: Correction = "maxt",
    n_draws: int = 10_000,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
    target: Target = "pool",
    rng: int | np.random.Generator | None = None,
) -> ModelRanking:
    """Every pairwise gap of several models across the profile, with simultaneous intervals.

    Parameters
    ----------
    table, z, label, signals, model, id, kind
        As in :func:`slicewise.profile_models`.
    models : list of str, optional
        Models to rank (default: all; at least two).
    method : {'auto', 'lace', 'global_cv', 'naive'}, default 'auto'
        A centered method with an explicit coefficient, whose influence values give the joint
        covariance of the pairwise gaps. ``'auto'`` chooses one for each pair as
        :func:`slicewise.profile` does (naive, pooled, local or shrunk-local coefficient) and
        refits it on all labels, or uses ``'lace'`` where it chooses a learned prediction
        (:mod:`slicewise.models.influence`; the notes say which).
    paired_signals : {'both', 'difference'}, default 'both'
        As in :func:`gap`.
    grid, bandwidth, nuisance_scale, ridge
        As in :func:`slicewise.profile`.
    correction : {'maxt', 'bonferroni'}, default 'maxt'
        'maxt': single-step min-P over the whole family (every pair and grid point): each gap's
        t-statistic is Z / sqrt(chi^2_df / df) with Z jointly normal, correlated through the
        item-level influence values (all pairs share one labeled set), and the same Student-t
        degrees of freedom as the pointwise interval of :func:`gap`; interval j uses
        t_{df_j, 1 - alpha*/2} with alpha* the (1 - level) quantile of the smallest p-value
        (``n_draws`` Monte-Carlo draws). With large df it is the normal max-|t| critical value.
        'bonferroni': t_{df_j, 1 - (1 - level) / (2J)} for the J intervals (conservative for any
        dependence, no draws). Both are never narrower than the pointwise intervals.
    n_draws : int, default 10,000
        Monte-Carlo draws of the min-p law.
    objective : {'slice', 'ensemble'}, default 'slice'
        Accepted as in :func:`slicewise.profile`. The ranking compares models slice by slice
        with intervals that hold jointly, so it uses every slice's own (unsmoothed) gaps under
        either objective: the slice promise holds, and the notes say so.
    level : float, default 0.95
        Family-wise level: all intervals cover their gaps jointly with this probability.
    target : {'pool', 'population'}, default 'pool'
    rng : int or numpy Generator, optional
        For the max-|t| draws; None uses a fixed seed, so a repeated call gives the same result.

    Returns
    -------
    ModelRanking

    Notes
    -----
    Each pair (a, b) is the direct paired gap of :func:`gap`, computed on the items evaluated by
    every ranked model and labeled for every ranked model (the common labeled set L; pairs labeled
    for only some models are reported in a note), so all P = m(m - 1)/2 estimates share L and their
    linear representations are jointly normal. With phi^{(p)}_i(z) the scaled influence values of
    :mod:`slicewise.inference.influence`, the joint covariance is

    .. math::

        \\mathrm{Cov}\\{\\hat\\Delta_p(z), \\hat\\Delta_{p'}(z')\\} \\approx
        \\sum_{i \\in L} \\phi^{(p)}_i(z)\\, \\phi^{(p')}_i(z') ,

    (plus the pool-sampling parts for the population target), exact on the diagonal. With R the
    correlation matrix and df_j the degrees of freedom of interval j, the per-interval level
    alpha* solves P(min_j p_j <= alpha*) = 1 - level for p_j = 2 P(t_{df_j} > |T_j|),
    T_j = Z_j / sqrt(W_j / df_j), Z ~ N(0, R), W_j ~ chi^2_{df_j} independent (the conservative
    end between one common and independent variance estimates; see
    :mod:`slicewise.inference.simultaneous`). It is never below Bonferroni's alpha / J and
    accounts for the strong dependence between gap(a, c), gap(a, b) and gap(b, c); since
    alpha* <= alpha, every simultaneous interval contains the pointwise one.

    References
    ----------
    LACE paper, Section 3.4 ("Direct paired model gaps"). Westfall and Young (1993), Section 2.6
    (single-step min-P); Hothorn, Bretz and Westfall (2008), Biometrical Journal 50, 346-363
    (multivariate t critical values).
    """
    func = "rank_models"
    method = check_choice(method, INFLUENCE_METHODS, name="method", func=func)
    paired_signals = check_choice(paired_signals, PAIRED_SIGNALS, name="paired_signals", func=func)
    correction = check_choice(correction, CORRECTIONS, name="correction", func=func)
    n_draws = check_positive_int(n_draws, name="n_draws", func=func, minimum=100)
    level, target = check_common(level, target, func=func)
    generator = check_rng(rng, func=func, reproducible=True)
    options = MethodOptions.from_arguments(
        {"ridge": ridge, "nuisance_scale": nuisance_scale, "objective": objective}, func=func
    )
    panel = make_panel(
        table,
        z=z,
        label=label,
        signals=signals,
        model=model,
        id=id,
        kind=kind,
        models=models,
        func=func,
    )
    names = panel.models
    if len(names) < 2:
        raise ValueError(
            f"The 'models' parameter of {func} must name at least two models to rank. Got "
            f"{list(names)}."
        )
    items = common_items(panel, names)
    if items.size == 0:
        raise ValueError(f"No item is evaluated by every one of the models {list(names)}.")
    keep = labeled_for_all(panel, names, items)
    locality = make_locality(panel.items, grid=grid, bandwidth=bandwidth)
    pairs = tuple(combinations(names, 2))
    kernels: dict[float, Any] | None = None
    fits: list[MethodFit] = []
    influence_parts = []
    chosen: list[str] = []
    notes: list[str] = [
        f"{int(keep.sum())} item(s) labeled for every one of the {len(names)} models form the "
        f"common labeled set of all {len(pairs)} pairs (pool: {items.size} items evaluated by all).",
        "Models are compared slice by slice from every slice's own (unsmoothed) gaps, so each "
        "slice's intervals cover that slice's gaps jointly under either objective "
        f"(objective={options.objective!r} asked).",
    ]
    seen: set[str] = set()
    for a, b in pairs:
        pair = make_pair(
            panel, a, b, paired_signals=paired_signals, func=func, items=items, keep=keep
        )
        if pair.n_only_a + pair.n_only_b + pair.n_dropped:
            notes.append(
                f"pair {a} - {b}: {pair.n_dropped} item(s) labeled for both but not for every "
                f"model, {pair.n_only_a} only for {a!r}, {pair.n_only_b} only for {b!r}: not used."
            )
        ctx = PoolContext.build(pair.table, locality, kernels=kernels)
        if kernels is None:
            scales = {1.0, options.nuisance_scale if method == "lace" else 1.0}
            kernels = {s: ctx.kernel(s) for s in scales}
        labeled = LabeledSet.from_table(pair.table)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SlicewiseWarning)
            resolved = influence_pieces(ctx, labeled, method, options, func=func)
            fit, _, fit_notes = fit_with_warnings(
                ctx, labeled, method, options, target, fit=resolved.fit
            )
        for item in caught:
            text = str(item.message)
            if text not in seen:
                seen.add(text)
                warnings.warn(text, item.category, stacklevel=2)
        notes.extend(f"pair {a} - {b}: {n}" for n in resolved.notes)
        notes.extend(n for n in fit_notes if n not in notes)
        fits.append(fit)
        influence_parts.append(resolved.pieces)
        if method == "auto":
            chosen.append(str(resolved.params["auto_used"]))
    estimate = np.vstack([2.0 * f.estimate - 1.0 for f in fits])
    var = np.vstack([f.var_pool if target == "pool" else f.var_population for f in fits])
    se = 2.0 * np.sqrt(var)
    df = np.vstack([np.full(f.estimate.shape, np.nan) if f.df is None else f.df for f in fits])
    family = np.isfinite(se.ravel()) & (se.ravel() > 0)
    null_min_p = np.zeros(0)
    if correction == "maxt":
        cov = _joint_covariance(influence_parts, fits, target)
        sub = correlation(cov[np.ix_(family, family)])
        null_min_p = min_p_draws(sub, df.ravel()[family], n_draws=n_draws, rng=generator)
    return ModelRanking(
        models=names,
        pairs=pairs,
        z=locality.labels,
        estimate=estimate,
        se=se,
        df=df,
        correction=correction,
        null_min_p=null_min_p,
        n_family=int(family.sum()),
        level=level,
        target=target,
        method=method,
        kind=locality.kind,
        z_names=panel.items.z_names,
        n_labeled=int(keep.sum()),
        n_pool=int(items.size),
        params={
            "paired_signals": paired_signals,
            "ridge": options.ridge,
            "nuisance_scale": options.nuisance_scale,
            "n_draws": n_draws if correction == "maxt" else 0,
            "bandwidth": locality.bandwidth.tolist(),
            **({"auto_used": chosen} if method == "auto" else {}),
        },
        notes=tuple(notes),
    )


def _joint_covariance(pieces: list[Any], fits: list[MethodFit], target: Target) -> FloatArray:
    """Covariance of all (pair, grid point) estimates (D' units), accumulated over item blocks."""
    n = pieces[0].index.size
    g = fits[0].estimate.size
    size = len(pieces) * g
    cov = np.zeros((size, size))
    for start in range(0, n, BLOCK):
        rows = np.arange(start, min(start + BLOCK, n))
        phis, psis = [], []
        for piece, fit in zip(pieces, fits, strict=True):
            phi, psi = scaled_influence(piece, fit, target, rows)
            phis.append(phi)
            if psi is not None:
                psis.append(psi)
        block = np.hstack(phis)
        cov += block.T @ block
        if psis:
            extra = np.hstack(psis)
            cov += extra.T @ extra
    return cov
