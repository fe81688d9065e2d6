"""A pool kernel evaluated block by block (never stored) gives the stored kernel's profiles."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.table import make_table
from slicewise.locality import weights
from slicewise.locality.weights import BlockKernel
from slicewise.methods.run import build_context

base = importlib.import_module("slicewise.methods.base")

SIGNALS = ["s0", "s1", "s2"]


def _frame(seed: int = 3, m: int = 3000, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    y = (rng.random(m) < 1 / (1 + np.exp(-z))).astype(float)
    frame = pd.DataFrame(y[:, None] * [1.0, 0.5, 0.2] + rng.normal(size=(m, 3)), columns=SIGNALS)
    frame["z"] = z
    y[rng.permutation(m)[n:]] = np.nan
    frame["y"] = y
    return frame


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("naive", {}),
        ("lace", {}),
        ("lace", {"nuisance_scale": 2.0}),
        ("global_cv", {}),
        ("lace_learned", {}),
        ("auto", {}),
    ],
)
def test_block_kernel_profile_equals_stored_kernel(
    method: str, extra: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = _frame()
    kwargs = {"z": "z", "signals": SIGNALS, "label": "y", "kind": "continuous", **extra}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stored = sw.profile(frame, method=method, **kwargs)
        monkeypatch.setattr(base, "STORED_KERNEL_LIMIT", 0)
        monkeypatch.setattr(weights, "BLOCK_ROWS", 700)  # several blocks, the last one short
        blocked = sw.profile(frame, method=method, **kwargs)
    np.testing.assert_allclose(blocked.estimate, stored.estimate, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.se, stored.se, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(blocked.n_pool_eff, stored.n_pool_eff, rtol=1e-12)
    assert blocked.params.get("chosen") == stored.params.get("chosen")


def test_a_large_dense_pool_kernel_is_never_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "STORED_KERNEL_LIMIT", 0)
    items = make_table(_frame(), z="z", signals=SIGNALS, label="y", kind="continuous")
    ctx = build_context(items)
    pool = ctx.moments("signals", nuisance_scale=2.0)
    assert isinstance(pool.kernel, BlockKernel)
    assert isinstance(pool.kernel_b, BlockKernel)
    rows = np.arange(0, 3000, 7)
    np.testing.assert_array_equal(pool.kernel.rows(rows), ctx.kernel(1.0)[rows])
