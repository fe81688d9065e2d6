"""Profile weights (LACE paper, Section 3.1): grids, bandwidths and local-weight matrices.

For a sample set A and a grid point z the local weights are

.. math::

    w_{i,A}(z) = \\frac{k_i(z)}{\\sum_{\\ell \\in A} k_\\ell(z)},

with the unnormalised weight k_i(z) given by the locality rule:

* continuous Z in R^q: the Gaussian product kernel
  :math:`k_i(z) = \\exp\\{-\\tfrac12 \\sum_d (Z_{id} - z_d)^2 / h_d^2\\}`;
* ordinal Z: the triangular weight :math:`k_i(g) = (1 - |Z_i - g| / b_{ord})_+`
  (``b_ord = 1`` gives within-level weights on integer levels);
* categorical Z: the group indicator :math:`k_i(g) = 1(Z_i = g)`.

The same rule is used for the pool T and the labeled set L; only the normaliser differs. Kernel
matrices are stored items x grid points, dense for Gaussian kernels and sparse CSR for the
compact-support rules, so that slicing the labeled rows is cheap.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from .._typing import FloatArray, IntArray, KernelMatrix, Kind, ObjectArray
from ..data.ordering import is_sorted
from ..data.table import ItemTable

#: Default number of grid points of a one-dimensional continuous profile.
DEFAULT_GRID_SIZE = 20
#: Default number of points per dimension of a multi-dimensional continuous profile.
DEFAULT_GRID_SIZE_MULTI = 5


def default_bandwidth(z: FloatArray) -> FloatArray:
    """Rule-of-thumb bandwidth of the LACE paper, per dimension.

    .. math:: h_0 = 1.5 \\times 1.06\\, \\widehat{sd}(Z_d)\\, M^{-1/(4+q)},

    which is :math:`1.5 \\times 1.06\\, \\widehat{sd}(Z)\\, M^{-1/5}` for a one-dimensional profile
    (Section 5.1); for q >= 2 the exponent follows Scott's rule.

    Parameters
    ----------
    z : ndarray of shape (M, q)

    Returns
    -------
    ndarray of shape (q,)
    """
    m, q = z.shape
    sd = z.std(axis=0, ddof=1) if m > 1 else np.zeros(q)
    if np.any(sd <= 0):
        raise ValueError(
            "A continuous profile needs variation in Z to set a bandwidth, but a `z` column is "
            "constant over the pool; pass bandwidth= explicitly or use kind='categorical'."
        )
    return np.asarray(1.5 * 1.06 * sd * m ** (-1.0 / (4 + q)), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Locality:
    """A locality rule on a fixed grid.

    Attributes
    ----------
    kind : {'continuous', 'ordinal', 'categorical'}
    grid : ndarray of shape (G, q)
        Grid points in the units of the table's ``z`` (codes for categorical profiles).
    bandwidth : ndarray
        Per-dimension bandwidths h (continuous), the half-width ``b_ord`` (ordinal, shape (1,)),
        or empty (categorical). ``inf`` means one global neighbourhood.
    labels : ndarray of object, shape (G,) or (G, q)
        Grid points as the user sees them (category names, ordinal levels, numbers).
    """

    kind: Kind
    grid: FloatArray
    bandwidth: FloatArray
    labels: ObjectArray

    @property
    def size(self) -> int:
        """G, the number of grid points."""
        return int(self.grid.shape[0])

    def kernel(self, z: FloatArray, bandwidth: FloatArray | float | None = None) -> KernelMatrix:
        """Unnormalised weights k_i(z_g) of items at ``z`` (shape (M, q)) for every grid point.

        ``bandwidth`` overrides the rule's own (used for the nuisance bandwidth b); ``inf`` gives a
        single global neighbourhood (all weights one).
        """
        if bandwidth is not None and np.all(np.isinf(bandwidth)):
            # one global neighbourhood: a read-only broadcast view of ones, no (M x G) memory
            return np.broadcast_to(np.ones((1, self.size)), (z.shape[0], self.size))
        bw = (
            self.bandwidth
            if bandwidth is None
            else np.broadcast_to(np.asarray(bandwidth, dtype=np.float64), self.bandwidth.shape)
        )
        if self.kind == "continuous":
            return gaussian_kernel(z, self.grid, bw)
        if self.kind == "ordinal":
            return triangular_kernel(z[:, 0], self.grid[:, 0], float(bw[0]))
        return indicator_kernel(z[:, 0].astype(np.intp), self.grid[:, 0].astype(np.intp))


#: A pass over the pool leaves out the kernel entries below this share of their grid point's
#: largest entry (:meth:`BlockKernel.columns`): at most 10^-30 M of a grid point's mass, far
#: below a double's rounding of it, while on a sorted Z a block of items is more than 11.7
#: bandwidths from several grid points, whose columns then cost neither an exponential nor a
#: product (benchmarks/bench_core.py, G = 20: a block in the middle keeps 14 columns, one at
#: an end 4).
NEGLIGIBLE = 1e-30
#: Items per block when a kernel is evaluated block by block (:class:`BlockKernel`): at G = 20
#: a block is 2.6 MB, so the block, its feature columns and the elementwise steps of
#: :func:`gaussian_kernel` stay near the processor's cache (65,536 rows held 25 MB per pass).
BLOCK_ROWS = 1 << 14


@dataclass(frozen=True, eq=False)
class BlockKernel:
    """A dense Gaussian kernel (items x grid points) that is never stored whole.

    The pool side of a profile needs only sums over the items (kernel mass, kernel-weighted sums
    of features and of their products) and the rows of the labeled items; an (M x G) float64
    matrix is 160 bytes per item at G = 20. A block kernel evaluates the rows of
    :data:`BLOCK_ROWS` items at a time (:meth:`blocks`), or of given items (:meth:`rows`), with
    the same arithmetic as :func:`gaussian_kernel`, so every entry is the one the stored matrix
    would hold.

    Attributes
    ----------
    z : ndarray of shape (M, q)
    grid : ndarray of shape (G, q)
    bandwidth : ndarray of shape (q,)
    """

    z: FloatArray
    grid: FloatArray
    bandwidth: FloatArray

    @property
    def shape(self) -> tuple[int, int]:
        """(M, G)."""
        return int(self.z.shape[0]), int(self.grid.shape[0])

    def rows(self, index: IntArray) -> FloatArray:
        """The kernel rows of the items ``index``, shape (len(index), G)."""
        return gaussian_kernel(self.z[index], self.grid, self.bandwidth)

    def block(self, start: int, stop: int, *, out: FloatArray | None = None) -> FloatArray:
        """The kernel rows of the items start .. stop - 1 (written into ``out`` when given)."""
        return gaussian_kernel(self.z[start:stop], self.grid, self.bandwidth, out=out)

    @cached_property
    def _reach(self) -> FloatArray | None:
        """Per grid point, the largest squared distance u^2 (in bandwidths) at which an entry is
        at least :data:`NEGLIGIBLE` times the grid point's largest entry over the items; None
        unless Z is one column sorted in increasing order (a continuous profile's table in
        canonical order), where the item nearest a grid point is found by bisection."""
        z = self.z[:, 0] if self.z.shape[1] == 1 else None
        if z is None or not z.size or not is_sorted(z):
            return None
        points, h = self.grid[:, 0], float(self.bandwidth[0])
        after = np.searchsorted(z, points)
        nearest = np.minimum(
            np.abs(points - z[np.maximum(after - 1, 0)]),
            np.abs(z[np.minimum(after, z.size - 1)] - points),
        )
        return np.asarray((nearest / h) ** 2 + 2.0 * math.log(1.0 / NEGLIGIBLE), dtype=np.float64)

    def columns(self, start: int, stop: int) -> tuple[int, int]:
        """The grid columns lo .. hi - 1 outside which every entry of the rows start .. stop - 1
        is below :data:`NEGLIGIBLE` times its grid point's largest entry over the items (all
        columns when that cannot be told cheaply: several Z columns or an unsorted Z)."""
        reach = self._reach
        if reach is None or stop <= start:
            return 0, self.shape[1]
        points, h = self.grid[:, 0], float(self.bandwidth[0])
        first, last = float(self.z[start, 0]), float(self.z[stop - 1, 0])
        gap = np.maximum(np.maximum(first - points, points - last), 0.0) / h
        active = np.flatnonzero(gap**2 <= reach)
        return (int(active[0]), int(active[-1]) + 1) if active.size else (0, 0)

    def block_columns(
        self, start: int, stop: int, lo: int, hi: int, *, out: FloatArray | None = None
    ) -> FloatArray:
        """Columns lo .. hi - 1 of :meth:`block`: the same entries, to the bit for the items
        whose nearest grid point is among them (:func:`gaussian_kernel`'s ``columns``)."""
        return gaussian_kernel(
            self.z[start:stop], self.grid, self.bandwidth, out=out, columns=(lo, hi)
        )

    def blocks(self) -> Iterator[tuple[int, FloatArray]]:
        """(start, kernel rows of items start .. start + BLOCK_ROWS - 1), in item order.

        The blocks are written into one buffer: each is valid until the next is asked for (every
        pass over the pool uses a block before it asks for the next; copy one to keep it). A
        fresh (BLOCK_ROWS x G) array per block cost page faults that came to a tenth of a pass.
        """
        buffer = np.empty((self.shape[1], min(BLOCK_ROWS, self.shape[0]))).T  # column-major
        for start in range(0, self.shape[0], BLOCK_ROWS):
            stop = min(start + BLOCK_ROWS, self.shape[0])
            yield start, self.block(start, stop, out=buffer[: stop - start])

    def toarray(self) -> FloatArray:
        """The whole (M x G) matrix (for callers that need it stored)."""
        return gaussian_kernel(self.z, self.grid, self.bandwidth)


def gaussian_kernel(
    z: FloatArray,
    grid: FloatArray,
    bandwidth: FloatArray,
    *,
    out: FloatArray | None = None,
    columns: tuple[int, int] | None = None,
) -> FloatArray:
    """Dense Gaussian product kernel, items x grid points, computed in place.

    Memory is one (M, G) float64 array (``out`` when given); no temporaries of that size beyond
    the output. ``columns=(lo, hi)``: only the grid points lo .. hi - 1, the entries made as in
    the whole kernel (on an equally spaced grid, to the bit for the items whose nearest grid
    point is among them).
    """
    m, q = z.shape
    lo, hi = (0, grid.shape[0]) if columns is None else columns
    if out is None:
        out = np.empty((m, hi - lo))
    step = _grid_step(grid, bandwidth) if q == 1 else None
    if step is not None:
        return _kernel_by_ratios(
            z[:, 0], float(grid[0, 0]), step, float(bandwidth[0]), out, first=lo
        )
    grid = grid[lo:hi]
    scratch = np.empty_like(out) if q > 1 else out
    if q > 1:
        out[...] = 0.0
    for d in range(q):
        # z[i, d] - grid[g, d] by broadcasting: the entries of np.subtract.outer, faster
        np.subtract(z[:, d : d + 1], grid[:, d], out=scratch)
        scratch /= bandwidth[d]
        np.square(scratch, out=scratch)
        if q > 1:
            out += scratch
    out *= -0.5
    np.exp(out, out=out)
    return out


#: A one-dimensional grid whose points are within this many bandwidths of g_0 + j * step is
#: equally spaced for :func:`gaussian_kernel` (np.linspace is within a few ulps of it): the
#: kernel it computes then differs from exp(-u^2 / 2) at the given points by at most
#: |u| times this, relatively.
GRID_STEP_RTOL = 1e-13
#: The ratio recurrence of :func:`gaussian_kernel` is used when (step / h)^2 / 2 is below this
#: (its row factors exp(+/- b step / h), |b| <= step / (2h), stay finite far from overflow).
RATIO_EXPONENT_MAX = 40.0


def _grid_step(grid: FloatArray, bandwidth: FloatArray) -> float | None:
    """step / h of a one-dimensional grid of at least 3 equally spaced increasing points (to
    :data:`GRID_STEP_RTOL` bandwidths), or None (then the kernel is exponentiated entry by
    entry)."""
    points, h = grid[:, 0], float(bandwidth[0])
    if points.size < 3 or not (np.isfinite(h) and h > 0):
        return None
    step = (points[-1] - points[0]) / (points.size - 1)
    if not step > 0 or (step / h) ** 2 / 2 > RATIO_EXPONENT_MAX:
        return None
    deviation = np.abs(points - (points[0] + step * np.arange(points.size))).max()
    if deviation > GRID_STEP_RTOL * h:
        return None
    return float(step / h)


def _kernel_by_ratios(
    z: FloatArray, start: float, d: float, h: float, out: FloatArray, *, first: int = 0
) -> FloatArray:
    """exp(-(a_i - j d)^2 / 2) with a_i = (z_i - start) / h, for j = first .. first + G - 1
    (G the columns of ``out``), into ``out``.

    With c the grid point nearest a_i (clipped to the grid) and b = a_i - c d, the entry at c is
    exp(-b^2 / 2), and each step m = 1, 2, ... away from c multiplies by
    exp(+/- b d) exp(-(m - 1/2) d^2) <= 1 (rightwards +, leftwards -): three exponentials per
    item instead of G (an exponential costs ten multiplications; the third, exp(-b d), is
    1 / exp(b d)), the rows of the items that share c computed together. Each entry is the exponential's to a few ulps times the
    number of steps (the entry exp(-u^2 / 2) itself carries the rounding of u^2 / 2, about
    u^2 ulps), and depends on its item alone, whatever the other items of the call.
    """
    g = out.shape[1]
    a = z - start
    a /= h
    nearest = np.rint(a / d)
    np.clip(nearest, first, first + g - 1, out=nearest)
    b = a
    b -= nearest * d
    with np.errstate(over="ignore", divide="ignore"):  # far outside: a factor never used is inf
        at_nearest = np.exp(-0.5 * b * b)
        right = np.exp(b * d)
        # exp(-b d) as 1 / exp(b d): a division costs an eighth of an exponential. Where exp(b d)
        # overflows, b > 709 / d is far right of the grid, the entry at the nearest point
        # exp(-b^2 / 2) is 0, and so is every entry made from it
        left = np.reciprocal(right)
    steps = np.exp(-(np.arange(1, g) - 0.5) * d * d)
    codes = nearest.astype(np.intp)
    codes -= first  # columns of ``out``
    order = None if np.all(codes[1:] >= codes[:-1]) else np.argsort(codes, kind="stable")
    if order is not None:
        codes, at_nearest, right, left = codes[order], at_nearest[order], right[order], left[order]
    bounds = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    starts, stops = [0, *bounds.tolist()], [*bounds.tolist(), codes.size]
    # columns of the kernel as contiguous rows: ``out`` itself when it is column-major
    direct = order is None and out.strides[0] == out.itemsize
    columns = (
        out.T if direct else np.empty((g, max(b - a for a, b in zip(starts, stops, strict=True))))
    )
    for lo, hi in zip(starts, stops, strict=True):
        c = int(codes[lo])
        part = columns[:, lo:hi] if direct else columns[:, : hi - lo]
        part[c] = at_nearest[lo:hi]
        for m in range(1, g - c):
            np.multiply(part[c + m - 1], right[lo:hi], out=part[c + m])
            part[c + m] *= steps[m - 1]
        for m in range(1, c + 1):
            np.multiply(part[c - m + 1], left[lo:hi], out=part[c - m])
            part[c - m] *= steps[m - 1]
        if order is not None:
            out[order[lo:hi]] = part.T
        elif not direct:
            out[lo:hi] = part.T
    return out


def triangular_kernel(z: FloatArray, grid: FloatArray, half_width: float) -> sp.csr_array:
    """Sparse triangular weights (1 - |z - g| / b)_+, items x grid points."""
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    vals: list[FloatArray] = []
    for g, point in enumerate(grid):
        dist = np.abs(z - point)
        idx = np.flatnonzero(dist < half_width)
        rows.append(idx)
        cols.append(np.full(idx.size, g, dtype=np.intp))
        vals.append(1.0 - dist[idx] / half_width)
    return sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(z.shape[0], grid.shape[0]),
    )


def indicator_kernel(codes: IntArray, grid_codes: IntArray) -> sp.csr_array:
    """Sparse group indicators 1(Z_i = g), items x grid levels."""
    position = np.full(int(max(codes.max(initial=0), grid_codes.max(initial=0))) + 1, -1)
    position[grid_codes] = np.arange(grid_codes.size)
    col = position[codes]
    kept = col >= 0
    # at most one entry per row, rows in order: the CSR arrays directly (a COO matrix's
    # conversion sorted 10^7 entries, 1.5 s)
    indptr = np.zeros(codes.shape[0] + 1, dtype=np.intp)
    np.cumsum(kept, out=indptr[1:])
    return sp.csr_array(
        (np.ones(int(indptr[-1])), col[kept], indptr), shape=(codes.shape[0], grid_codes.size)
    )


def _grid_values(grid: object, *, q: int) -> FloatArray:
    values = np.asarray(grid, dtype=np.float64)
    if values.ndim == 1 and q == 1:
        values = values.reshape(-1, 1)
    if values.ndim != 2 or values.shape[1] != q or values.shape[0] == 0:
        raise ValueError(
            f"The 'grid' parameter of profile must be an int or an array of shape (G, {q}) with "
            f"G >= 1 for a {q}-dimensional profile. Got an array of shape {values.shape} instead."
        )
    if not np.all(np.isfinite(values)):
        raise ValueError("The 'grid' parameter of profile must contain finite numbers only.")
    return values


def make_locality(
    table: ItemTable,
    *,
    grid: int | Sequence[object] | FloatArray | None = None,
    bandwidth: float | Sequence[float] | FloatArray | None = None,
) -> Locality:
    """Build the locality rule and grid for a table (validating ``grid`` and ``bandwidth``).

    Parameters
    ----------
    table : ItemTable
    grid : int or array-like, optional
        Continuous profiles: a number of points (default 20 over the 5th-95th percentiles for
        q = 1; 5 per dimension, as a product grid, for q >= 2) or explicit points of shape (G, q).
        Ordinal: the levels to report (default: every level in the pool). Categorical: the
        categories to report (default: every category, sorted).
    bandwidth : float or array-like, optional
        Continuous: h per dimension (default :func:`default_bandwidth`). Ordinal: the triangular
        half-width ``b_ord`` (default 1, i.e. exact levels). Categorical: must be omitted.

    Returns
    -------
    Locality
    """
    z = table.z
    q = z.shape[1]
    if table.kind == "categorical":
        if bandwidth is not None:
            raise ValueError(
                "The 'bandwidth' parameter of profile does not apply to categorical profiles "
                f"(weights are group indicators). Got {bandwidth!r}; omit it."
            )
        assert table.levels is not None  # set by make_table for categorical profiles
        levels = table.levels
        if grid is None:
            codes = np.arange(levels.size)
        else:
            codes = _lookup_levels(levels, grid, "categories")
        return Locality(
            kind="categorical",
            grid=codes.astype(np.float64).reshape(-1, 1),
            bandwidth=np.zeros(0),
            labels=levels[codes].astype(object),
        )
    if table.kind == "ordinal":
        b_ord = _check_bandwidth(1.0 if bandwidth is None else bandwidth, q=1)
        if table.levels is not None:  # ordered categorical: codes stand for levels
            codes = (
                np.arange(table.levels.size)
                if grid is None
                else _lookup_levels(table.levels, grid, "levels")
            )
            return Locality(
                kind="ordinal",
                grid=codes.astype(np.float64).reshape(-1, 1),
                bandwidth=b_ord,
                labels=table.levels[codes].astype(object),
            )
        points = np.unique(z[:, 0]) if grid is None else _grid_values(grid, q=1)[:, 0]
        return Locality(
            kind="ordinal",
            grid=points.reshape(-1, 1),
            bandwidth=b_ord,
            labels=points.astype(object),
        )
    h = default_bandwidth(z) if bandwidth is None else _check_bandwidth(bandwidth, q=q)
    if grid is None or isinstance(grid, int | np.integer):
        size = (DEFAULT_GRID_SIZE if q == 1 else DEFAULT_GRID_SIZE_MULTI) if grid is None else grid
        if isinstance(size, bool) or int(size) < 1:
            raise ValueError(
                f"The 'grid' parameter of profile must be a positive number of points or an array "
                f"of points. Got {grid!r} instead."
            )
        lo, hi = np.percentile(z, [5, 95], axis=0)
        axes = [np.linspace(lo[d], hi[d], int(size)) for d in range(q)]
        mesh = np.meshgrid(*axes, indexing="ij")
        points2d = np.column_stack([m.ravel() for m in mesh])
    else:
        points2d = _grid_values(grid, q=q)
    labels = points2d[:, 0].astype(object) if q == 1 else points2d.astype(object)
    return Locality(kind="continuous", grid=points2d, bandwidth=h, labels=labels)


def _check_bandwidth(bandwidth: object, *, q: int) -> FloatArray:
    values = np.atleast_1d(np.asarray(bandwidth, dtype=np.float64))
    if values.size == 1 and q > 1:
        values = np.repeat(values, q)
    if values.ndim != 1 or values.size != q:
        raise ValueError(
            f"The 'bandwidth' parameter of profile must be one positive number or one per profile "
            f"dimension ({q}). Got {bandwidth!r} instead."
        )
    if np.any(np.isnan(values)) or np.any(values <= 0):
        raise ValueError(
            f"The 'bandwidth' parameter of profile must be > 0 (inf for one global "
            f"neighbourhood). Got {bandwidth!r} instead."
        )
    return values


def _lookup_levels(levels: ObjectArray, requested: object, what: str) -> IntArray:
    wanted = list(np.atleast_1d(np.asarray(requested, dtype=object)))
    index = {level: code for code, level in enumerate(levels.tolist())}
    unknown = [w for w in wanted if w not in index]
    if unknown:
        raise ValueError(
            f"The 'grid' parameter of profile names {what} {unknown[:5]!r} that do not occur in "
            f"the `z` column; available: {levels.tolist()[:30]!r}."
        )
    return np.asarray([index[w] for w in wanted], dtype=np.intp)
