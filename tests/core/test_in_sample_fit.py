"""The warning for a coefficient fitted on few labels per signal (``lace`` and its kin)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.exceptions import InSampleFitWarning

SIGNALS = ["s1", "s2", "s3", "s4"]


def _frame(rng: np.random.Generator) -> pd.DataFrame:
    """Group 'small' with 20 labels of 400 items and 'big' with 200 of 1,000; four signals."""
    frames = []
    for name, size, labels in (("small", 400, 20), ("big", 1000, 200)):
        y = (rng.random(size) < 0.6).astype(float)
        frame = pd.DataFrame(rng.normal(size=(size, 4)) + y[:, None], columns=SIGNALS)
        frame["g"] = name
        frame["y"] = np.nan
        chosen = rng.choice(size, labels, replace=False)
        frame.loc[chosen, "y"] = y[chosen]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _profile(frame: pd.DataFrame, method: str) -> tuple[sw.ProfileResult, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sw.profile(
            frame, z="g", kind="categorical", signals=SIGNALS, label="y", method=method,
            smooth="none", primary="s1",
        )  # fmt: skip
    return result, [str(w.message) for w in caught if issubclass(w.category, InSampleFitWarning)]


def test_a_group_with_few_labels_per_signal_is_named() -> None:
    """4 signals on 20 labels is 0.2 per label (flagged), on 200 labels 0.02 (not)."""
    result, caught = _profile(_frame(np.random.default_rng(0)), "lace")
    assert len(caught) == 1
    assert "At 1 grid point(s)" in caught[0]
    assert "small" in caught[0]
    assert "big" not in caught[0]
    assert caught[0] in result.notes


@pytest.mark.parametrize("method", ["auto", "global_cv", "naive", "per_signal_cv"])
def test_cross_fitted_pooled_and_single_signal_fits_are_not_flagged(method: str) -> None:
    """auto cross-fits; global_cv's coefficient uses all 220 labels (4 / 220); per_signal_cv has
    one signal on 20 labels (0.05 per label); naive has no coefficient."""
    _, caught = _profile(_frame(np.random.default_rng(0)), method)
    assert caught == []
