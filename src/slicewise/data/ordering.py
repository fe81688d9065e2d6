"""The canonical row order of an item table: an order that depends on the items, not on the order
they were given in, made by sorting each key only within the runs that tie on the earlier ones."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

from .._typing import BoolArray, FloatArray, IntArray, ObjectArray


def canonical_order(
    z: FloatArray,
    signals: FloatArray | Sequence[FloatArray],
    label: FloatArray,
    ids: ObjectArray | None,
) -> IntArray:
    """A row order that depends on the items, not on the order they were given in.

    By id when there are ids (unique, so a total order); otherwise lexicographic over the
    profile values, the raw signals (an (M, K) array or its K columns) and the label (missing
    values last). Rows that tie agree on every used column, so their relative order cannot
    change a result.
    """
    if ids is not None:
        try:
            codes = pd.factorize(pd.Series(ids, dtype=object), sort=True)[0]
        except TypeError:  # ids of several types that do not compare: order by their text
            codes = pd.factorize(pd.Series([f"{type(v).__name__}:{v}" for v in ids]), sort=True)[0]
        return np.argsort(codes, kind="stable").astype(np.intp)
    columns = list(signals.T) if isinstance(signals, np.ndarray) else list(signals)
    return lexsort_by_ties([*z.T, *columns, label])


def _ties(values: FloatArray) -> BoolArray:
    """``out[j]``: sorted ``values[j + 1]`` equals ``values[j]`` (NaNs, sorted last, tie)."""
    with np.errstate(invalid="ignore"):
        same = values[1:] == values[:-1]
    return np.asarray(same | (np.isnan(values[1:]) & np.isnan(values[:-1])), dtype=np.bool_)


#: A run of tied rows is sorted on its own (in cache) when the runs that tie on the earlier keys
#: average at least this many rows (a categorical profile: a few runs of many items each).
LONG_RUNS = 256


def is_sorted(values: FloatArray) -> bool:
    """``values`` (one column) is non-decreasing: a continuous profile's Z in a table in
    canonical order without ids, which the balance strata and the kernel passes use."""
    return values.size < 2 or bool(np.all(values[1:] >= values[:-1]))


def small_codes(values: FloatArray) -> npt.NDArray[np.uint16] | None:
    """``values`` as uint16 when every one is an integer in [0, 65535] (category or level codes;
    -0.0 is 0), else None."""
    with np.errstate(invalid="ignore"):
        codes = values.astype(np.uint16)
    return codes if np.array_equal(codes, values) else None


def lexsort_by_ties(keys: Sequence[FloatArray]) -> IntArray:
    """``np.lexsort(keys[::-1])`` (first key primary, stable), sorting each later key only
    within the runs that tie on the earlier ones.

    ``np.lexsort`` sorts every key over every row (1.1-1.5 s for eight keys over 10^6 items);
    a continuous profile rarely ties, so one sort of Z usually decides the order. That first
    sort need not be stable (an unstable one is three times faster at 10^6 items): the first
    sort of the tied runs also sorts them by input row, after the later key, so the rows of a
    run reach the same order as after a stable sort, and the later sorts, stable, keep it.
    Rows that tie on every key so keep their input order, as in ``np.lexsort``.

    Category or level codes (small non-negative integers) are sorted stably by radix sort
    instead, which is faster still and leaves each run in input-row order. Their runs are
    long (every item of a category): each is sorted on its own by the next key, unstably
    (``np.lexsort`` of three keys over 3 * 10^6 items of 50 categories took 2.7 s, the runs
    one by one 0.3 s), and the rows that then tie again are put in input-row order by the next
    round, as after the first unstable sort.
    """
    codes = small_codes(keys[0])
    order = np.argsort(
        keys[0] if codes is None else codes, kind="quicksort" if codes is None else "stable"
    )
    # tied[i] = j: sorted rows j and j + 1 tie on every key so far (the work of each round is
    # proportional to the ties, not to M: a round over every item cost 0.6 s at 10^7)
    tied = np.flatnonzero(_ties(keys[0][order]))
    by_row = codes is None  # the next sort of the tied runs also puts them in input-row order
    for key in [*keys[1:], None]:
        if not tied.size:
            break
        starts = np.ones(tied.size, dtype=np.bool_)  # a run of tied rows begins
        starts[1:] = tied[1:] != tied[:-1] + 1
        chain = np.cumsum(starts) - 1
        last = np.ones(tied.size, dtype=np.bool_)
        last[:-1] = starts[1:]
        after = np.flatnonzero(last) + 1  # each run's last row follows its last tie
        positions = np.insert(tied, after, tied[last] + 1)
        run = np.insert(chain, after, chain[last])
        rows = order[positions]
        if key is None:  # every key ties: input-row order within the runs, if not yet made
            if by_row:
                order[positions] = rows[np.lexsort((rows, run))]
            break
        bounds = np.flatnonzero(run[1:] != run[:-1]) + 1
        if not by_row and positions.size >= LONG_RUNS * (bounds.size + 1):
            values = key[rows]
            for lo, hi in zip([0, *bounds.tolist()], [*bounds.tolist(), rows.size], strict=True):
                rows[lo:hi] = rows[lo:hi][np.argsort(values[lo:hi], kind="quicksort")]
            order[positions] = rows
            by_row = True  # rows that tie on this key too are in no particular order
        else:
            order[positions] = rows[
                np.lexsort((rows, key[rows], run) if by_row else (key[rows], run))
            ]
            by_row = False
        left, right = key[order[tied]], key[order[tied + 1]]
        with np.errstate(invalid="ignore"):
            tied = tied[(left == right) | (np.isnan(left) & np.isnan(right))]
    return np.asarray(order, dtype=np.intp)
