"""Readable tables and output files for several models.

Per-model profiles (:class:`~slicewise.models.profiles.ModelProfiles`), rankings
(:class:`~slicewise.models.ranking.ModelRanking`), deployment-weighted scores
(:class:`~slicewise.models.deploy.DeploymentScore`, one per model) and the cascade's break-even advice
(:class:`~slicewise.models.cascade.CascadePlan`). Each writer puts ``<stem>.csv`` and ``<stem>.json``
(and, with matplotlib, ``<stem>.png``) into a directory and returns the written paths.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import _jsonable, normal_interval
from .output import TABLE_COLUMNS, _records

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..models.cascade import CascadePlan
    from ..models.deploy import DeploymentScore
    from ..models.profiles import ModelProfiles
    from ..models.ranking import ModelRanking
    from ..results import ProfileResult


def _number(value: Any) -> str:
    return "" if not math.isfinite(float(value)) else f"{float(value):.3f}"


def text_table(frame: pd.DataFrame, *, plain: Sequence[str] = ()) -> str:
    """Fixed-width text: floats to 3 decimals (blank when not finite), float Z to 4 digits."""
    formatters: dict[str, Any] = {}
    for column in frame.columns:
        values = frame[column]
        if column in plain or not pd.api.types.is_float_dtype(values):
            if len(values) and all(isinstance(v, float) for v in values):
                formatters[column] = lambda v: f"{float(v):.4g}"
            continue
        formatters[column] = (lambda v: f"{v:.1f}") if column == "n_labeled_eff" else _number
    return frame.to_string(index=False, formatters=formatters, na_rep="")


def _save_png(path: Path, draw: Callable[[Axes], object], *, rows: int = 0) -> list[Path]:
    """Draw on a new figure and save it; nothing (an empty list) without matplotlib.

    ``rows``: the number of rows of a horizontal forest plot, which sets the figure's height.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return []
    import matplotlib.pyplot as plt

    from .plot import forest_height, new_axes

    fig, axes = new_axes(height=forest_height(rows) if rows else 3.6)
    draw(axes[0])
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [path]


def _write(
    out_dir: str | Path, stem: str, frames: Mapping[str, pd.DataFrame], payload: dict[str, Any]
) -> tuple[Path, list[Path]]:
    """Write each frame as ``<name>.csv`` and ``payload`` as ``<stem>.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in frames.items():
        path = out / f"{name}.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    json_path = out / f"{stem}.json"
    json_path.write_text(json.dumps(payload, indent=2, allow_nan=False) + "\n")
    return out, [*written, json_path]


def format_models(result: ModelProfiles) -> str:
    """One text table of every model's profile: one row per (model, grid point)."""
    frame = result.to_frame()
    z_cols = list(frame.columns[1 : frame.columns.get_loc("estimate")])
    shown = frame[["model", *z_cols, *TABLE_COLUMNS]].copy()
    if any(p.borrowed.any() for p in result.profiles):
        shown["borrowed"] = np.where(frame["borrowed"], "yes", "")
    sizes = ", ".join(
        f"{name} {p.n_labeled}/{p.n_pool}"
        for name, p in zip(result.models, result.profiles, strict=True)
    )
    header = (
        f"{result.method} profiles of {len(result)} models over {', '.join(result.z_names)} "
        f"({result.kind}); target={result.target}; {round(result.level * 100)}% pointwise "
        f"intervals\nlabeled/pool items per model: {sizes}"
    )
    return header + "\n" + text_table(shown, plain=["model", *z_cols])


def write_models(
    result: ModelProfiles, out_dir: str | Path, *, stem: str = "profiles"
) -> list[Path]:
    """Write ``<stem>.csv`` (the tidy :meth:`ModelProfiles.to_frame`), ``.json`` and ``.png``."""
    frame = result.to_frame()
    payload = {
        "method": result.method,
        "target": result.target,
        "level": result.level,
        "kind": result.kind,
        "z": list(result.z_names),
        "models": list(result.models),
        "per_model": _jsonable(result.to_dict()),
        "rows": _records(frame),
    }
    out, written = _write(out_dir, stem, {stem: frame}, payload)
    rows = result.profiles[0].size if result.kind == "categorical" else 0
    return written + _save_png(out / f"{stem}.png", lambda ax: result.plot(ax), rows=rows)


def format_ranking(result: ModelRanking) -> str:
    """Pairwise gaps with simultaneous intervals, then the ranking view per grid point."""
    crit = result.critical_value()
    alpha_star = result.per_interval_level()
    pointwise = float(normal_interval(np.zeros(1), np.ones(1), result.level).high[0])
    z_cols = list(result._z_frame().columns)
    gaps = result.to_frame()[
        ["model_a", "model_b", *z_cols, "estimate", "lower", "upper", "se", "df", "verdict"]
    ]
    ranks = result.rank_frame()[
        [*z_cols, "model", "score", "rank_best", "rank_worst", "wins", "losses"]
    ]
    header = (
        f"Pairwise gaps a - b ({result.method}, paired signals "
        f"{result.params.get('paired_signals')}) over {', '.join(result.z_names)} "
        f"({result.kind}); target={result.target}\n{round(result.level * 100)}% simultaneous "
        f"intervals ({result.correction}): each at level {1 - alpha_star:.5f} with Student t on "
        f"its df (critical value {crit:.3f} for a normal interval; pointwise: {pointwise:.3f}) "
        f"over {result.n_family} intervals; n={result.n_labeled} items labeled for every "
        f"model of M={result.n_pool}"
    )
    ranking = (
        "Ranks at each grid point (higher theta is better; rank_best..rank_worst hold jointly "
        "at the simultaneous level):"
    )
    return "\n".join(
        [
            header,
            text_table(gaps, plain=["model_a", "model_b", *z_cols, "verdict"]),
            "",
            ranking,
            text_table(ranks, plain=[*z_cols, "model"]),
        ]
    )


def write_ranking(
    result: ModelRanking, out_dir: str | Path, *, stem: str = "ranking"
) -> list[Path]:
    """Write ``<stem>.csv``, ``ranks.csv``, ``<stem>.json`` and ``<stem>.png``.

    The CSV files are :meth:`ModelRanking.to_frame` and :meth:`ModelRanking.rank_frame`; the JSON
    holds both, the critical value and the notes.
    """
    from .plot_models import plot_ranking

    gaps, ranks = result.to_frame(), result.rank_frame()
    payload = {
        "models": list(result.models),
        "pairs": [list(p) for p in result.pairs],
        "method": result.method,
        "target": result.target,
        "level": result.level,
        "kind": result.kind,
        "z": list(result.z_names),
        "correction": result.correction,
        "critical_value": result.critical_value(),
        "per_interval_level": 1.0 - result.per_interval_level(),
        "n_family": result.n_family,
        "n_labeled": result.n_labeled,
        "n_pool": result.n_pool,
        "params": _jsonable(dict(result.params)),
        "notes": list(result.notes),
        "rows": _records(gaps),
        "ranks": _records(ranks),
    }
    out, written = _write(out_dir, stem, {stem: gaps, "ranks": ranks}, payload)
    rows = result.z.shape[0] if result.kind == "categorical" else 0
    return written + _save_png(
        out / f"{stem}.png", lambda ax: plot_ranking(result, ax=ax), rows=rows
    )


def deploy_frame(scores: Mapping[str, DeploymentScore], *, by_model: bool) -> pd.DataFrame:
    """One row per score (:meth:`DeploymentScore.to_frame`), led by a ``model`` column."""
    frames = [s.to_frame() for s in scores.values()]
    frame = pd.concat(frames, ignore_index=True)
    if by_model:
        frame.insert(0, "model", list(scores))
    return frame


def cells_frame(scores: Mapping[str, DeploymentScore], *, by_model: bool) -> pd.DataFrame:
    """Every score's per-level contributions (:meth:`DeploymentScore.contributions`)."""
    frames = []
    for name, score in scores.items():
        cells = score.contributions()
        if by_model:
            cells.insert(0, "model", name)
        frames.append(cells)
    return pd.concat(frames, ignore_index=True)


def describe_deploy(deploy: Any) -> str:
    """The deployment mix as read by :func:`slicewise.read_deploy`, in one line."""
    if isinstance(deploy, Mapping):
        return ", ".join(f"{k}={float(v):g}" for k, v in deploy.items())
    return f"a sample of {np.asarray(deploy).shape[0]} deployment Z values"


def format_deploy(scores: Mapping[str, DeploymentScore], *, deploy: Any, by_model: bool) -> str:
    """Scores with intervals (one row per model), then each level's weight and contribution."""
    first = next(iter(scores.values()))
    header = (
        f"Deployment-weighted score ({first.method}, {first.kind} Z); target={first.target}; "
        f"{round(first.level * 100)}% intervals\ndeployment mix Q: {describe_deploy(deploy)}"
    )
    frame = deploy_frame(scores, by_model=by_model).drop(columns=["method", "target"])
    order = ["estimate", "lower", "upper", "se", "naive_estimate", "naive_se"]
    frame = frame[[*(["model"] if by_model else []), *order, "n_labeled", "n_pool"]]
    cells = cells_frame(scores, by_model=by_model)
    return "\n".join(
        [
            header,
            text_table(frame, plain=["model"]),
            "",
            "Per level: deployment weight, profile estimate and its share of the score:",
            text_table(cells, plain=["model", "cell"]),
        ]
    )


def write_deploy(
    scores: Mapping[str, DeploymentScore],
    out_dir: str | Path,
    *,
    deploy: Any,
    by_model: bool,
    stem: str = "deploy",
) -> list[Path]:
    """Write ``<stem>.csv`` (one row per score), ``<stem>_cells.csv``, ``.json`` and ``.png``."""
    from .plot_models import plot_deploy

    frame = deploy_frame(scores, by_model=by_model)
    cells = cells_frame(scores, by_model=by_model)
    payload = {
        "deploy": _jsonable(deploy if isinstance(deploy, Mapping) else np.asarray(deploy)),
        "scores": [
            {
                **({"model": name} if by_model else {}),
                **_records(s.to_frame())[0],
                "level": s.level,
                "kind": s.kind,
                "params": _jsonable(dict(s.params)),
                "notes": list(s.notes),
                "cells": _records(s.contributions()),
            }
            for name, s in scores.items()
        ],
        "rows": _records(frame),
    }
    out, written = _write(out_dir, stem, {stem: frame, f"{stem}_cells": cells}, payload)
    return written + _save_png(
        out / f"{stem}.png", lambda ax: plot_deploy(scores, ax=ax), rows=len(scores)
    )


def plan_frame(result: ProfileResult, plan: CascadePlan, finite: np.ndarray) -> pd.DataFrame:
    """Per grid point: the cascade's local R^2 values and the break-even advice.

    ``plan`` covers the grid points in ``finite``; elsewhere the R^2 values are not finite and the
    advice columns are NaN (``pays`` empty).
    """
    frame = result.z_frame()
    frame["r2_y_xs"] = np.asarray(result.params["r2_y_xs"], dtype=np.float64)
    frame["r2_y_s"] = np.asarray(result.params["r2_y_s"], dtype=np.float64)
    advice = plan.to_frame()
    for column in ("cost_ratio", "break_even", "rater_per_label", "efficiency"):
        values = np.full(result.size, np.nan)
        values[finite] = advice[column].to_numpy(dtype=np.float64)
        frame[column] = values
    pays = np.full(result.size, "", dtype=object)
    pays[finite] = np.where(advice["pays"].to_numpy(dtype=bool), "yes", "no")
    frame["pays"] = pays
    return frame


def format_plan(frame: pd.DataFrame, *, cost_rater: float, cost_label: float) -> str:
    """The break-even table and a one-line verdict."""
    z_cols = list(frame.columns[: frame.columns.get_loc("r2_y_xs")])
    pays = frame["pays"] == "yes"
    judged = int((frame["pays"] != "").sum())
    rho = cost_rater / cost_label
    header = (
        f"Does the rater pay for itself? cost ratio rho = {cost_rater:g} / {cost_label:g} = "
        f"{rho:.4g}; it pays where rho < break_even"
    )
    if pays.any():
        best = float(frame.loc[pays, "efficiency"].max())
        verdict = (
            f"-> the rater pays at {int(pays.sum())} of {judged} grid points; there the optimal "
            f"cascade is up to {best:.2f}x as efficient as two-level LACE at equal budget."
        )
    else:
        verdict = (
            f"-> the rater pays at none of the {judged} grid points at this cost ratio: spend the "
            "budget on gold labels (two-level LACE)."
        )
    return "\n".join([header, text_table(frame, plain=[*z_cols, "pays"]), verdict])


def write_plan(frame: pd.DataFrame, out_dir: str | Path, *, stem: str = "break_even") -> list[Path]:
    """Write ``<stem>.csv`` and ``<stem>.json`` (the rows of :func:`plan_frame`)."""
    _, written = _write(out_dir, stem, {stem: frame}, {"rows": _records(frame)})
    return written
