"""The canonical row order: the tie-refined sort is np.lexsort's permutation, ties included."""

from __future__ import annotations

import numpy as np
import pytest

from slicewise.data.ordering import LONG_RUNS, canonical_order, lexsort_by_ties


def _key(rng: np.random.Generator, m: int, kind: int) -> np.ndarray:
    if kind == 0:
        return rng.normal(size=m)
    values = rng.integers(0, 3, m).astype(float)
    if kind == 2:
        values[rng.random(m) < 0.3] = np.nan
    if kind == 3:
        values = np.where(values > 0, 0.0, -0.0)  # -0.0 and 0.0 tie
    return values


@pytest.mark.parametrize("seed", range(40))
def test_lexsort_by_ties_is_np_lexsort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 400))
    keys = [_key(rng, m, int(rng.integers(0, 4))) for _ in range(int(rng.integers(1, 6)))]
    np.testing.assert_array_equal(lexsort_by_ties(keys), np.lexsort(keys[::-1]))


def test_canonical_order_sorts_by_z_then_signals_then_label() -> None:
    rng = np.random.default_rng(1)
    z = rng.integers(0, 3, (500, 2)).astype(float)
    signals = rng.integers(0, 2, (500, 3)).astype(float)
    label = np.where(rng.random(500) < 0.5, np.nan, rng.integers(0, 2, 500))
    expected = np.lexsort([label, *signals.T[::-1], *z.T[::-1]])
    np.testing.assert_array_equal(canonical_order(z, signals, label, None), expected)


@pytest.mark.parametrize("n_keys", [1, 2, 3])
def test_rows_that_tie_on_every_key_keep_their_input_order(n_keys: int) -> None:
    # the first sort is not stable: on this many tied rows it leaves them out of input order
    rng = np.random.default_rng(7)
    m = 20_000
    first = np.where(rng.random(m) < 0.5, 0.0, -0.0)
    first[rng.random(m) < 0.2] = np.nan
    assert not np.array_equal(np.argsort(first), np.argsort(first, kind="stable"))
    keys = [first, *(rng.integers(0, 2, m).astype(float) for _ in range(n_keys - 1))]
    np.testing.assert_array_equal(lexsort_by_ties(keys), np.lexsort(keys[::-1]))


@pytest.mark.parametrize("levels", [1, 3, 50])
@pytest.mark.parametrize("seed", range(4))
def test_category_codes_first_is_np_lexsort(seed: int, levels: int) -> None:
    # codes first (radix-sorted, stable) and long runs sorted one by one on the next key, whose
    # ties (rounded values, -0.0 and 0.0, NaN) the next rounds put in input-row order
    rng = np.random.default_rng(seed)
    m = int(rng.integers(LONG_RUNS * levels, 30_000))
    codes = rng.integers(0, levels, m).astype(float)
    later = [
        np.round(rng.normal(size=m), int(rng.integers(0, 3))),
        np.where(rng.random(m) < 0.5, 0.0, -0.0),
        rng.integers(0, 2, m).astype(float),
    ]
    later[0][rng.random(m) < 0.1] = np.nan
    keys = [codes, *later[: int(rng.integers(1, 4))]]
    np.testing.assert_array_equal(lexsort_by_ties(keys), np.lexsort(keys[::-1]))
