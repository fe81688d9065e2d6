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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._typing import FloatArray, Kind, ObjectArray
from ..locality.weights import (
    DEFAULT_GRID_SIZE,
    DEFAULT_GRID_SIZE_MULTI,
    Locality,
    _check_bandwidth,
    _grid_values,
    _lookup_levels,
)
from ..methods.base import PoolContext
from ..moments.pool import ScaleSums, moments_from_sums
from ..moments.sums import PoolMoments

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
    sums : mapping of float to ScaleSums
        Kernel sums of the standardised signals at each scale (multiple of h) that was scanned.
    """

    pool_size: int = 0
    sums: Mapping[float, ScaleSums] = field(default_factory=dict)

    @property
    def n_pool(self) -> int:
        """M."""
        return self.pool_size

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
        if name not in FEATURE_SETS or scale not in self.sums:
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
            self.sums, columns, p=p, scale_b=scale, kernel=kernel, kernel_b=kernel_b
        )
        self._cache[key] = moments
        return moments


def needed_scales(method: str, nuisance_scale: float) -> tuple[float, ...]:
    """Kernel scales (multiples of h) whose pool sums ``method`` reads."""
    scales = {1.0}
    if method in ("lace", "per_signal_cv"):
        scales.add(float(nuisance_scale))
    if method == "global_cv":
        scales.add(math.inf)
    return tuple(sorted(scales))
