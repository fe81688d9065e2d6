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


def test_the_gain_column_agrees_with_the_reported_se(results: dict[str, Any]) -> None:
    """Issue 31: the per-slice table's gain is the variance ratio of the intervals it shows,
    (gold-only se / se)^2, not the asymptotic gain from R^2 (which ignored the small-sample
    factors the se carries); the reports say what it is."""
    from slicewise.reports.text import SLICE_COLUMNS, profile_table

    res = results["categorical"]
    frame = profile_table(res)
    expected = (res.naive_se / frame["se"].to_numpy()) ** 2
    np.testing.assert_allclose(frame["gain"].to_numpy(), expected, rtol=1e-12)
    assert not np.allclose(res.gain, expected, rtol=1e-3)  # the two differ on this design
    assert "gold-only se / se" in SLICE_COLUMNS
    assert "gold-only se / se" in " ".join(str(res).split())
    assert "gold-only se / se" in res.to_html()


def test_the_domain_report_explains_its_method_and_the_own_weight() -> None:
    """Issue 31: the text and HTML domain reports say which estimator ran, in the registry's
    words, and what 'own weight' (the share of the estimate that is the domain's own direct
    estimate) means, next to the table."""
    from slicewise.methods.registry import REGISTRY

    data = frame()
    data["pi"] = 0.25
    dom = sw.domains(data, domain="subject", label="correct", signals=["judge"], method="pp-s")
    described = " ".join(REGISTRY["pp-s"].description.split())
    for shown in (" ".join(str(dom).split()), " ".join(dom.to_html().split())):
        assert "own weight: the share of the reported estimate" in shown
        assert described[:60] in shown
