"""sw.methods(): every method of both entry points, each once with what it needs."""

from __future__ import annotations

import pytest

import slicewise as sw
from slicewise.domains.fit import DIRECT
from slicewise.domains.fit import METHODS as DOMAIN_METHODS
from slicewise.methods.registry import METHODS


def test_lists_every_profile_and_every_domain_method_once() -> None:
    table = sw.methods()
    assert table["method"].is_unique
    where = {
        m: set(e.split(", ")) for m, e in zip(table["method"], table["entry_point"], strict=True)
    }
    profile = [m for m in table["method"] if "profile" in where[m]]
    domains = [m for m in table["method"] if "domains" in where[m]]
    assert profile == list(METHODS)
    assert tuple(domains) == DOMAIN_METHODS
    # the design-based direct estimators are methods of both entry points, listed once
    assert {m for m in table["method"] if where[m] == {"profile", "domains"}} == set(DIRECT)
    assert len(table) == len(set(METHODS) | set(DOMAIN_METHODS))
    assert table.columns[:4].tolist() == ["method", "entry_point", "description", "needs"]


def test_filter_by_entry_point_and_needs() -> None:
    full = sw.methods()
    profile = sw.methods("profile")
    assert profile["method"].tolist() == list(METHODS)
    assert profile.equals(full[full["entry_point"].str.contains("profile")].reset_index(drop=True))
    domains = sw.methods("domains").set_index("method")
    assert domains.loc["pp-ts", "needs"] == "taxonomy"
    assert domains.loc["greg", "needs"] == "signals, categorical"
    assert domains.loc["ht", "needs"] == "categorical"
    assert domains.loc["fh", "needs"] == "-"
    assert domains["inclusion"].all()
    with pytest.raises(ValueError, match=r"'entry_point' parameter of methods"):
        sw.methods("domain")  # type: ignore[arg-type]
