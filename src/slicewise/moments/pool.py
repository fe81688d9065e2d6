"""Pool-side kernel sums: one pass over the items per kernel, and the moments made from them.

Everything a profile needs from the pool T at one kernel scale is four sums per grid point,

.. math::

    \\sum_T k_i(z),\\quad \\sum_T k_i(z)^2,\\quad \\sum_T k_i(z) X_i,\\quad
    \\sum_T k_i(z) X_i X_i^\\top ,

(:class:`ScaleSums`). :func:`scale_sums` computes them in one pass over blocks of items: each
block's kernel rows times the block's columns [1, X, upper triangle of XX'], one BLAS product,
so neither the (M x G) kernel (:class:`~slicewise.locality.weights.BlockKernel`) nor the
(M x p(p+1)/2) product columns are ever stored. :func:`moments_from_sums` turns the sums at the
profile bandwidth h and the nuisance bandwidth b into :class:`~slicewise.moments.sums.PoolMoments`;
the out-of-core sources (:mod:`slicewise.sources`) reduce the same sums over record batches and
use the same arithmetic. :func:`scales_sums_with` makes the sums at several kernels in one pass
(``auto``'s scales), with the block's columns made once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .._threads import one_blas_thread
from .._typing import FloatArray, PoolKernel
from ..locality.weights import BLOCK_ROWS, BlockKernel
from .kernel_ops import (
    CHUNK,
    column_sums,
    is_global,
    iter_blocks,
    product_columns,
    safe_divide,
    square_column_sums,
    weighted_products,
    weighted_sums,
)
from .sums import PoolMoments, symmetric


@dataclass(frozen=True)
class ScaleSums:
    """Unnormalised kernel sums at one scale: w, w^2 (G,), wX (G, p) and wXX' (G, p(p+1)/2,
    upper triangle, row-major). Sums over disjoint parts of the pool add up (``+``)."""

    mass: FloatArray
    sq_mass: FloatArray
    first: FloatArray
    second: FloatArray

    def __add__(self, other: ScaleSums) -> ScaleSums:
        return ScaleSums(
            self.mass + other.mass,
            self.sq_mass + other.sq_mass,
            self.first + other.first,
            self.second + other.second,
        )

    def broadcast(self, size: int) -> ScaleSums:
        """Global sums (one column) as ``size`` identical grid columns, like a kernel of ones."""
        if self.mass.size == size:
            return self
        return ScaleSums(
            mass=np.repeat(self.mass, size),
            sq_mass=np.repeat(self.sq_mass, size),
            first=np.repeat(self.first, size, axis=0),
            second=np.repeat(self.second, size, axis=0),
        )


def scale_sums(kernel: PoolKernel, x: FloatArray, *, products: bool = True) -> ScaleSums:
    """The kernel sums of the features ``x`` (shape (M, p)) in one pass over the items.

    ``products=False`` skips the second moments (``second`` is then (G, 0)); with no features
    only the masses are computed, so a method without signals pays for the kernel alone.
    """
    return scale_sums_with(kernel, x, products=products)[0]


def scale_sums_with(
    kernel: PoolKernel,
    x: FloatArray,
    columns: Callable[[int, int], FloatArray] | None = None,
    width: int = 0,
    *,
    products: bool = True,
) -> tuple[ScaleSums, FloatArray]:
    """:func:`scale_sums` of ``x`` and, in the same pass, ``kernel.T @ V`` for the (M, width)
    matrix V whose rows start .. stop - 1 are ``columns(start, stop)`` (:func:`block_sums`).

    A block kernel is evaluated once for both, and one BLAS product per block gives every sum:
    a method that needs sums of its own columns (a learned prediction) beside those of the
    signals pays for one pass instead of two. Returns the sums and the (G, width) extra sums.
    """
    g = kernel.shape[1]
    extra = width if columns is not None else 0
    if not isinstance(kernel, np.ndarray | BlockKernel):  # sparse
        sums = ScaleSums(
            mass=column_sums(kernel),
            sq_mass=square_column_sums(kernel),
            first=weighted_sums(kernel, x),
            second=weighted_products(kernel, x) if products else np.zeros((g, 0)),
        )
        if columns is None:
            return sums, np.zeros((g, 0))
        return sums, block_sums(kernel, columns, items=x.shape[0])
    block_rows = BLOCK_ROWS if isinstance(kernel, BlockKernel) else CHUNK
    return scales_sums_with(
        [kernel], x, columns, extra, shared=extra, products=products, block_rows=block_rows
    )[0]


def scales_sums_with(
    kernels: Sequence[FloatArray | BlockKernel],
    x: FloatArray,
    columns: Callable[[int, int], FloatArray] | None,
    width: int,
    *,
    shared: int,
    products: bool = True,
    block_rows: int = BLOCK_ROWS,
    fill: Callable[[int, int, FloatArray], None] | None = None,
) -> list[tuple[ScaleSums, FloatArray]]:
    """:func:`scale_sums_with` at several dense kernels (block kernels, stored or global ones)
    in one pass over the items: the columns [1, x, upper xx', V] of each block are made once
    and multiplied by each kernel's rows in turn (the kernel mass is the product with the column
    of ones; a global kernel, every row kernel[0], is passed as one column of ones and its sums
    scaled by kernel[0] at the end).

    V's rows start .. stop - 1 are ``columns(start, stop)`` (shape (rows, width); none when
    ``columns`` is None), or ``fill(start, stop, out)`` writes them into ``out``, the block's
    (rows, width) column-major part of the buffer that the products read, with no copy
    (``columns`` is then not called); its first ``shared`` columns are summed at every kernel, the others at
    the first kernel only (a learned prediction's fold models at h). ``products=False`` leaves
    out xx'. A block kernel's block covers only the grid columns where its entries count
    (:meth:`~slicewise.locality.weights.BlockKernel.columns`). Returns, per kernel, the sums of
    ``x`` and the (G, width) or (G, shared) sums of V.
    """
    m, p = x.shape
    width_x = p * (p + 1) // 2 if products else 0
    start_x, start_extra = 1, 1 + p + width_x
    rows_max = max(1, min(block_rows, m))
    glob = [is_global(kernel) for kernel in kernels]
    sizes = [start_extra + (width if i == 0 else shared) for i in range(len(kernels))]
    totals = [
        np.zeros((1 if glob[i] else kernels[i].shape[1], sizes[i])) for i in range(len(kernels))
    ]
    sq_mass = [np.zeros(total.shape[0]) for total in totals]
    buffer = np.empty((rows_max, start_extra + width), order="F")
    buffer[:, 0] = 1.0
    ones = np.ones((rows_max, 1))
    # column-major kernel blocks: :func:`~slicewise.locality.weights.gaussian_kernel` makes
    # a kernel column by column there, with no transposed copy
    rows_buffer = np.empty((max(kernel.shape[1] for kernel in kernels), rows_max)).T
    with one_blas_thread():
        for start in range(0, m, rows_max):
            stop = min(start + rows_max, m)
            stacked = buffer[: stop - start]
            stacked[:, start_x : start_x + p] = x[start:stop]
            if width_x:
                product_columns(
                    stacked[:, start_x : start_x + p], out=stacked[:, 1 + p : start_extra]
                )
            if fill is not None:
                fill(start, stop, stacked[:, start_extra:])
            elif columns is not None:
                stacked[:, start_extra:] = columns(start, stop)
            rows = stop - start
            for i, kernel in enumerate(kernels):
                # the grid columns with entries that count for these rows
                lo, hi = (
                    kernel.columns(start, stop)
                    if isinstance(kernel, BlockKernel)
                    else (0, 1 if glob[i] else kernel.shape[1])
                )
                if hi <= lo:
                    continue
                if glob[i]:
                    block = ones[:rows]
                elif isinstance(kernel, BlockKernel):
                    block = kernel.block_columns(
                        start, stop, lo, hi, out=rows_buffer[:rows, : hi - lo]
                    )
                else:
                    block = kernel[start:stop]
                sq_mass[i][lo:hi] += np.einsum("ij,ij->j", block, block)
                totals[i][lo:hi] += block.T @ stacked[:, : sizes[i]]
    out = []
    for i, kernel in enumerate(kernels):
        total, sq = totals[i], sq_mass[i]
        if glob[i]:
            assert isinstance(kernel, np.ndarray)
            total = kernel[0][:, None] * total
            sq = kernel[0] ** 2 * sq
        sums = ScaleSums(
            mass=total[:, 0],
            sq_mass=sq,
            first=total[:, start_x : start_x + p],
            second=total[:, 1 + p : start_extra],
        )
        out.append((sums, total[:, start_extra:]))
    return out


def _ones_blocks(items: int) -> Iterator[tuple[int, FloatArray]]:
    """(start, a column of ones for the items start .. start + CHUNK - 1), in item order: the
    blocks of one global neighbourhood's kernel, with its one distinct column."""
    ones = np.ones((min(CHUNK, items), 1))
    for start in range(0, items, CHUNK):
        yield start, ones[: min(CHUNK, items - start)]


def moments_from_sums(
    at_h: ScaleSums,
    at_b: ScaleSums,
    columns: Sequence[int],
    *,
    p: int,
    kernel: PoolKernel,
    kernel_b: PoolKernel,
) -> PoolMoments:
    """:class:`PoolMoments` of the feature ``columns`` (of p) from the kernel sums at h and at b.

    ``kernel_b is kernel`` when b = h (then ``at_b`` is not read). Global sums (one column, b =
    inf) are broadcast to every grid point.
    """
    g = at_h.mass.size
    same = kernel_b is kernel
    at_b = at_b.broadcast(g)
    cols = np.asarray(columns, dtype=np.intp)
    mass = at_h.mass
    mean = safe_divide(at_h.first[:, cols], mass)
    mass_b = mass if same else at_b.mass
    mean_b = mean if same else safe_divide(at_b.first[:, cols], mass_b)
    second = at_h.second if same else at_b.second
    products = symmetric(second, p)[:, cols][:, :, cols] if cols.size else np.zeros((g, 0, 0))
    return PoolMoments.assemble(
        kernel,
        kernel_b,
        mass=mass,
        sq_mass=at_h.sq_mass,
        mass_b=mass_b,
        mean=mean,
        mean_b=mean_b,
        second=safe_divide(products, mass_b),
    )


def block_sums(
    kernel: PoolKernel, columns: Callable[[int, int], FloatArray], *, items: int
) -> FloatArray:
    """``kernel.T @ V`` for the (M, d) matrix V whose rows start .. stop - 1 are
    ``columns(start, stop)``, built one block at a time so that V is never stored: (G, d)."""
    if isinstance(kernel, np.ndarray | BlockKernel):
        glob = is_global(kernel)  # as in scale_sums_with: one column of ones, scaled at the end
        out: FloatArray | None = None
        with one_blas_thread():
            for start, block in _ones_blocks(items) if glob else iter_blocks(kernel):
                part = block.T @ columns(start, start + block.shape[0])
                out = part if out is None else out + part
        assert out is not None
        if glob:
            assert isinstance(kernel, np.ndarray)
            return np.asarray(kernel[0][:, None] * out, dtype=np.float64)
        return out
    total: FloatArray | None = None
    for start in range(0, items, CHUNK):
        stop = min(start + CHUNK, items)
        part = weighted_sums(kernel[start:stop], columns(start, stop))
        total = part if total is None else total + part
    assert total is not None
    return total


def column_products(
    x: FloatArray, column: FloatArray, start: int, stop: int, *, out: FloatArray | None = None
) -> FloatArray:
    """Rows start .. stop - 1 of [c, c^2, c x] for a new column c next to features x (written
    into ``out``, best column-major, when given)."""
    col = column[start:stop]
    if out is None:
        out = np.empty((col.size, 2 + x.shape[1]), order="F")  # by columns: no temporaries
    out[:, 0] = col
    np.multiply(col, col, out=out[:, 1])
    np.multiply(x[start:stop], col[:, None], out=out[:, 2:])
    return out


def prepend_column(
    base: PoolMoments, mean_c: FloatArray, moments_b: FloatArray, mean_sb: FloatArray
) -> PoolMoments:
    """Pool moments of the features (c, base features) from those of the base features.

    Only the sums that involve the new column c are needed: its local mean at h (``mean_c``,
    shape (G,)) and, at b, the local means of [c, c^2, c x] (``moments_b``, shape (G, 2 + p);
    the sums of :func:`column_products` over :func:`block_sums`, divided by the mass at b), with
    the base features' local mean at b (``mean_sb``, shape (G, p)). Adding a learned prediction
    to K signals so costs K + 2 kernel sums instead of (K + 1)(K + 2) / 2 + K + 1.
    """
    mean_cb, second_c, cross = moments_b[:, 0], moments_b[:, 1], moments_b[:, 2:]
    g, p = base.cov_b.shape[0], base.cov_b.shape[1]
    cov = np.empty((g, p + 1, p + 1))
    cov[:, 1:, 1:] = base.cov_b
    cov[:, 0, 0] = second_c - mean_cb**2
    cov[:, 0, 1:] = cross - mean_cb[:, None] * mean_sb
    cov[:, 1:, 0] = cov[:, 0, 1:]
    return PoolMoments(
        kernel=base.kernel,
        kernel_b=base.kernel_b,
        mass=base.mass,
        mass_b=base.mass_b,
        n_eff=base.n_eff,
        mean=np.column_stack([mean_c, base.mean]),
        cov_b=cov,
    )


@dataclass(frozen=True, eq=False)
class LearnedSums:
    """The pool sums of a cross-fitted prediction that a learned control variate needs.

    Attributes
    ----------
    mean, scale : float
        Pool mean and standard deviation (1 where constant) of the fold-averaged prediction
        Pbar = mean_k P^(k); its standardised value is c = (Pbar - mean) / scale.
    at_h : ndarray of shape (G, F + 2 + K)
        Kernel sums at h of every fold model's prediction P^(k) and of [c, c^2, c X].
    at_b : dict of float to ndarray of shape (G, 2 + K)
        Kernel sums of [c, c^2, c X] at every other nuisance scale b / h (``inf``: global).
    """

    mean: float
    scale: float
    at_h: FloatArray
    at_b: dict[float, FloatArray]


def standardised_sums(
    raw: FloatArray, mass: FloatArray, first: FloatArray, mean: float, scale: float
) -> FloatArray:
    """Kernel sums of [c, c^2, c X] for c = (a - mean) / scale, from those of [a, a^2, a X].

    ``raw`` (G, 2 + K) holds the sums of [a, a^2, a X], ``mass`` (G,) and ``first`` (G, K) the
    kernel mass and the sums of X at the same scale: c's sums are affine in a's, so one pass
    over the pool gives both the pool mean and sd of a (from the global sums or the stored a)
    and every local sum of c. Returns (G, 2 + K).
    """
    a, aa, ax = raw[:, 0], raw[:, 1], raw[:, 2:]
    return np.column_stack(
        [
            (a - mean * mass) / scale,
            (aa - 2.0 * mean * a + mean**2 * mass) / scale**2,
            (ax - mean * first) / scale,
        ]
    )
