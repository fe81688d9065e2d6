"""The percentiles of a continuous profile column of a DuckDB pool (its grid), counted by SQL
aggregates that DuckDB runs on all its threads instead of record batches binned in numpy.

:func:`~.percentiles.refined_percentiles` needs, per interval, the counts of bins in increasing
order of the values with bounds that hold them. Here a bin is floor(v / w - a / w) (w the
interval's width over :data:`~.percentiles.BINS`): nondecreasing in v whatever the rounding,
so the bins are in the values' order, and each bin's bounds are its smallest value and the
float after its largest (``min``, ``max``), not edges computed apart. The last step collects the
distinct values of the intervals left (``GROUP BY``). The order statistics, so the percentiles,
are those of :func:`~.percentiles.exact_percentiles`, exactly.

The moments of the squared standardised column (the learner's design,
:class:`~.kernel_passes.ProfileMomentsPass`) are taken in the first aggregate: per bin the mean
and variance (DuckDB's ``avg`` and ``var_pop``), merged as Chan's formula merges parts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._typing import FloatArray
from . import percentiles
from .kernel_passes import ProfileMomentsPass, sql_number

#: Count, mean and sum of squared deviations (the state of a ProfileMomentsPass).
Moments = tuple[int, FloatArray, FloatArray]


def sql_percentiles(
    relation: Any,
    quote: Any,
    column: str,
    q: Sequence[float],
    *,
    n: int,
    lo: float,
    hi: float,
    squares: ProfileMomentsPass | None = None,
) -> tuple[FloatArray, Moments | None]:
    """``np.percentile`` of the pool's numeric ``column`` at ``q`` (every value finite and
    present: the statistics pass refuses others), and the state of ``squares`` (of that one
    column) summed in the first aggregate, or None without it."""
    value = f"CAST({quote(column)} AS DOUBLE)"
    moments: list[Moments] = []

    def histogram(intervals: list[tuple[float, float]]) -> list[percentiles.Bins]:
        out = []
        for a, b in intervals:
            width = b / percentiles.BINS - a / percentiles.BINS  # finite for finite a and b
            if not width > 0:  # a and b a few subnormals apart: any width keeps the order
                width = 1.0
            offset = a / width
            terms = ["count(*)", "min(v)", "max(v)"]
            first = squares is not None and not moments
            if first:
                assert squares is not None
                assert squares.center is not None
                assert squares.scale is not None
                center, scale = float(squares.center[0]), float(squares.scale[0])
                t = f"((v - {sql_number(center)}) / {sql_number(scale)})"
                # per bin (a narrow range of v): Welford's mean and variance, merged below
                terms += [f"avg({t} * {t})", f"var_pop({t} * {t})"]
            sql = (
                f"SELECT floor(v / {sql_number(width)} - {sql_number(offset)}) AS bin, "
                f"{', '.join(terms)} FROM (SELECT {value} AS v FROM pool) "
                f"WHERE v >= {sql_number(a)} AND v < {sql_number(b)} GROUP BY bin ORDER BY bin"
            )
            rows = relation.query("pool", sql).fetchall()
            counts = np.asarray([row[1] for row in rows], dtype=np.float64)
            smallest = np.asarray([row[2] for row in rows], dtype=np.float64)
            largest = np.nextafter(np.asarray([row[3] for row in rows], dtype=np.float64), np.inf)
            out.append((counts, smallest, largest))
            if first:
                total = int(counts.sum())
                means = np.asarray([row[4] for row in rows], dtype=np.float64)
                variances = np.asarray([row[5] for row in rows], dtype=np.float64)
                with np.errstate(invalid="ignore", over="ignore"):  # squares beyond 1e308
                    mean = float(counts @ means) / total
                    m2 = float(counts @ variances + counts @ (means - mean) ** 2)
                moments.append((total, np.array([mean]), np.array([m2])))
        return out

    def collect(intervals: list[tuple[float, float]]) -> list[dict[float, int]]:
        inside = " OR ".join(
            f"(v >= {sql_number(a)} AND v < {sql_number(b)})" for a, b in dict.fromkeys(intervals)
        )
        sql = f"SELECT v, count(*) FROM (SELECT {value} AS v FROM pool) WHERE {inside} GROUP BY v"
        rows = relation.query("pool", sql).fetchall()
        found = np.asarray([row[0] for row in rows], dtype=np.float64)
        counts = np.asarray([row[1] for row in rows], dtype=np.int64)
        out = []
        for a, b in intervals:
            keep = (found >= a) & (found < b)
            out.append(dict(zip(found[keep].tolist(), counts[keep].tolist(), strict=True)))
        return out

    found = percentiles.refined_percentiles(histogram, collect, q, n=n, lo=lo, hi=hi)
    if squares is not None and not moments:  # no histogram was needed: the squares alone
        histogram([(lo, float(np.nextafter(hi, np.inf)))])
    return found, (moments[0] if moments else None)
