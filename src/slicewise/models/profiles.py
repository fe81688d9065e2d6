"""Many models at once: every model's profile on one grid, as one result with a model dimension."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import _display as display
from .._typing import FloatArray, KernelMatrix, Kind, ObjectArray, Target
from .._validation import check_choice, check_common, check_level, check_rng, signal_index
from ..data.panel import LabelSpec, ModelPanel, SignalSpec, make_panel
from ..data.table import MissingRule
from ..locality.weights import Locality, make_locality
from ..methods.base import LabeledSet, PoolContext
from ..methods.options import DEFAULTS, MethodOptions
from ..methods.registry import METHODS
from ..methods.run import Problem, pool_notes, run
from ..moments.kernel_ops import take_rows
from ..results import ConfidenceInterval, ProfileResult, Report

if TYPE_CHECKING:
    from matplotlib.axes import Axes

FUNC = "profile_models"


def _stack(profiles: Sequence[ProfileResult], name: str) -> FloatArray:
    out = np.vstack([np.asarray(getattr(p, name), dtype=np.float64) for p in profiles])
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False, repr=False)
class ModelProfiles(Report):
    """Profiles of several models on one grid (same locality, bandwidth and options).

    Attributes
    ----------
    models : tuple of str
    profiles : tuple of ProfileResult
        One per model, in the order of :attr:`models`; ``result[model]`` returns one.

    Notes
    -----
    Array properties (:attr:`estimate`, :attr:`se`, ...) stack the per-model arrays into shape
    (n_models, G).
    """

    models: tuple[str, ...]
    profiles: tuple[ProfileResult, ...]

    def __post_init__(self) -> None:
        if len(self.models) != len(self.profiles) or not self.models:
            raise ValueError(
                f"ModelProfiles needs one profile per model; got {len(self.models)} models and "
                f"{len(self.profiles)} profiles."
            )
        sizes = {p.size for p in self.profiles}
        if len(sizes) != 1:
            raise ValueError(f"Every profile must share one grid; got sizes {sorted(sizes)}.")

    def __getitem__(self, model: str) -> ProfileResult:
        if model not in self.models:
            raise KeyError(f"No model {model!r} in this result; models: {list(self.models)}.")
        return self.profiles[self.models.index(model)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.models)

    def __len__(self) -> int:
        return len(self.models)

    @property
    def z(self) -> ObjectArray:
        """Grid points as the user sees them, shape (G,) or (G, q)."""
        return self.profiles[0].z

    @property
    def z_names(self) -> tuple[str, ...]:
        """Profile column names."""
        return self.profiles[0].z_names

    @property
    def kind(self) -> str:
        """Locality rule."""
        return self.profiles[0].kind

    @property
    def method(self) -> str:
        """Profile method."""
        return self.profiles[0].method

    @property
    def target(self) -> str:
        """'pool' or 'population'."""
        return self.profiles[0].target

    @property
    def level(self) -> float:
        """Default interval level."""
        return self.profiles[0].level

    @property
    def estimate(self) -> FloatArray:
        """Estimates, shape (n_models, G)."""
        return _stack(self.profiles, "estimate")

    @property
    def se(self) -> FloatArray:
        """Standard errors, shape (n_models, G)."""
        return _stack(self.profiles, "se")

    @property
    def naive_estimate(self) -> FloatArray:
        """Labels-only local means, shape (n_models, G)."""
        return _stack(self.profiles, "naive_estimate")

    @property
    def naive_se(self) -> FloatArray:
        """Standard errors of the labels-only local means, shape (n_models, G)."""
        return _stack(self.profiles, "naive_se")

    @property
    def n_labeled_eff(self) -> FloatArray:
        """Labeled effective sample sizes, shape (n_models, G)."""
        return _stack(self.profiles, "n_labeled_eff")

    @property
    def r2(self) -> FloatArray:
        """Estimated local R^2, shape (n_models, G)."""
        return _stack(self.profiles, "r2")

    @property
    def gain(self) -> FloatArray:
        """Predicted gain over the labels-only smoother, shape (n_models, G)."""
        return _stack(self.profiles, "gain")

    @property
    def df(self) -> FloatArray:
        """Interval degrees of freedom (NaN: normal), shape (n_models, G)."""
        return _stack(self.profiles, "df")

    def ci(self, level: float | None = None) -> ConfidenceInterval:
        """Pointwise intervals (each model's :meth:`ProfileResult.ci`), shape (n_models, G)."""
        lvl = self.level if level is None else check_level(level, func="ModelProfiles.ci")
        parts = [prof.ci(lvl) for prof in self.profiles]
        return ConfidenceInterval(
            low=np.vstack([p.low for p in parts]), high=np.vstack([p.high for p in parts])
        )

    def to_frame(self, level: float | None = None) -> pd.DataFrame:
        """Tidy table: one row per (model, grid point).

        Columns: model, then the columns of :meth:`ProfileResult.to_frame` (z, estimate, se,
        lower, upper, naive_estimate, naive_se, n_labeled_eff, n_pool_eff, labeled_mass, r2, gain,
        n_equivalent, borrowed).
        """
        frames = []
        for name, prof in zip(self.models, self.profiles, strict=True):
            frame = prof.to_frame(level)
            frame.insert(0, "model", name)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: one :meth:`ProfileResult.to_dict` per model."""
        return {name: p.to_dict() for name, p in zip(self.models, self.profiles, strict=True)}

    def plot(
        self,
        ax: Axes | None = None,
        *,
        level: float | None = None,
        models: Sequence[str] | None = None,
    ) -> Axes:
        """One line (continuous Z) or one set of error bars (discrete Z) per model, with bands."""
        out: Axes = display.plot(self, ax=ax, level=level, models=models)
        return out


def _share_kernels(
    panel: ModelPanel, locality: Locality, nuisance_scale: float
) -> Callable[[int], dict[float, KernelMatrix]]:
    """Kernel matrices computed once on the item level, sliced to each model's rows."""
    item_ctx = PoolContext.build(panel.items, locality)
    scales = [1.0] if nuisance_scale == 1.0 else [1.0, nuisance_scale]

    def kernels(position: int) -> dict[float, KernelMatrix]:
        rows = panel.rows[position]
        full = rows.size == panel.items.n_pool and bool(np.all(rows == np.arange(rows.size)))
        return {
            s: item_ctx.kernel(s) if full else take_rows(item_ctx.kernel(s), rows) for s in scales
        }

    return kernels


def _model_contexts(
    panel: ModelPanel,
    locality: Locality,
    *,
    nuisance_scale: float,
    primary: Mapping[str, str | None],
) -> list[PoolContext]:
    """One PoolContext per distinct (rows, signals, primary); models with equal ones share it."""
    kernels = _share_kernels(panel, locality, nuisance_scale)
    contexts: list[PoolContext] = []
    for k, (name, table) in enumerate(zip(panel.models, panel.tables, strict=True)):
        reuse = None
        for j in range(k):
            other = panel.tables[j]
            if (
                primary[panel.models[j]] == primary[name]
                and other.signal_names == table.signal_names
                and np.array_equal(panel.rows[j], panel.rows[k])
                and np.array_equal(other.signals, table.signals)
            ):
                reuse = contexts[j]
                break
        if reuse is not None:
            contexts.append(reuse)
            continue
        index = signal_index(primary[name], table.signal_names, func=FUNC, owner=name)
        contexts.append(PoolContext.build(table, locality, primary=index, kernels=kernels(k)))
    return contexts


def profile_models(
    table: pd.DataFrame | str | os.PathLike[str],
    *,
    z: str | Sequence[str],
    label: LabelSpec,
    signals: SignalSpec = None,
    model: str | None = None,
    models: Sequence[str] | None = None,
    kind: Kind | None = None,
    method: str = "auto",
    grid: int | Sequence[Any] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | None = None,
    nuisance_scale: float = DEFAULTS.nuisance_scale,
    ridge: float = DEFAULTS.ridge,
    primary: str | Mapping[str, str] | None = None,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = DEFAULTS.C,
    strata_count: int = DEFAULTS.strata_count,
    ppci_multiplier: float = DEFAULTS.ppci_multiplier,
    ppi_bandwidth_scale: float = DEFAULTS.ppi_bandwidth_scale,
    shrinkage: float | None = None,
    learner: str = DEFAULTS.learner,
    folds: int = DEFAULTS.folds,
    smooth: str = DEFAULTS.smooth,
    objective: str = DEFAULTS.objective,
    level: float = 0.95,
    target: Target = "pool",
    id: str | None = None,
    missing: MissingRule = "impute",
    rng: int | np.random.Generator | None = None,
) -> ModelProfiles:
    """Profile every model of a long or wide table on one grid.

    Parameters
    ----------
    table : DataFrame or path
        Long: one row per (model, item) with a ``model`` column. Wide: one row per item with a
        label column per model.
    z : str or list of str
        Profile column(s), an item property.
    label : str, list of str or mapping
        Long: the gold-label column. Wide: label columns, as a list (model name = column name) or
        a mapping model -> column.
    signals : str, list of str or mapping, optional
        Per-item signals (the same columns for every model; in a long table each row's own values
        are used) or a mapping model -> list of that model's columns (per model-item signals).
    model : str, optional
        Model column of a long table (omit for a wide table).
    models : list of str, optional
        Models to profile, in this order (default: all, in order of appearance).
    kind, method, grid, bandwidth, nuisance_scale, ridge, coef, C, strata_count, ppci_multiplier,
    ppi_bandwidth_scale, shrinkage, learner, folds, smooth, objective, level, target
        As in :func:`slicewise.profile`, applied to every model.
    primary : str or mapping, optional
        Primary judge signal: a column name, or a mapping model -> column.
    id : str, optional
        Item id column (matches the items of a long table across models).
    missing : {'impute', 'error'}, default 'impute'
        Missing signal values, per model: imputed with the model's pool mean plus a
        missingness-indicator signal (said in that model's notes), or rejected (see
        :func:`slicewise.profile`).
    rng : int or numpy Generator, optional
        Normalised once and split with ``spawn``: one independent stream per model. None uses a
        fixed seed, as :func:`slicewise.profile` does, so a repeated call gives the same result.

    Returns
    -------
    ModelProfiles

    Notes
    -----
    The grid and bandwidth are built once from the item-level Z (the union of the models' items),
    so every model is profiled on the same points; kernel matrices are computed once on the items
    and sliced to each model's rows, and models that share their items and signal values share one
    :class:`~slicewise.methods.base.PoolContext` (pool moments included). For model m the
    estimate is the one of :func:`slicewise.profile` on that model's rows,

    .. math::

        \\hat\\theta_m(z) = \\bar Y_{m,L}(z)
            - \\hat\\beta_m(z)^\\top\\{\\bar S_{m,L}(z) - \\bar S_{m,T}(z)\\},

    with its own labeled set, signals and coefficient (LACE paper, Section 3.3).

    References
    ----------
    LACE paper (``papers/lace-conditional-evaluation.txt``), Sections 3.1-3.3.

    Examples
    --------
    >>> import numpy as np, pandas as pd, slicewise as sw
    >>> rng = np.random.default_rng(0)
    >>> g = rng.integers(0, 3, 600)
    >>> ya = (rng.random(600) < 0.5 + 0.1 * g).astype(float)
    >>> yb = (rng.random(600) < 0.6 - 0.1 * g).astype(float)
    >>> frame = pd.DataFrame({"g": g, "a": ya, "b": yb, "sa": ya + rng.normal(0, 1, 600),
    ...                       "sb": yb + rng.normal(0, 1, 600)})
    >>> frame.loc[100:, ["a", "b"]] = np.nan
    >>> res = sw.profile_models(frame, z="g", label=["a", "b"],
    ...                         signals={"a": ["sa"], "b": ["sb"]}, kind="ordinal")
    >>> res.estimate.shape, list(res.to_frame().columns[:3])
    ((2, 3), ['model', 'z', 'estimate'])
    """
    method = check_choice(method, tuple(METHODS), name="method", func=FUNC)
    level, target = check_common(level, target, func=FUNC)
    generator = check_rng(rng, func=FUNC, reproducible=True)
    panel = make_panel(
        table,
        z=z,
        label=label,
        signals=signals,
        model=model,
        id=id,
        kind=kind,
        models=models,
        missing=missing,
        func=FUNC,
    )
    locality = make_locality(panel.items, grid=grid, bandwidth=bandwidth)
    streams = generator.spawn(len(panel.models))
    base = MethodOptions.from_arguments(locals(), func=FUNC)
    if isinstance(primary, Mapping):
        unknown = [k for k in primary if k not in panel.models]
        if unknown:
            raise ValueError(
                f"The 'primary' mapping of {FUNC} names model(s) {unknown} that are not "
                f"profiled; models: {list(panel.models)}."
            )
        primary_of: dict[str, str | None] = {m: primary.get(m) for m in panel.models}
    else:
        primary_of = {m: primary for m in panel.models}
    contexts = _model_contexts(
        panel, locality, nuisance_scale=base.nuisance_scale, primary=primary_of
    )
    profiles = []
    for k, (name, ctx, tab) in enumerate(zip(panel.models, contexts, panel.tables, strict=True)):
        options = _with_rng(base, streams[k])
        labeled = LabeledSet.from_table(tab)
        prefix = f"model {name!r}: "
        notes = pool_notes(tab, labeled, method, prefix=prefix, stacklevel=3)
        problem = Problem(ctx, labeled, notes=tuple(notes), params={"model": name}, prefix=prefix)
        profiles.append(run(problem, method, options, level=level, target=target))
    return ModelProfiles(models=panel.models, profiles=tuple(profiles))


def _with_rng(options: MethodOptions, rng: np.random.Generator) -> MethodOptions:
    return replace(options, rng=rng)
