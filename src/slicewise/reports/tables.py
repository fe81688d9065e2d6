"""Every result type as one :class:`slicewise._display.Table`: the model that ``repr`` (text)
and ``_repr_html_`` (Jupyter) both render. Each builder picks the few columns a reader needs
first (the estimate and its interval, the gold-only companion, the labels); ``to_frame()``
has the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from .._display import Table, cells
from .output import TABLE_COLUMNS

if TYPE_CHECKING:
    from ..domains.results import DomainResult, ValidationResult
    from ..models.deploy import DeploymentScore
    from ..models.profiles import ModelProfiles
    from ..models.ranking import ModelRanking
    from ..planning.result import PlanResult
    from ..results import ProfileResult
    from ..selection.cv import SelectionResult
    from ..studies.summary import StudyResult


def frame_table(
    title: str,
    header: Sequence[str],
    frame: pd.DataFrame,
    columns: Sequence[str],
    footer: Sequence[str] = (),
) -> Table:
    """A :class:`Table` of the ``columns`` of ``frame`` that it has, floats to 3 decimals."""
    kept = [c for c in columns if c in frame.columns]
    rows = tuple(cells(list(row)) for row in frame[kept].itertuples(index=False, name=None))
    return Table(title, tuple(header), tuple(kept), rows, tuple(footer))


#: Characters of a note a table's footer shows.
NOTE_CHARS = 110


def _notes(notes: Sequence[str], more: str) -> list[str]:
    """Each note's first sentence (cut at :data:`NOTE_CHARS`), then where the full text is."""
    short = []
    for note in notes:
        first = note.split(". ")[0].rstrip(".")
        short.append(
            f"note: {first if len(first) <= NOTE_CHARS else first[: NOTE_CHARS - 3] + '...'}"
        )
    return [*short, more] if notes else []


PROFILE_COLUMNS = (
    "estimate", "lower", "upper", "se", "naive_estimate", "naive_se", "n_labeled_eff", "borrowed",
)  # fmt: skip


def profile_table(result: ProfileResult) -> Table:
    """A profile: one row per grid point."""
    frame = result.to_frame()
    z = [c for c in frame.columns if c == "z" or c in result.z_names]
    title = (
        f"ProfileResult: {result.method} profile over {', '.join(result.z_names)} ({result.kind});"
        f" target={result.target}; {result.level:.0%} pointwise intervals"
    )
    header = [f"n = {result.n_labeled} labeled of M = {result.n_pool} items"]
    chosen = result.params.get("chosen")
    if chosen is not None:
        header.append(f"auto chose: {chosen}")
    return frame_table(
        title, header, frame, [*z, *PROFILE_COLUMNS], _notes(result.notes, "print(res) for all")
    )


def domain_table(result: DomainResult) -> Table:
    """Design-based domains: one row per domain."""
    frame = result.to_frame()
    title = f"DomainResult: {result.method} estimates of {len(frame)} domains; {result.level:.0%} intervals"
    columns = [
        *[c for c in frame.columns if c in result.domain_names],
        "estimate", "lower", "upper", "se", "direct_estimate", "n_labeled", "n_pool",
        "shrinkage", "borrowed",
    ]  # fmt: skip
    return frame_table(title, [], frame, columns, _notes(result.notes, "print(res) for all"))


def models_table(result: ModelProfiles) -> Table:
    """Several models' profiles: one row per model and grid point."""
    frame = result.to_frame()
    first = result.profiles[0]
    title = (
        f"ModelProfiles: {first.method} profiles of {len(result.models)} models over "
        f"{', '.join(first.z_names)}; {first.level:.0%} pointwise intervals"
    )
    columns = ["model", "z", *first.z_names, "estimate", "lower", "upper", "se", "n_labeled_eff"]
    notes = [
        f"{m}: {n}" for m, p in zip(result.models, result.profiles, strict=True) for n in p.notes
    ]
    return frame_table(
        title, [], frame, list(dict.fromkeys(columns)), _notes(notes, "print(res) for all")
    )


def ranking_table(result: ModelRanking) -> Table:
    """Pairwise gaps with simultaneous intervals: one row per pair and grid point."""
    frame = result.to_frame()
    title = (
        f"ModelRanking: {len(result.pairs)} pairwise gaps of {len(result.models)} models over "
        f"{', '.join(result.z_names)}; {result.level:.0%} simultaneous intervals ({result.correction})"
    )
    header = [f"n = {result.n_labeled} items labeled for every model, of {result.n_pool}"]
    columns = [
        "model_a", "model_b", "z", *result.z_names, "estimate", "se", "lower", "upper",
        "verdict",
    ]  # fmt: skip
    return frame_table(
        title,
        header,
        frame,
        list(dict.fromkeys(columns)),
        _notes(result.notes, "res.notes for all"),
    )


def deploy_table(result: DeploymentScore) -> Table:
    """A deployment-weighted score: one row."""
    title = (
        f"DeploymentScore: {result.method} deployment-weighted score ({result.kind} Z); "
        f"target={result.target}; {result.level:.0%} interval"
    )
    columns = [*TABLE_COLUMNS[:6], "n_labeled", "n_pool"]  # the CLI table's first six
    return frame_table(
        title, [], result.to_frame(), columns, _notes(result.notes, "res.notes for all")
    )


def plan_table(result: PlanResult) -> Table:
    """Labels needed per slice."""
    title = f"PlanResult: {result.method}, target half-width {result.target:g} at level {result.level:g}"
    footer = [
        f"total additional labels: {result.total_more} (recommended), {result.total_uniform} "
        "(uniform)",
        *_notes(result.notes, "res.notes for all"),
    ]
    columns = ["z", "n_labeled", "halfwidth", "n_more", "predicted"]
    return frame_table(title, [], result.to_frame(), columns, footer)


def study_table(result: StudyResult) -> Table:
    """A study's summary table (relative efficiency by method, budget and cell)."""
    frame = result.summary()
    title = f"StudyResult: {len(frame)} rows (method x budget x cell); print(study) for the report"
    return frame_table(title, [], frame, list(frame.columns))


def validation_table(result: ValidationResult) -> Table:
    """Design-based cross-validation scores of every candidate."""
    frame = result.scores()
    title = f"ValidationResult: design-based cross-validation chose {result.selected}"
    return frame_table(title, [], frame, list(frame.columns), ["res.result is the chosen fit"])


def selection_table(result: SelectionResult) -> Table:
    """The candidates of a within-L cross-validation and their mean scores."""
    frame = pd.DataFrame(
        {
            result.parameter: result.grid,
            "mean_score": pd.DataFrame(result.scores).mean(axis=1, skipna=True),
            "chosen": [value == result.chosen for value in result.grid],
        }
    )
    title = f"SelectionResult: {result.method}, {result.parameter} = {result.chosen} chosen"
    return frame_table(
        title, [], frame, list(frame.columns), ["res.result is the refitted profile"]
    )
