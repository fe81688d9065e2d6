"""Which slices could be the worst: simultaneous intervals over the slices of a profile, and the
set of slices whose intervals do not rule out being among the k lowest.

**Šidák's per-interval level.** For J slices with pointwise intervals at level 1 - a each, all J
hold jointly with probability at least (1 - a)^J when the estimates are jointly normal, whatever
their correlation (Šidák 1967, for two-sided intervals), with equality for independent ones. So
a = 1 - level^(1/J) makes the family hold at ``level``. The slices of a categorical profile are
disjoint, so their estimates share no labeled item and are independent up to a pooled
coefficient fitted on all of them: the single-step max-|t| (min-P) critical value of
:mod:`slicewise.inference.simultaneous`, which ``rank_models`` uses with the correlation of the
item-level influence values, then equals Šidák's (with the identity correlation its min-P law is
exactly (1 - a)^J), and Šidák's needs no influence values, so a result can compute it alone. It
is never narrower than a pointwise interval (a <= 1 - level), and tighter than Bonferroni's
(1 - level) / J.

**Could be among the k worst.** If every interval covers its slice, a slice j is certainly not
among the k lowest when at least k other slices have an upper bound below j's lower bound. The
other slices form the candidate set, which then contains every one of the k lowest slices: with
the family-wise intervals, with probability at least ``level``. A slice without an interval (no
labels, no variance) is always a candidate and never rules another out.

References
----------
Sidak, Z. (1967). Rectangular confidence regions for the means of multivariate normal
distributions. *JASA* 62, 626-633.
"""

from __future__ import annotations

import numpy as np

from .._typing import BoolArray, FloatArray


def sidak_level(level: float, n_family: int) -> float:
    """a = 1 - level^(1/J): the two-sided level of each of J intervals that hold jointly at
    ``level`` (J <= 1: 1 - level)."""
    if n_family <= 1:
        return 1.0 - level
    return float(-np.expm1(np.log(level) / n_family))


def could_be_worst(lower: FloatArray, upper: FloatArray, k: int = 1) -> BoolArray:
    """Slices not ruled out of the k lowest: fewer than k others lie wholly below them.

    NaN bounds count as -inf (lower) and +inf (upper): such a slice is a candidate and rules
    no other out.
    """
    low = np.where(np.isfinite(lower), lower, -np.inf)
    high = np.where(np.isfinite(upper), upper, np.inf)
    below = high[None, :] < low[:, None]  # [j, i]: slice i lies wholly below slice j
    np.fill_diagonal(below, False)
    out: BoolArray = below.sum(axis=1) < k
    return out
