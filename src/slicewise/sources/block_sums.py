"""Kernel sums of a record batch sorted by a one-column Z at several block kernels and
globally, with one BLAS product per block for all of them (:func:`block_sums`): the sums of
the continuous kernel-sums passes (:class:`~.kernel_passes.MomentsPass`,
:class:`~.fused_pass.FusedPass`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from .._threads import one_blas_thread
from .._typing import FloatArray
from ..locality.weights import BLOCK_ROWS, BlockKernel
from ..moments.kernel_ops import product_columns
from ..moments.pool import ScaleSums


def block_sums(
    kernels: Sequence[BlockKernel],
    x: FloatArray,
    fill: Callable[[int, int, FloatArray], None],
    width: int,
    *,
    shared: int,
    block_rows: int = BLOCK_ROWS,
) -> tuple[list[tuple[ScaleSums, FloatArray]], tuple[ScaleSums, FloatArray]]:
    """The sums of :func:`~slicewise.moments.pool.scales_sums_with` at the block ``kernels``
    (h first) with the columns V that ``fill`` writes (its first ``shared`` summed at every
    kernel, the others at the first only; ``fill(start, stop, out)`` writes the rows start ..
    stop - 1 of the ``width`` columns into ``out``), and the global sums of [1, x, xx'] and of V's first
    ``shared`` columns, with one product per block for every kernel and the global sums.

    Each block's columns S = [1, x, upper xx', V] are made once, and the kernels' columns
    that count for its rows (:meth:`~slicewise.locality.weights.BlockKernel.columns`) are
    written side by side, after a column of ones, into one column-major buffer B; B' S[:, :s]
    (s the columns summed at every kernel) is then one BLAS product for every kernel and for
    the global sums (the row of the ones), and the first kernel's columns times the rest of V
    a second. Each kernel entry and each column are those of ``scales_sums_with``; only the
    order of summation differs. Returns, per kernel, its :class:`ScaleSums` and the sums of V
    ((G, width) for the first kernel, (G, shared) for the others), and the global ones (one
    row; the mass and the squared mass the number of rows).
    """
    m, p = x.shape
    start_extra = 1 + p + p * (p + 1) // 2
    full, every = start_extra + width, start_extra + shared
    sizes = [kernel.shape[1] for kernel in kernels]
    totals = [np.zeros((g, full if i == 0 else every)) for i, g in enumerate(sizes)]
    sq_mass = [np.zeros(g) for g in sizes]
    overall = np.zeros(every)
    rows_max = max(1, min(block_rows, m))
    buffer = _scratch("columns", (rows_max, full))
    buffer[:, 0] = 1.0
    kernel_buffer = _scratch("kernels", (rows_max, 1 + sum(sizes)))
    kernel_buffer[:, 0] = 1.0
    with one_blas_thread():
        for start in range(0, m, rows_max):
            stop = min(start + rows_max, m)
            rows = stop - start
            stacked = buffer[:rows]
            stacked[:, 1 : 1 + p] = x[start:stop]
            product_columns(stacked[:, 1 : 1 + p], out=stacked[:, 1 + p : start_extra])
            fill(start, stop, stacked[:, start_extra:])
            spans = []
            column = 1
            for kernel in kernels:
                lo, hi = kernel.columns(start, stop)
                hi = max(hi, lo)
                if hi > lo:
                    out = kernel_buffer[:rows, column : column + hi - lo]
                    kernel.block_columns(start, stop, lo, hi, out=out)
                spans.append((column, lo, hi))
                column += hi - lo
            block = kernel_buffer[:rows, :column]
            squares = np.einsum("ij,ij->j", block[:, 1:], block[:, 1:])
            product = block.T @ stacked[:, :every]
            overall += product[0]
            for i, (first, lo, hi) in enumerate(spans):
                if hi > lo:
                    totals[i][lo:hi, :every] += product[first : first + hi - lo]
                    sq_mass[i][lo:hi] += squares[first - 1 : first - 1 + hi - lo]
            first, lo, hi = spans[0]
            if hi > lo and full > every:
                totals[0][lo:hi, every:] += block[:, first : first + hi - lo].T @ stacked[:, every:]
    found = []
    for total, sq in zip(totals, sq_mass, strict=True):
        sums = ScaleSums(
            mass=total[:, 0],
            sq_mass=sq,
            first=total[:, 1 : 1 + p],
            second=total[:, 1 + p : start_extra],
        )
        found.append((sums, total[:, start_extra:]))
    rows_total = np.full(1, float(m))
    everywhere = ScaleSums(
        mass=rows_total,
        sq_mass=rows_total.copy(),
        first=overall[None, 1 : 1 + p],
        second=overall[None, 1 + p : start_extra],
    )
    return found, (everywhere, overall[None, start_extra:])


#: Each thread's scratch arrays of :func:`block_sums`, freed when the thread ends (the
#: threads of :func:`~.duckdb.map_batches` end with their pass).
_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple[int, int]) -> FloatArray:
    """A column-major float64 array of ``shape`` kept for this thread under ``name`` (its
    values are whatever the last user left). A record batch's two block buffers (5 MB each)
    made afresh at every batch were memory the allocator mapped and faulted in page by page
    in the threads of a pass: at 1e7 rows (continuous ``auto``, four runs alternated) the
    fused pass took 5.2-5.5 processor s with them kept against 6.0-6.8."""
    arrays: dict[str, FloatArray] = _SCRATCH.__dict__.setdefault("arrays", {})
    array = arrays.get(name)
    if array is None or array.shape != shape:
        array = arrays[name] = np.empty(shape, order="F")
    return array
