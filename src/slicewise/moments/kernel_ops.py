"""Elementwise and column operations on kernel matrices (items x grid; dense, sparse or a
:class:`~slicewise.locality.weights.BlockKernel` evaluated block by block): column sums, weighted
sums and products of feature columns, row scaling and selection. The moments of
:mod:`.sums` are assembled from them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from .._threads import one_blas_thread
from .._typing import FloatArray, IntArray, KernelMatrix, PoolKernel
from ..locality.weights import BlockKernel

#: Items per block when forming products of feature columns over a large pool.
CHUNK = 1 << 16


def is_global(kernel: PoolKernel) -> bool:
    """Whether every item has the same kernel row (the read-only broadcast of one global
    neighbourhood, :meth:`slicewise.locality.weights.Locality.kernel` at bandwidth inf)."""
    return isinstance(kernel, np.ndarray) and kernel.shape[0] > 1 and kernel.strides[0] == 0


def iter_blocks(kernel: FloatArray | BlockKernel) -> Iterator[tuple[int, FloatArray]]:
    """(start, dense kernel rows start .. start + CHUNK - 1) over the items, in order (a
    :class:`~slicewise.locality.weights.BlockKernel`'s in its own blocks, each valid until the
    next is asked for)."""
    if isinstance(kernel, BlockKernel):
        yield from kernel.blocks()
        return
    for start in range(0, kernel.shape[0], CHUNK):
        yield start, kernel[start : start + CHUNK]


def column_sums(kernel: PoolKernel) -> FloatArray:
    """Sum of each grid point's weights (the local kernel mass)."""
    if isinstance(kernel, BlockKernel):
        out = np.zeros(kernel.shape[1])
        for _, block in kernel.blocks():
            out += block.sum(axis=0)
        return out
    if is_global(kernel):
        return np.asarray(kernel[0] * float(kernel.shape[0]), dtype=np.float64)
    return np.asarray(kernel.sum(axis=0), dtype=np.float64).ravel()


def square_column_sums(kernel: PoolKernel) -> FloatArray:
    """sum_i k_i(z)^2 per grid point, without forming the squared matrix when dense."""
    if isinstance(kernel, BlockKernel):
        out = np.zeros(kernel.shape[1])
        for _, block in kernel.blocks():
            out += np.einsum("ij,ij->j", block, block)
        return out
    if is_global(kernel):
        return np.asarray(kernel[0] ** 2 * float(kernel.shape[0]), dtype=np.float64)
    if isinstance(kernel, np.ndarray):
        return np.asarray(np.einsum("ij,ij->j", kernel, kernel), dtype=np.float64)
    return column_sums(square(kernel))


@functools.cache
def upper_pairs(p: int) -> tuple[tuple[int, int], ...]:
    """(j, l) for j <= l < p, row-major: np.triu_indices(p), made once per p (it took a tenth
    of the labeled-side fits of ``auto``, called for each)."""
    rows, cols = np.triu_indices(p)
    return tuple(zip(rows.tolist(), cols.tolist(), strict=True))


def product_columns(x: FloatArray, out: FloatArray | None = None) -> FloatArray:
    """x_ij x_il for j <= l (upper triangle, row-major), shape (n, p(p+1)/2), column by column
    (no fancy-index temporaries); written into ``out`` when given."""
    pairs = upper_pairs(x.shape[1])
    if out is None:
        out = np.empty((x.shape[0], len(pairs)), order="F")
    for t, (a, b) in enumerate(pairs):
        np.multiply(x[:, a], x[:, b], out=out[:, t])
    return out


def weighted_products(kernel: PoolKernel, x: FloatArray) -> FloatArray:
    """sum_i k_i(z) x_ij x_il for j <= l (upper triangle, row-major), shape (G, p(p+1)/2).

    Works in blocks of :data:`CHUNK` items so that no (M x p^2) product matrix is formed.
    """
    p = x.shape[1]
    out = np.zeros((kernel.shape[1], p * (p + 1) // 2))
    if is_global(kernel):
        assert isinstance(kernel, np.ndarray)
        total = np.zeros(out.shape[1])
        for start in range(0, x.shape[0], CHUNK):
            total += product_columns(x[start : start + CHUNK]).sum(axis=0)
        return np.asarray(kernel[0][:, None] * total, dtype=np.float64)
    if isinstance(kernel, np.ndarray | BlockKernel):
        with one_blas_thread():
            for start, block in iter_blocks(kernel):
                out += block.T @ product_columns(x[start : start + block.shape[0]])
        return out
    for start in range(0, x.shape[0], CHUNK):
        part = product_columns(x[start : start + CHUNK])
        out += weighted_sums(kernel[start : start + CHUNK], part)
    return out


def square(kernel: KernelMatrix) -> KernelMatrix:
    """Elementwise square of a dense or sparse kernel matrix."""
    return multiply(kernel, kernel)


def multiply(a: KernelMatrix, b: KernelMatrix) -> KernelMatrix:
    """Elementwise product of two kernel matrices of the same shape (dense or sparse)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a * b
    if isinstance(a, np.ndarray):
        a, b = b, a
    assert not isinstance(a, np.ndarray)
    return sp.csr_array(a.multiply(b))


#: Labeled kernel rows with at most this many entries are densified: for a few thousand labeled
#: items dense products beat sparse ones, whose per-call overhead dominates.
DENSE_LIMIT = 4_000_000


def as_dense_if_small(kernel: KernelMatrix) -> KernelMatrix:
    """A dense copy of a sparse kernel block with at most :data:`DENSE_LIMIT` entries."""
    if isinstance(kernel, np.ndarray) or kernel.shape[0] * kernel.shape[1] > DENSE_LIMIT:
        return kernel
    return np.asarray(kernel.toarray(), dtype=np.float64)


def weighted_sums(kernel: PoolKernel, values: FloatArray) -> FloatArray:
    """``kernel.T @ values``: (G, p) unnormalised local sums of the columns of ``values``."""
    if isinstance(kernel, BlockKernel):
        out = np.zeros((kernel.shape[1], values.shape[1]))
        with one_blas_thread():
            for start, block in kernel.blocks():
                out += block.T @ values[start : start + block.shape[0]]
        return out
    if isinstance(kernel, np.ndarray) and is_global(kernel):
        return np.asarray(kernel[0][:, None] * values.sum(axis=0), dtype=np.float64)
    out = kernel.T @ values
    return np.asarray(out, dtype=np.float64)


def scale_rows(kernel: KernelMatrix, factor: FloatArray) -> KernelMatrix:
    """Each item's kernel row times ``factor`` (design weights 1 / pi_i)."""
    if isinstance(kernel, np.ndarray):
        return np.asarray(kernel * factor[:, None], dtype=np.float64)
    return sp.csr_array(kernel.multiply(factor[:, None]))


def take_rows(kernel: PoolKernel, index: IntArray) -> KernelMatrix:
    """The kernel rows of a subset of items (the labeled set)."""
    if isinstance(kernel, BlockKernel):
        return kernel.rows(index)
    if isinstance(kernel, np.ndarray):
        return kernel[index]
    return sp.csr_array(kernel[index])


def outer_rows(x: FloatArray) -> FloatArray:
    """Row-wise outer products, flattened: shape (n, d * d)."""
    n, d = x.shape
    return (x[:, :, None] * x[:, None, :]).reshape(n, d * d)


def positive_max(kernel: KernelMatrix, values: FloatArray) -> FloatArray:
    """Per column g, the largest ``values[i]`` over the rows i with ``kernel[i, g] > 0`` (0 for a
    column without such a row); ``values`` must be nonnegative."""
    if sp.issparse(kernel):
        m = sp.csc_matrix(kernel, copy=True)
        m.data = np.where(m.data > 0, values[m.indices], 0.0)
        return np.asarray(m.max(axis=0).toarray(), dtype=np.float64).ravel()
    dense = np.asarray(kernel)
    return np.asarray(np.max(np.where(dense > 0, values[:, None], 0.0), axis=0), dtype=np.float64)


def safe_divide(num: FloatArray, den: FloatArray) -> FloatArray:
    shape = (-1,) + (1,) * (num.ndim - 1)
    den_b = den.reshape(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den_b > 0, num / np.where(den_b > 0, den_b, 1.0), np.nan)
    return np.asarray(out, dtype=np.float64)
