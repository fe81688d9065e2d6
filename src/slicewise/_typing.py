"""Array aliases shared by every module (one place, so signatures read the same everywhere)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

if TYPE_CHECKING:
    from .locality.weights import BlockKernel

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.intp]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
ObjectArray: TypeAlias = npt.NDArray[np.object_]

#: An (items x grid points) matrix of unnormalised local weights: dense for Gaussian kernels,
#: sparse (CSR) for compact-support rules (categorical indicators, triangular ordinal weights).
KernelMatrix: TypeAlias = FloatArray | sp.csr_array
#: A pool-side kernel: a stored matrix, or a dense Gaussian kernel evaluated block by block
#: (:class:`~slicewise.locality.weights.BlockKernel`) when storing it would cost M x G floats.
PoolKernel: TypeAlias = "KernelMatrix | BlockKernel"

Kind: TypeAlias = Literal["continuous", "ordinal", "categorical"]
Target: TypeAlias = Literal["pool", "population"]
#: What smoothing across slices promises (:mod:`slicewise.smoothing.objective`).
Objective: TypeAlias = Literal["slice", "ensemble"]

KINDS: tuple[Kind, ...] = ("continuous", "ordinal", "categorical")
TARGETS: tuple[Target, ...] = ("pool", "population")
#: The objectives, the default first.
OBJECTIVES: tuple[Objective, ...] = ("slice", "ensemble")
