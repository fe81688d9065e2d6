"""sw.methods(): every method of both entry points, each with what it needs."""

from __future__ import annotations

import pytest

import slicewise as sw
from slicewise.methods.registry import METHODS
from slicewise.smoothing.domains import METHODS as DOMAIN_METHODS


def test_lists_every_profile_and_every_domain_method_once() -> None:
    table = sw.methods()
    assert table["method"].is_unique
    profile = table[table["entry_point"] == "profile"]
    domains = table[table["entry_point"] == "domains"]
    assert list(profile["method"]) == list(METHODS)
    assert tuple(domains["method"]) == DOMAIN_METHODS
    assert len(table) == len(METHODS) + len(DOMAIN_METHODS)
    assert table.columns[:4].tolist() == ["method", "entry_point", "description", "needs"]


def test_filter_by_entry_point_and_needs() -> None:
    assert sw.methods("profile").equals(sw.methods()[sw.methods()["entry_point"] == "profile"])
    domains = sw.methods("domains").set_index("method")
    assert domains.loc["pp-ts", "needs"] == "taxonomy"
    assert domains.loc["greg", "needs"] == "signals"
    assert domains.loc["ht", "needs"] == "-"
    assert domains["inclusion"].all()
    with pytest.raises(ValueError, match=r"'entry_point' parameter of methods"):
        sw.methods("domain")  # type: ignore[arg-type]
