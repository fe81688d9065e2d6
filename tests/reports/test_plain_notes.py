"""Notes a user reads say in plain words what happened and what it means; the numbers behind
them stay in ``params`` (and the result's columns)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from _report_data import frame

import slicewise as sw

#: Words of the estimators' internals that a note must not lean on.
JARGON = (
    "b = ",
    "kappa",
    "Fay-Herriot",
    "REML",
    "Satterthwaite",
    "synthetic",
    "naive_se",
    "realized_gain",
    "R^2",
    "control variate",
    "coefficient",
    "cross-fitting",
    "posterior",
    "DB-CV",
    "imputed",
    "item-level",
    "finite-pool",
    "Balance check",
    ": [].",
)


def jargon(notes: tuple[str, ...] | list[str]) -> list[tuple[str, str]]:
    return [(word, note) for note in notes for word in JARGON if word in note]


def test_notes_outside_the_estimators_are_plain(many: dict[str, Any]) -> None:
    data = frame()
    data.loc[:29, "judge"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missing = sw.profile(data, z="level", kind="ordinal", signals=["judge"], label="correct")
        budget = sw.plan(frame(), z="subject", signals=["judge"], rng=0)
        small = frame()
        small["pi"] = 0.25
        small.loc[small["subject"] == "drama", "correct"] = np.nan
        small.loc[small.index[small["subject"] == "drama"][:5], "correct"] = 1.0
        domains = sw.domains(small, domain="subject", label="correct", method="ht")
    (imputed,) = [n for n in missing.notes if "missing values" in n]
    assert "cannot bias the estimate" in imputed
    assert "No gold label yet" in budget.notes[0]
    assert "0% (column n_more) and 50% (n_more_optimistic)" in budget.notes[0]
    (few,) = [n for n in domains.notes if "fewer than 10 labels" in n]
    assert "borrows strength from the other domains" in few
    gap = many["gap"].notes[0]
    assert (
        gap
        == "Gap a - b from the 145 item(s) graded for both models, among the 600 item(s) both were evaluated on."
    )
    assert jargon([imputed, *budget.notes, few, gap]) == []


def test_profile_notes_are_plain(results: dict[str, Any]) -> None:
    data = frame()
    res = sw.profile(data, z="subject", signals=["judge"], label="correct", rng=0)
    notes = [*res.notes, *results["ordinal"].notes, *results["continuous"].notes]
    assert jargon(notes) == []


def test_every_methods_notes_are_plain() -> None:
    """Every registered profile method, on a continuous and a categorical profile (smoothing
    asked of lace on the categorical one)."""
    rng = np.random.default_rng(0)
    n = 1500
    z = rng.uniform(0, 1, n)
    y = (rng.random(n) < 0.3 + 0.5 * z).astype(float)
    data = pd.DataFrame(
        {"z": z, "g": (z * 5).astype(int), "judge": y + rng.normal(0, 0.6, n), "y": y}
    )
    data["conf"] = rng.normal(size=n)
    data.loc[300:, "y"] = np.nan
    found = []
    checked = 0
    listing = sw.methods("profile")
    for method, needs in zip(listing["method"], listing["needs"], strict=True):
        if "coef" in needs:
            continue
        for z_col, kind in (("z", "continuous"), ("g", "categorical")):
            if kind == "categorical" and "continuous" in needs:
                continue
            if kind == "continuous" and "categorical" in needs:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = sw.profile(
                    data,
                    z=z_col,
                    kind=kind,
                    signals=["judge", "conf"],
                    label="y",
                    method=method,
                    primary="judge",
                    smooth="fh" if (method == "lace" and kind == "categorical") else "auto",
                )
            found += [(method, kind, word) for word, _ in jargon(res.notes)]
            checked += 1
    assert checked >= 25
    assert found == []
