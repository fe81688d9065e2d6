"""The slices where a model is worst, with family-wise confidence (:meth:`ProfileResult.worst`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ._typing import BoolArray, FloatArray, ObjectArray
from ._validation import check_level, check_positive_int
from .inference.worst import could_be_worst, sidak_level

if TYPE_CHECKING:
    from .results import ProfileResult


@dataclass(frozen=True, eq=False)
class WorstSlices:
    """Family-wise intervals over every slice of a profile, and the slices that could be the
    worst (the lowest) at that level.

    Attributes
    ----------
    z : ndarray of object, shape (G,)
        The slices (grid points) as the profile names them.
    estimate : ndarray of shape (G,)
    lower, upper : ndarray of shape (G,)
        Family-wise intervals: all G hold jointly with probability at least ``level``
        (:mod:`slicewise.inference.worst`); NaN where the slice has no interval.
    pointwise_lower, pointwise_upper : ndarray of shape (G,)
        The profile's own intervals at ``level``.
    candidate : ndarray of bool, shape (G,)
        Slices that could be among the ``k`` worst.
    level, per_interval_level : float
        The family-wise level and each interval's Šidák level 1 - level^(1/J).
    n_family : int
        J, the slices with an interval.
    k : int
    method : str
    n_labeled_eff : ndarray of shape (G,)
    notes : tuple of str
    """

    z: ObjectArray
    estimate: FloatArray
    lower: FloatArray
    upper: FloatArray
    pointwise_lower: FloatArray
    pointwise_upper: FloatArray
    candidate: BoolArray
    level: float
    per_interval_level: float
    n_family: int
    k: int
    method: str
    n_labeled_eff: FloatArray
    notes: tuple[str, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per slice, lowest estimate first: z, estimate, lower, upper (family-wise),
        pointwise_lower, pointwise_upper, n_labeled_eff, could_be_worst."""
        frame = pd.DataFrame(
            {
                "z": self.z,
                "estimate": self.estimate,
                "lower": self.lower,
                "upper": self.upper,
                "pointwise_lower": self.pointwise_lower,
                "pointwise_upper": self.pointwise_upper,
                "n_labeled_eff": self.n_labeled_eff,
                "could_be_worst": self.candidate,
            }
        )
        order = np.argsort(
            np.where(np.isfinite(self.estimate), self.estimate, np.inf), kind="stable"
        )
        return frame.iloc[order].reset_index(drop=True)

    def summary(self) -> str:
        """The candidates, the family-wise table and the notes, as text."""
        which = "the worst slice" if self.k == 1 else f"among the {self.k} worst slices"
        names = "; ".join(repr(str(z)) for z in self.z[self.candidate])
        lines = [
            f"Slices where the model is worst, with {self.level:.0%} family-wise confidence "
            f"({self.method}; Šidák over {self.n_family} slices, each interval at level "
            f"{1 - self.per_interval_level:.4f})",
            f"could be {which}: {names}",
            self.to_frame().to_string(index=False, float_format=lambda v: f"{v:.3f}"),
        ]
        lines.extend(f"note: {note}" for note in self.notes)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


def worst_slices(
    result: ProfileResult, *, level: float = 0.95, k: int | None = None
) -> WorstSlices:
    """:meth:`slicewise.ProfileResult.worst` (see there)."""
    func = "ProfileResult.worst"
    level = check_level(level, func=func)
    size = result.size
    k = 1 if k is None else check_positive_int(k, name="k", func=func)
    if k > size:
        raise ValueError(
            f"The 'k' parameter of {func} must be at most the number of slices ({size}). Got "
            f"{k} instead."
        )
    if result.z.ndim != 1:
        raise ValueError(
            f"{func} compares the slices of a one-dimensional profile; this profile has "
            f"{result.z.shape[1]} dimensions ({', '.join(result.z_names)})."
        )
    point = result.ci(level)
    defined = np.isfinite(point.low) & np.isfinite(point.high)
    n_family = int(defined.sum())
    each = sidak_level(level, n_family)
    family = result.ci(1.0 - each)
    lower = np.where(defined, family.low, np.nan)
    upper = np.where(defined, family.high, np.nan)
    notes = []
    if not defined.all():
        notes.append(
            f"{int((~defined).sum())} slice(s) have no interval (too few labels); they could be "
            f"the worst and are kept as candidates: {', '.join(map(str, result.z[~defined]))}."
        )
    if result.kind == "continuous":
        notes.append(
            "The grid points of a continuous profile share labels (overlapping kernel "
            "neighbourhoods); Šidák's intervals still hold jointly, but are conservative there."
        )
    return WorstSlices(
        z=np.asarray(result.z, dtype=object),
        estimate=np.asarray(result.estimate),
        lower=lower,
        upper=upper,
        pointwise_lower=np.asarray(point.low),
        pointwise_upper=np.asarray(point.high),
        candidate=could_be_worst(lower, upper, k),
        level=level,
        per_interval_level=each,
        n_family=n_family,
        k=k,
        method=result.method,
        n_labeled_eff=np.asarray(result.n_labeled_eff),
        notes=tuple(notes),
    )
