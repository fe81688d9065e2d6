"""The result of :func:`slicewise.plan`: labels needed per grid point, with table and plot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import _display as display
from .._display import Displayed
from .._typing import FloatArray, IntArray

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass(frozen=True, eq=False, repr=False)
class PlanResult(Displayed):
    """Labels needed per grid point to reach a target half-width.

    Attributes
    ----------
    z : ndarray of shape (G,) or (G, q)
        Grid points (levels for discrete profiles).
    n_labeled : ndarray of shape (G,)
        Labeled effective sample size now (0 before any label).
    halfwidth : ndarray of shape (G,)
        Half-width of the current interval (NaN before any label or where it has no se).
    n_more : ndarray of int, shape (G,)
        Additional effective labels in each neighbourhood to reach the target (for disjoint
        slices: labels in that slice). Before any label: under the pessimistic end of ``r2``.
    n_more_optimistic : ndarray of int, shape (G,), optional
        The same under the optimistic end of ``r2`` (budgeting mode only).
    predicted : ndarray of shape (G,)
        Predicted half-width after the n_more labels (above the target only where the slice
        would have to be labeled completely).
    sigma : ndarray of shape (G,)
        Per-label residual standard deviation of the method.
    n_pool : ndarray of shape (G,)
        Pool effective size N(z).
    target, level : float
    method : str
    total_more : int
        Additional labels under the recommended allocation (each slice its own share).
    total_uniform : int
        Additional labels if they were spread uniformly over the unlabeled pool until the worst
        slice reaches the target.
    item_rate : ndarray of shape (M,)
        The recommended labeling share of every unlabeled item, in the rows of the input table
        (0 on labeled rows).
    df : ndarray of shape (G,), optional
        Degrees of freedom of the current interval (None before any label); after Delta more
        effective labels the plan expects :func:`~slicewise.planning.plan.planned_df`.
    notes : tuple of str
    widen : ndarray of shape (G,), optional
        Each slice's shift toward the smoothing model in its standard errors, which the
        planned half-width (q + widen) se carries (:func:`~slicewise.planning.plan.shift_ratio`).
    """

    z: Any
    n_labeled: FloatArray
    halfwidth: FloatArray
    n_more: IntArray
    predicted: FloatArray
    sigma: FloatArray
    n_pool: FloatArray
    target: float
    level: float
    method: str
    total_more: int
    total_uniform: int
    item_rate: FloatArray = field(repr=False)
    n_more_optimistic: IntArray | None = None
    z_names: tuple[str, ...] = ("z",)
    df: FloatArray | None = None
    notes: tuple[str, ...] = ()
    widen: FloatArray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for name in ("n_labeled", "halfwidth", "n_more", "predicted", "sigma", "n_pool"):
            value = np.array(getattr(self, name))
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def size(self) -> int:
        """G, the number of grid points."""
        return int(self.n_more.shape[0])

    def to_frame(self) -> pd.DataFrame:
        """One row per grid point: z, n_labeled, halfwidth, n_more (and n_more_optimistic,
        predicted, sigma)."""
        z = np.asarray(self.z)
        if z.ndim == 1:
            frame = pd.DataFrame({"z": z})
        else:
            frame = pd.DataFrame({name: z[:, d] for d, name in enumerate(self.z_names)})
        frame["n_labeled"] = self.n_labeled
        frame["halfwidth"] = self.halfwidth
        frame["n_more"] = self.n_more
        if self.n_more_optimistic is not None:
            frame["n_more_optimistic"] = self.n_more_optimistic
        frame["predicted"] = self.predicted
        frame["sigma"] = self.sigma
        return frame

    def plot(self, ax: Axes | None = None) -> Axes:
        """Current and predicted half-widths against the target, with n_more per grid point."""
        out: Axes = display.plot(self, ax=ax)
        return out

    def __str__(self) -> str:
        lines = [
            f"plan: {self.method}, target half-width {self.target:g} at level {self.level:g}",
            self.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4g}"),
            f"total additional labels: {self.total_more} (recommended allocation), "
            f"{self.total_uniform} (uniform)",
        ]
        return "\n".join([*lines, *(f"note: {n}" for n in self.notes)])
