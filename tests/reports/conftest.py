"""Small fitted results shared by the report tests (fitted once per session)."""

from __future__ import annotations

from typing import Any

import pytest
from _report_data import frame

import slicewise as sw


@pytest.fixture(scope="session")
def results() -> dict[str, Any]:
    data = frame()
    out: dict[str, Any] = {"frame": data}
    opts = dict(signals=["judge"], label="correct", rng=0)
    out["ordinal"] = sw.profile(data, z="level", kind="ordinal", **opts)
    out["categorical"] = sw.profile(data, z="subject", **opts)
    out["continuous"] = sw.profile(data, z="x", grid=15, **opts)
    return out
