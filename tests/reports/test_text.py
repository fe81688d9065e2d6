"""Readable text summaries: print(result) says what was estimated, how, per slice, warnings."""

from __future__ import annotations

from typing import Any

import numpy as np
from _report_data import frame

import slicewise as sw


def test_profile_str_is_a_readable_summary(results: dict[str, Any]) -> None:
    res = results["categorical"]
    text = str(res)
    assert text == res.summary()
    assert "ProfileResult(" not in text
    for piece in ("Profile estimate", "Estimated", "Gold labels", "Method", "Why this method"):
        assert piece in text
    for name in ("algebra", "biology", "chemistry", "drama"):
        assert name in text
    for column in ("gold-only", "R^2", "gain"):
        assert column in text
    for note in res.notes:  # every estimator note is kept (wrapped), word for word
        assert note.split()[0] in text


def test_auto_choice_is_explained_in_plain_words(results: dict[str, Any]) -> None:
    res = results["ordinal"]
    text = res.summary()
    assert "The default method (auto)" in text
    assert "kappa" not in text.split("Details (estimator notes):")[0]


def test_dict_description_moved_to_to_dict(results: dict[str, Any]) -> None:
    res = results["ordinal"]
    described = res.to_dict()
    assert described["method"] == "auto"
    assert described["n_pool"] == 600
    assert res.summary()["method"] == "auto"  # old dict-style key look-ups still read it


def test_sparse_slices_are_warned_about(results: dict[str, Any]) -> None:
    res = results["continuous"]
    text = res.summary()
    if np.any(res.n_labeled_eff < 10):
        assert "fewer than 10 effective gold labels" in text


def test_domain_and_models_summaries() -> None:
    data = frame()
    data["pi"] = 0.25
    dom = sw.domains(data, domain="subject", label="correct", signals=["judge"], method="ppi")
    text = str(dom)
    assert "Domain estimates" in text
    assert "algebra" in text
    assert dom.to_dict()["method"] == "ppi"
