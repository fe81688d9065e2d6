"""Small fitted results shared by the report tests (fitted once per session)."""

from __future__ import annotations

from typing import Any

import pytest
from _report_data import frame, three_models

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


@pytest.fixture(scope="session")
def many() -> dict[str, Any]:
    """Multi-model results, a gap, deployment scores and a plan on the categorical 'subject'."""
    data = three_models()
    opts: dict[str, Any] = dict(
        z="subject", signals=["judge"], label="correct", model="model", id="item", rng=0
    )
    out: dict[str, Any] = {"frame": data}
    out["models"] = sw.profile_models(data, **opts)
    out["models_ordinal"] = sw.profile_models(data, **{**opts, "z": "level", "kind": "ordinal"})
    out["gap"] = sw.gap(data, model_a="a", model_b="b", **opts)
    out["ranking"] = sw.rank_models(data, method="lace", **opts)
    mix = {"algebra": 0.5, "biology": 0.3, "chemistry": 0.1, "drama": 0.1}
    out["deploy"] = {
        m: sw.deployment_score(
            data[data["model"] == m],
            z="subject",
            signals=["judge"],
            label="correct",
            deploy=mix,
            method="lace",
        )
        for m in ("a", "b", "c")
    }
    out["mix"] = mix
    out["plan"] = sw.plan(frame(), z="subject", signals=["judge"], label="correct", rng=0)
    return out
