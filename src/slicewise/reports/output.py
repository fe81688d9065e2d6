"""Readable tables and output files (CSV, JSON, PNG) for profile results."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray
from ..results import ProfileResult

TABLE_COLUMNS = [
    "estimate",
    "lower",
    "upper",
    "se",
    "naive_estimate",
    "naive_se",
    "n_labeled_eff",
    "r2",
    "gain",
]


def format_table(
    result: ProfileResult, *, truth: FloatArray | None = None, bounded: bool | None = None
) -> str:
    """A fixed-width text table of the profile, one row per grid point.

    ``bounded``: as in :meth:`ProfileResult.ci` (default: Wilson-type for labels in [0, 1]).
    """
    frame = result.to_frame(bounded=bounded)
    z_cols = list(result.z_frame().columns)
    shown = frame[z_cols + TABLE_COLUMNS].copy()
    if truth is not None:
        shown.insert(len(z_cols), "truth", np.asarray(truth, dtype=float))
    if result.borrowed.any():
        shown["borrowed"] = np.where(result.borrowed, "yes", "")
    formatters: dict[str, Any] = {
        c: (lambda v: "" if not math.isfinite(v) else f"{v:.3f}")
        for c in shown.columns
        if c not in z_cols and c != "borrowed"
    }
    formatters["n_labeled_eff"] = lambda v: f"{v:.1f}"
    for c in z_cols:
        if all(isinstance(v, float) for v in shown[c]):
            formatters[c] = lambda v: f"{float(v):.4g}"
    level = round(result.level * 100)
    header = (
        f"{result.method} profile over {', '.join(result.z_names)} ({result.kind}); "
        f"target={result.target}; {level}% pointwise intervals"
        f"{' (Wilson-type, inside [0, 1])' if result.bounded_intervals(bounded) else ''}; "
        f"n={result.n_labeled} labeled of M={result.n_pool}"
    )
    return header + "\n" + shown.to_string(index=False, formatters=formatters, na_rep="")


def write_outputs(
    result: ProfileResult,
    out_dir: str | Path,
    *,
    stem: str = "profile",
    truth: FloatArray | None = None,
    label: str | None = None,
    zero_line: bool | None = None,
    bounded: bool | None = None,
) -> list[Path]:
    """Write ``<stem>.csv``, ``<stem>.json`` and (with matplotlib) ``<stem>.png`` into ``out_dir``.

    Returns the written paths; the PNG is skipped, and not listed, when matplotlib is missing.
    ``label`` names the value axis; ``zero_line`` (default: for a gap, ``stem='gap'``) marks 0;
    ``bounded`` chooses the intervals as in :meth:`ProfileResult.ci` (default: Wilson-type,
    inside [0, 1], for labels in [0, 1]).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame = result.to_frame(bounded=bounded)
    if truth is not None:
        frame.insert(1, "truth", np.asarray(truth, dtype=float))
    csv_path = out / f"{stem}.csv"
    frame.to_csv(csv_path, index=False)
    json_path = out / f"{stem}.json"
    payload = {
        **result.to_dict(),
        "bounded": result.bounded_intervals(bounded),
        "rows": _records(frame),
    }
    json_path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    written = [csv_path, json_path]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return written
    from .plot import new_axes, plot_profile

    height = 0.3 * result.size + 1.2 if result.kind == "categorical" else 3.6
    fig, axes = new_axes(width=6.4, height=min(max(height, 2.5), 40.0))
    plot_profile(
        result,
        ax=axes[0],
        naive=True,
        truth=truth,
        ylabel=label,
        zero_line=stem == "gap" if zero_line is None else zero_line,
    )
    png_path = out / f"{stem}.png"
    fig.savefig(png_path, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    written.append(png_path)
    return written


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for record in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in record.items():
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            clean[str(key)] = value
        rows.append(clean)
    return rows
