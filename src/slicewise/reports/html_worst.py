"""The report section "slices where the model is worst, with 95% family-wise confidence"
(:meth:`slicewise.ProfileResult.worst`), for profiles over disjoint slices."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .html import bullets, esc, section, table

if TYPE_CHECKING:
    from ..results import ProfileResult


def worst_section(result: ProfileResult) -> str:
    """The section, or '' for a continuous profile, a gap, or fewer than two slices."""
    if result.kind == "continuous" or result.params.get("estimand") == "gap" or result.size < 2:
        return ""
    worst = result.worst(result.level)
    level = round(result.level * 100)
    names = [str(z) for z in worst.z[worst.candidate]]
    lead = (
        f"<p>All {worst.n_family} intervals below hold together with {level}% confidence "
        f"(Šidák: each at level {1 - worst.per_interval_level:.4f}), so they are wider than the "
        "per-slice ones above. The worst slice (lowest mean) is, with that confidence, one of: "
        f"<strong>{esc('; '.join(names))}</strong>"
        + ("." if len(names) > 1 else " (every other slice is above it).")
        + "</p>"
    )
    frame = worst.to_frame()
    shown = pd.DataFrame(
        {
            "slice": frame["z"],
            "estimate": frame["estimate"],
            "family-wise lower": frame["lower"],
            "family-wise upper": frame["upper"],
            "n labeled (eff)": frame["n_labeled_eff"],
            "could be the worst": frame["could_be_worst"],
        }
    )
    body = lead + table(shown) + (bullets(list(worst.notes)) if worst.notes else "")
    return section(f"Slices where the model is worst, with {level}% family-wise confidence", body)
