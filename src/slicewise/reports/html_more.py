"""Self-contained HTML reports of pairwise rankings, deployment-weighted scores and labeling
plans, built from the parts of :mod:`slicewise.reports.html` (inline CSS and SVG, no network).

Profiles, gaps and cascades are :class:`~slicewise.results.ProfileResult` objects and use
:func:`slicewise.reports.html.profile_html`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .html import (
    PathLike,
    bullets,
    figure,
    key_values,
    page,
    reproduce,
    section,
    svg_figure,
    table,
    write,
)

if TYPE_CHECKING:
    from ..models.deploy import DeploymentScore
    from ..models.ranking import ModelRanking
    from ..planning.result import PlanResult


def _metric(label: str | None) -> str:
    return f"mean {label}" if label else "the mean gold label"


def _data_rows(context: dict[str, object]) -> list[tuple[str, object]]:
    return [(k.capitalize(), context.pop(k)) for k in ("data", "label", "signals") if k in context]


def _z_columns(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    if "z" in frame.columns and len(names) == 1:
        frame = frame.rename(columns={"z": names[0]})
    return frame


def ranking_html(
    result: ModelRanking,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of :func:`slicewise.rank_models`: every pairwise gap with simultaneous
    intervals, the verdicts and the rank ranges per slice."""
    from .plot_models import plot_ranking

    axis = ", ".join(result.z_names)
    title = title or f"Which model is better where: {len(result.models)} models by {axis}"
    lead = (
        f"Gaps in {_metric(label)} between every pair of models ({', '.join(result.models)}), "
        f"with {round(result.level * 100)}% simultaneous intervals: all "
        f"{result.n_family} intervals hold together, so every verdict below can be read at once."
    )
    rows = result.z.shape[0] if result.kind == "categorical" else 0
    svg = svg_figure(
        lambda ax: plot_ranking(result, ax=ax, label=label),
        height=min(max(2.8, (0.25 + 0.1 * len(result.pairs)) * rows + 1.2), 30.0) if rows else 3.6,
    )
    gaps = _z_columns(result.to_frame(), result.z_names)
    resolved = gaps[gaps["verdict"] != "unresolved"]
    verdicts = [
        f"{row['verdict']} at {', '.join(str(row[c]) for c in result.z_names)}"
        for _, row in resolved.iterrows()
    ]
    if not verdicts:
        verdicts = ["No pair differs clearly at any slice: every interval contains 0."]
    gaps = gaps.drop(columns=["df", "pointwise_lower", "pointwise_upper"])
    ranks = _z_columns(result.rank_frame(), result.z_names)
    ctx = dict(context or {})
    data = [
        *_data_rows(ctx),
        ("Models", ", ".join(result.models)),
        ("Items labeled for every model", f"{result.n_labeled} of {result.n_pool}"),
        ("Profile axis", f"{axis} ({result.kind})"),
        ("Method", result.method),
        ("Simultaneous correction", result.correction),
    ]
    sections = [
        figure(svg, "Each pair's gap a - b with its simultaneous interval; 0 means no difference."),
        section("Clear differences", bullets(verdicts)),
        section("Pairwise gaps", table(gaps)),
        section(
            "Rank ranges per slice",
            "<p>rank_best..rank_worst: every rank the model can hold given the intervals "
            "(1 is best).</p>" + table(ranks),
        ),
        section("Data", key_values(data)),
        section("Notes from the estimator", bullets(list(result.notes))),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def deploy_html(
    scores: Mapping[str, DeploymentScore],
    path: PathLike | None = None,
    *,
    deploy: Any = None,
    by_model: bool | None = None,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of deployment-weighted scores (:func:`slicewise.deployment_score`), one
    per model: each score with its interval and the gold-only one, and each level's share.

    ``by_model``: the keys of ``scores`` are model names (default: when there are several).
    """
    from .model_output import cells_frame, deploy_frame, describe_deploy
    from .plot_models import plot_deploy

    first = next(iter(scores.values()))
    by_model = len(scores) > 1 if by_model is None else by_model
    title = title or f"Expected {_metric(label)} under your deployment mix"
    mix = describe_deploy(deploy) if deploy is not None else "as given"
    lead = (
        f"Each profile level weighted by how often it occurs in deployment ({mix}), with "
        f"{round(first.level * 100)}% intervals ({first.method}); the gold-only score weights "
        "the labels alone the same way."
    )
    svg = svg_figure(
        lambda ax: plot_deploy(scores, ax=ax, label=label),
        height=min(max(2.4, 0.45 * len(scores) + 1.2), 20.0),
    )
    frame = deploy_frame(scores, by_model=by_model).drop(columns=["method", "target"])
    frame = frame.rename(columns={"naive_estimate": "gold-only", "naive_se": "gold-only se"})
    cells = cells_frame(scores, by_model=by_model).rename(columns={"cell": "level"})
    ctx = dict(context or {})
    data = [*_data_rows(ctx), ("Deployment mix", mix)]
    data += [
        (f"{name}: gold labels" if by_model else "Gold labels", f"{s.n_labeled} of {s.n_pool}")
        for name, s in scores.items()
    ]
    notes = list(dict.fromkeys(n for s in scores.values() for n in s.notes))
    sections = [
        figure(svg, "Deployment-weighted score and the gold-only one, with their intervals."),
        section("Scores", table(frame)),
        section("Each level's share of the score", table(cells)),
        section("Data", key_values(data)),
        section("Notes from the estimator", bullets(notes)),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def plan_html(
    result: PlanResult,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of :func:`slicewise.plan`: labels each slice still needs for the target
    half-width, now and after labeling."""
    from .plot_plan import plot_plan

    axis = ", ".join(result.z_names)
    title = title or f"How many more gold labels, by {axis}"
    lead = (
        f"Labels to add so that every slice's {round(result.level * 100)}% interval is at most "
        f"+/- {result.target:g} ({result.method}): {result.total_more} in all when each slice "
        f"gets its own share, {result.total_uniform} if they were spread uniformly."
    )
    z = np.asarray(result.z)
    rows = result.size if z.ndim == 1 and z.dtype.kind not in "fiu" else 0
    svg = svg_figure(
        lambda ax: plot_plan(result, ax=ax),
        height=min(max(2.8, 0.3 * rows + 1.2), 30.0) if rows else 3.6,
    )
    frame = _z_columns(result.to_frame(), result.z_names).rename(
        columns={
            "n_labeled": "n labeled (eff) now",
            "halfwidth": "half-width now",
            "n_more": "labels to add",
            "n_more_optimistic": "labels to add (optimistic)",
            "predicted": "half-width after",
            "sigma": "sd per label",
        }
    )
    short = [
        f"{', '.join(str(v) for v in np.atleast_1d(zv))}: +{int(more)}"
        for zv, more in zip(z, result.n_more, strict=True)
        if more > 0
    ]
    ctx = dict(context or {})
    data = [
        *_data_rows(ctx),
        ("Profile axis", axis),
        ("Slices", result.size),
        ("Target half-width", f"{result.target:g} at {round(result.level * 100)}%"),
    ]
    if label:
        data.append(("Label", label))
    sections = [
        figure(svg, "Each slice's half-width now and after its labels, against the target."),
        section(
            "Labels to add",
            bullets(short or ["None: every slice already meets the target."]),
        ),
        section("Per slice", table(frame)),
        section("Data", key_values(data)),
        section("Notes from the planner", bullets(list(result.notes))),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)
