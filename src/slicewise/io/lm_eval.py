"""Read lm-evaluation-harness per-sample logs (``--log_samples``) into an item table.

``lm_eval ... --log_samples --output_path OUT`` writes, under ``OUT/<model>/``, one
``samples_<task>_<timestamp>.jsonl`` file per task and one ``results_<timestamp>.json``.
Each line of a samples file is one document *under one filter*: a task with filters
"strict-match" and "flexible-extract" has two lines per document, whose metric values
differ. This reader never mixes them: it reads exactly one filter per task.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from slicewise.io._common import (
    LogReadWarning,
    PathInput,
    as_path_list,
    find_files,
    format_examples,
    is_scalar_json,
    not_text,
    read_json_object,
    select_names,
    tagged_columns,
)

__all__ = ["read_lm_eval"]

_METRIC = "\0metric:"  # marks internal row keys; stripped when the frame is built

_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T[0-9.\-]+)\.jsonl$")
# Keys of a sample line that are not metrics (lm-eval 0.4.x), used when a line has no
# "metrics" list (older versions).
_NON_METRIC_KEYS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "filter",
        "metrics",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "task_name",
    }
)
_BASE_COLUMNS = ("item_id", "task", "model", "filter", "log")


def _task_of(path: Path) -> str:
    match = _SAMPLES_NAME.match(path.name)
    if match is not None:
        return match.group("task")
    stem = path.stem
    return stem[len("samples_") :] if stem.startswith("samples_") else stem


def _read_lines(path: Path) -> list[Mapping[str, Any]]:
    try:
        return _parse_lines(path)
    except UnicodeDecodeError as exc:
        raise not_text(path, "lm-eval samples file", exc) from None


def _parse_lines(path: Path) -> list[Mapping[str, Any]]:
    lines: list[Mapping[str, Any]] = []
    with path.open("r", encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"lm-eval samples file '{path}' line {number} is not valid JSON: {exc}."
                ) from exc
            if not isinstance(value, dict) or "doc_id" not in value:
                raise ValueError(
                    f"lm-eval samples file '{path}' line {number} is not a sample record "
                    "(a JSON object with a 'doc_id' key)."
                )
            lines.append(value)
    return lines


def _model_of(path: Path) -> str | None:
    """Model name from the results file written next to a samples file, if any."""
    match = _SAMPLES_NAME.match(path.name)
    candidates: list[Path] = []
    if match is not None:
        same_run = path.parent / f"results_{match.group('stamp')}.json"
        if same_run.is_file():
            candidates = [same_run]
    if not candidates:
        others = sorted(path.parent.glob("results_*.json"))
        if len(others) == 1:
            candidates = others
    if not candidates:
        return None
    results = read_json_object(candidates[0], what="lm-eval results file")
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = results.get("config")
    if isinstance(config, dict) and isinstance(config.get("model"), str):
        return str(config["model"])
    return None


def _flatten_doc(doc: Any, prefix: str, out: dict[str, Any]) -> None:
    if not isinstance(doc, dict):
        return
    for key, value in doc.items():
        if isinstance(value, dict):
            _flatten_doc(value, f"{prefix}{key}.", out)
        elif is_scalar_json(value):
            out[f"{prefix}{key}"] = value


def _metric_names(lines: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for line in lines:
        declared = line.get("metrics")
        if isinstance(declared, list):
            for name in declared:
                names.setdefault(str(name), None)
        else:
            for key in line:
                if key not in _NON_METRIC_KEYS:
                    names.setdefault(str(key), None)
    return list(names)


def _as_number(value: Any) -> float | None:
    """Float value of a per-sample metric, NaN for null, None if not a number."""
    if value is None:
        return math.nan
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def _choose_filter(
    path: Path,
    task: str,
    filters: Sequence[str],
    wanted: str | Mapping[str, str] | None,
) -> str:
    listed = format_examples(filters, limit=50)
    if isinstance(wanted, Mapping) and task in wanted:
        choice = wanted[task]
        if choice not in filters:
            raise ValueError(
                f"`filter` maps task '{task}' to '{choice}', which is not in '{path.name}'; "
                f"its filters are: {listed}."
            )
        return choice
    if isinstance(wanted, str) and wanted in filters:
        return wanted
    if len(filters) == 1:
        return filters[0]
    hint = (
        f"filter='{filters[0]}'"
        if wanted is None
        else f"filter={{'{task}': '{filters[0]}', ...}} to choose per task"
    )
    raise ValueError(
        f"lm-eval task '{task}' in '{path.name}' has {len(filters)} filters ({listed}) and "
        f"`filter` is {wanted!r}; the filters give different metric values, so pick one, "
        f"e.g. {hint}."
    )


def _read_lm_eval(
    paths: PathInput,
    *,
    metric: str | Sequence[str] | None = None,
    filter: str | Mapping[str, str] | None = None,
    stacklevel: int,
) -> pd.DataFrame:
    """Implement :func:`read_lm_eval`; ``stacklevel`` locates the user's frame for warnings."""
    files = find_files(
        as_path_list(paths), ["samples_*.jsonl"], what="lm-eval samples files (samples_*.jsonl)"
    )
    rows: list[dict[str, Any]] = []
    doc_columns: dict[str, None] = {}
    metric_columns: dict[str, None] = {}
    tasks_seen: set[str] = set()
    filters_seen: set[str] = set()
    for path in files:
        task = _task_of(path)
        tasks_seen.add(task)
        lines = _read_lines(path)
        if not lines:
            warnings.warn(
                f"lm-eval samples file '{path.name}' is empty; it adds no rows.",
                LogReadWarning,
                stacklevel=stacklevel,
            )
            continue
        filters = list(dict.fromkeys(str(line.get("filter", "none")) for line in lines))
        filters_seen.update(filters)
        chosen = _choose_filter(path, task, filters, filter)
        kept = [line for line in lines if str(line.get("filter", "none")) == chosen]
        available = _metric_names(kept)
        numeric = [
            name
            for name in available
            if all(_as_number(line.get(name)) is not None for line in kept)
        ]
        where = f"lm-eval samples file '{path.name}' (filter '{chosen}')"
        if metric is None:
            selected = numeric
            skipped = [name for name in available if name not in numeric]
            if skipped:
                warnings.warn(
                    f"lm-eval samples file '{path.name}': metrics {format_examples(skipped)} "
                    "hold non-numeric per-sample values and were left out.",
                    LogReadWarning,
                    stacklevel=stacklevel,
                )
        else:
            selected = select_names(
                metric, available, parameter="metric", what="metrics", where=where
            )
            bad = [name for name in selected if name not in numeric]
            if bad:
                raise ValueError(
                    f"`metric` {format_examples(bad)} in {where} holds non-numeric per-sample "
                    "values; only numeric metrics can be read."
                )
        model = _model_of(path)
        if model is None:
            warnings.warn(
                f"lm-eval samples file '{path.name}' has no results_*.json beside it to name "
                "the model; the `model` column is missing for its rows.",
                LogReadWarning,
                stacklevel=stacklevel,
            )
        for line in kept:
            row: dict[str, Any] = {
                "item_id": str(line["doc_id"]),
                "task": task,
                "model": model,
                "filter": chosen,
                "log": path.name,
            }
            doc: dict[str, Any] = {}
            _flatten_doc(line.get("doc"), "doc_", doc)
            for key in doc:
                doc_columns.setdefault(key, None)
            row.update(doc)
            for name in selected:
                metric_columns.setdefault(name, None)
                row[f"{_METRIC}{name}"] = _as_number(line.get(name))
            rows.append(row)
    if isinstance(filter, str) and filter not in filters_seen:
        raise ValueError(
            f"`filter` is '{filter}', which no samples file has; "
            f"available filters: {format_examples(sorted(filters_seen), limit=50)}."
        )
    if isinstance(filter, Mapping):
        unknown = [task for task in filter if task not in tasks_seen]
        if unknown:
            raise ValueError(
                f"`filter` maps tasks {format_examples(unknown)} that are not among the tasks "
                f"read: {format_examples(sorted(tasks_seen), limit=50)}."
            )
    plain = [*_BASE_COLUMNS, *doc_columns]
    final = tagged_columns(plain, metric_columns, tag=_METRIC, fallback_prefix="metric_")
    _warn_renamed(final, _METRIC, stacklevel)
    records = [{final.get(k, k): v for k, v in row.items()} for row in rows]
    frame = pd.DataFrame.from_records(records, columns=[*plain, *final.values()])
    for name in final.values():
        frame[name] = frame[name].astype("float64")
    return frame


def read_lm_eval(
    paths: PathInput,
    *,
    metric: str | Sequence[str] | None = None,
    filter: str | Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Read lm-evaluation-harness ``samples_<task>_<date>.jsonl`` files, one row per document.

    Parameters
    ----------
    paths : str, os.PathLike or sequence of them
        Samples files, or output directories searched recursively for ``samples_*.jsonl``.
    metric : str, sequence of str or None, optional
        Per-sample metrics to read (e.g. ``"exact_match"``, ``"acc"``); ``None`` reads every
        numeric metric. Each name must be present in every samples file read.
    filter : str, mapping of str to str, or None, optional
        The filter (lm-eval's post-processing pipeline, e.g. ``"strict-match"``) whose rows
        are kept. A task whose file has a single filter always uses it. A task with several
        filters uses the one named here; a mapping ``{task: filter}`` chooses per task.
        With ``None``, a task with several filters is an error: rows of different filters
        are never mixed nor silently dropped.

    Returns
    -------
    pandas.DataFrame
        Columns, in order: ``item_id`` (``doc_id`` as str; unique within a task), ``task``
        (from the file name), ``model`` (``model_name`` of the ``results_*.json`` written
        with the samples, else its ``config.model``; missing if there is no results file),
        ``filter``, ``log`` (file name), ``doc_<field>`` for every scalar field of the
        document (nested objects flattened as ``doc_<a>.<b>``; lists are left out) as
        candidate profile columns, then one float column per metric (booleans as 0/1).

    Raises
    ------
    ValueError
        If a path does not exist, a directory holds no samples file, a line is not a
        sample record, a task has several filters and ``filter`` does not choose one (the
        message lists them), ``filter`` names a filter or task that is not present, or
        ``metric`` names a metric missing from a file or holding non-numbers.

    Warns
    -----
    LogReadWarning
        Once per samples file without a results file beside it (``model`` is then
        missing), and once per file whose non-numeric metrics (e.g. per-sample BLEU pairs)
        were left out when ``metric`` is None.

    Example
    -------
    >>> df = read_lm_eval("out/", filter="strict-match", metric="exact_match")  # doctest: +SKIP
    >>> df.groupby("doc_subject")["exact_match"].mean()  # doctest: +SKIP
    """
    return _read_lm_eval(paths, metric=metric, filter=filter, stacklevel=3)


def _warn_renamed(final: Mapping[str, str], tag: str, stacklevel: int) -> None:
    renamed = {k[len(tag) :]: v for k, v in final.items() if k[len(tag) :] != v}
    if renamed:
        warnings.warn(
            f"lm-eval metrics {format_examples(list(renamed))} clash with reader columns and "
            f"were renamed to {format_examples(list(renamed.values()))}.",
            LogReadWarning,
            stacklevel=stacklevel + 1,
        )
