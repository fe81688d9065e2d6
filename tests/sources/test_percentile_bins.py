"""The histogram bins of the exact percentiles are numpy's binary search, exactly."""

from __future__ import annotations

import numpy as np
import pytest

from slicewise.sources.percentiles import bin_of


def _interval(rng: np.random.Generator, case: str) -> tuple[float, float]:
    if case == "smooth":
        a = float(rng.normal())
        return a, a + float(rng.uniform(0.1, 3.0))
    if case == "far":  # a few ulps wide, far from zero: repeated edges
        a = float(rng.normal() * 1e8)
        b = a
        for _ in range(int(rng.integers(1, 4))):
            b = float(np.nextafter(b, np.inf))
        return a, b
    if case == "narrow":
        return 1.0, 1.0 + 1e-15 * float(rng.integers(1, 50))
    return -float(rng.random()) * 1e-300, float(rng.random()) * 1e-300  # subnormal widths


@pytest.mark.parametrize("case", ["smooth", "far", "narrow", "tiny"])
@pytest.mark.parametrize("bins", [1, 2, 4096])
def test_bins_equal_the_binary_search(case: str, bins: int) -> None:
    """Values on, just below and just above every edge, and uniform ones, for intervals of
    every width down to a few ulps."""
    rng = np.random.default_rng(bins)
    for _ in range(25):
        a, b = _interval(rng, case)
        edges = np.linspace(a, b, bins + 1)
        values = np.concatenate(
            [
                rng.uniform(a, b, 2000),
                edges,
                np.nextafter(edges, -np.inf),
                np.nextafter(edges, np.inf),
            ]
        )
        values = values[(values >= edges[0]) & (values < edges[-1])]
        expected = np.searchsorted(edges, values, side="right") - 1
        np.testing.assert_array_equal(bin_of(edges, values), expected)


def test_histogram_pass_counts_a_batch_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record batch binned a few values at a time gives the counts of the binary search
    over the whole batch, for each interval (values outside it not counted)."""
    import pyarrow as pa

    from slicewise.sources import percentiles

    monkeypatch.setattr(percentiles, "CHUNK_VALUES", 7)
    rng = np.random.default_rng(4)
    x = rng.normal(size=100)
    edges = (np.linspace(-3.0, 3.0, 17), np.linspace(-0.5, 0.25, 5))
    batch = pa.RecordBatch.from_arrays([pa.array(x)], names=["z"])
    got = percentiles.HistogramPass("z", edges).partial(batch)
    for counts, e in zip(got, edges, strict=True):
        inside = x[(x >= e[0]) & (x < e[-1])]
        ref = np.bincount(np.searchsorted(e, inside, side="right") - 1, minlength=e.size - 1)
        assert counts.dtype == np.float64
        np.testing.assert_array_equal(counts, ref)
    assert got[1].sum() < x.size  # values outside the second interval are left out
