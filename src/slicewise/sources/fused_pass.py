"""One pass over a pool with a continuous profile for both the signals' kernel sums and the
learned control variate's: the fold models are fitted on the labeled items alone (with the pool
standardisation of the signals and of Z from the statistics passes), so they can predict every
record batch in the pass that sums its signals, and the batch is read, sorted by Z and its kernel
blocks made once instead of twice.

:class:`FusedPass` gives the state of :class:`~.kernel_passes.MomentsPass` and, beside it, per
scale, the sums [w, w V] of the columns V of a :class:`~.kernel_passes.LearnedColumns` (without
the signals: their sums are the moments pass's own). At 1e7 rows (20 grid points, 6 signals,
five fold models) the separate learned pass was a third of a continuous ``auto``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import FloatArray
from ..moments.pool import ScaleSums, column_products
from .block_sums import block_sums
from .kernel_passes import LearnedColumns, MomentsPass, block_kernels

#: The state of a :class:`FusedPass`: the moments pass's sums per scale, and per scale the
#: (G, 1 + d) sums [w, w V] of the learned columns (one row for ``inf``).
FusedState = tuple[dict[float, ScaleSums], dict[float, FloatArray]]


@dataclass(frozen=True, eq=False)
class FusedPass:
    """Kernel sums of the standardised signals at ``reader.scales`` and of the learned columns
    of ``compute`` (fold predictions P, their average a, a^2 and a x) at the same scales.

    Every column of V is summed at h; at the other scales only [a, a^2, a x] (the fold
    predictions' own sums are read at h alone), their P columns left at zero. The kernel entries
    and each column are those of the two separate passes; only the order of summation differs.
    """

    reader: MomentsPass
    compute: LearnedColumns

    @property
    def columns(self) -> tuple[str, ...]:
        return self.reader.columns

    def partial(self, batch: Any) -> FusedState:
        reader = self.reader
        locality = reader.locality
        z, x = reader.sorted_rows(batch)
        folds = len(self.compute.models)
        shared = 2 + x.shape[1]
        width = shared + folds
        finite = sorted((s for s in reader.scales if not math.isinf(s)), key=lambda s: s != 1.0)
        kernels = block_kernels(locality, z, finite)
        columns = _BlockColumns(self.compute, z, x)
        found, everywhere = block_sums(kernels, x, columns, width, shared=shared)
        sums: dict[float, ScaleSums] = {}
        extra: dict[float, FloatArray] = {}
        for scale, (scale_sums, block) in zip(finite, found, strict=True):
            sums[scale] = scale_sums
            extra[scale] = _learned_block(scale_sums.mass, block, folds, width)
        if any(math.isinf(s) for s in reader.scales):
            scale_sums, block = everywhere
            sums[math.inf] = scale_sums
            extra[math.inf] = _learned_block(scale_sums.mass, block, folds, width)
        return sums, extra

    def merge(self, a: FusedState, b: FusedState) -> FusedState:
        return (
            {scale: a[0][scale] + b[0][scale] for scale in a[0]},
            {scale: a[1][scale] + b[1][scale] for scale in a[1]},
        )


class _BlockColumns:
    """Writes the learned columns V = [a, a^2, a x, P] of the sorted rows start .. stop - 1
    into a block's column-major part of the buffer that :func:`block_sums` multiplies (the
    columns of :class:`~.kernel_passes.LearnedColumns` with the same arithmetic, the ones
    summed at every scale first), with no copy."""

    def __init__(self, columns: LearnedColumns, z: FloatArray, x: FloatArray) -> None:
        self.columns, self.z, self.x = columns, z, x

    def __call__(self, start: int, stop: int, out: FloatArray) -> None:
        from ..estimators.learner_design import predict_models

        c, k = self.columns, self.x.shape[1]
        xs = self.x[start:stop]
        predictions = predict_models(  # straight into their columns, whose transpose is C-ordered
            c.models, self.z[start:stop], xs, c.kind, c.learner, c.basis, out=out[:, 2 + k :].T
        )
        column_products(xs, predictions.mean(axis=0), 0, stop - start, out=out[:, : 2 + k])


def _learned_block(mass: FloatArray, block: FloatArray, folds: int, width: int) -> FloatArray:
    """[w, w P, w a, w a^2, w a x] in the layout of a :class:`~.kernel_passes.ColumnSumsPass`
    of :class:`~.kernel_passes.LearnedColumns`, from the sums of the reordered V (shared
    columns first; the fold predictions only when summed at this scale, zeros otherwise)."""
    out = np.zeros((mass.size, 1 + width))
    out[:, 0] = mass
    shared = width - folds
    out[:, 1 + folds :] = block[:, :shared]
    if block.shape[1] == width:
        out[:, 1 : 1 + folds] = block[:, shared:]
    return out
