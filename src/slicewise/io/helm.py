"""Read HELM per-instance statistics (``per_instance_stats.json``) into an item table.

``helm-run --suite SUITE ...`` writes one directory per run,
``benchmark_output/runs/<SUITE>/<run name>/``, holding ``run_spec.json`` (the model is in
``adapter_spec.model``) and ``per_instance_stats.json``: a list with one entry per
(instance, train trial, perturbation), each carrying a list of statistics
(``{"name": {"name": ..., "split": ...}, "count", "sum", "mean", ...}``).

Perturbed copies of an instance (runs with ``data_augmentation=...``) share the instance id
of the original; by default only the unperturbed entries are read, so every row is the
original item, as the item table needs.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from slicewise._validation import check_choice
from slicewise.io._common import (
    LogReadWarning,
    PathInput,
    as_path_list,
    find_files,
    format_examples,
    not_text,
    read_json_object,
    select_names,
    tagged_columns,
)

__all__ = ["read_helm"]

_STAT = "\0stat:"  # marks internal row keys; stripped when the frame is built

_STATS_FILE = "per_instance_stats.json"
_PERTURBATION_MODES: tuple[Literal["drop", "keep"], ...] = ("drop", "keep")
# Keys of a perturbation description that describe how it was scored, not what it is.
_PERTURBATION_BOOKKEEPING = frozenset({"name", "robustness", "fairness", "computed_on"})


def _stats_file(path: Path) -> Path:
    """A run directory stands for its stats file; other directories are searched."""
    if path.is_dir() and (path / _STATS_FILE).is_file():
        return path / _STATS_FILE
    return path


def _run_args(run: str) -> tuple[str, dict[str, str]]:
    """Split a run name ``scenario:key=value,key=value`` into its scenario and arguments."""
    scenario, _, rest = run.partition(":")
    args: dict[str, str] = {}
    for part in rest.split(","):
        key, sep, value = part.partition("=")
        if sep and key:
            args[key.strip()] = value.strip()
    return scenario, args


def _perturbation_label(description: Any) -> str | None:
    """Compact, stable text for a perturbation description, e.g. ``extra_space(num_spaces=2)``."""
    if not description:
        return None
    if not isinstance(description, dict):
        return str(description)
    name = str(description.get("name", "perturbation"))
    params = {k: v for k, v in description.items() if k not in _PERTURBATION_BOOKKEEPING}
    if not params:
        return name
    inner = ",".join(f"{k}={json.dumps(params[k], sort_keys=True)}" for k in sorted(params))
    return f"{name}({inner})"


def _stat_mean(stat: Mapping[str, Any]) -> float:
    mean = stat.get("mean")
    if isinstance(mean, bool | int | float):
        return float(mean)
    count = stat.get("count")
    total = stat.get("sum")
    if isinstance(count, int | float) and count and isinstance(total, int | float):
        return float(total) / float(count)
    return math.nan


def _model_of(run_dir: Path, run: str) -> str | None:
    spec_path = run_dir / "run_spec.json"
    if spec_path.is_file():
        spec = read_json_object(spec_path, what="HELM run spec")
        adapter = spec.get("adapter_spec")
        if isinstance(adapter, dict):
            for key in ("model", "model_deployment"):
                if isinstance(adapter.get(key), str) and adapter[key]:
                    return str(adapter[key])
    model_arg = _run_args(run)[1].get("model")
    return model_arg


def _read_entries(path: Path) -> list[Mapping[str, Any]]:
    try:
        with path.open("r", encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise ValueError(f"HELM file '{path}' is not valid JSON: {exc}.") from exc
    except UnicodeDecodeError as exc:
        raise not_text(path, "HELM file", exc) from None
    if not isinstance(data, list) or not all(
        isinstance(e, dict) and "instance_id" in e and isinstance(e.get("stats"), list)
        for e in data
    ):
        raise ValueError(
            f"HELM file '{path}' is not a per_instance_stats.json: expected a list of objects "
            "with 'instance_id' and 'stats'."
        )
    return data


def _read_helm(
    paths: PathInput,
    *,
    stats: str | Sequence[str] | None = None,
    perturbations: Literal["drop", "keep"] = "drop",
    stacklevel: int,
) -> pd.DataFrame:
    """Implement :func:`read_helm`; ``stacklevel`` locates the user's frame for warnings."""
    mode = check_choice(perturbations, _PERTURBATION_MODES, name="perturbations", func="read_helm")
    given = [_stats_file(p) for p in as_path_list(paths)]
    files = find_files(given, [_STATS_FILE], what=f"HELM {_STATS_FILE} files")
    rows: list[dict[str, Any]] = []
    arg_columns: dict[str, None] = {}
    stat_columns: dict[str, None] = {}
    has_sub_split = False
    for path in files:
        run_dir = path.parent
        run = run_dir.name
        scenario, args = _run_args(run)
        model = _model_of(run_dir, run)
        entries = _read_entries(path)
        available = list(
            dict.fromkeys(
                str(stat["name"]["name"])
                for entry in entries
                for stat in entry["stats"]
                if isinstance(stat.get("name"), dict) and "name" in stat["name"]
            )
        )
        selected = select_names(
            stats, available, parameter="stats", what="statistics", where=f"HELM file '{path}'"
        )
        wanted = set(selected)
        dropped: dict[str, int] = {}
        for entry in entries:
            label = _perturbation_label(entry.get("perturbation"))
            if label is not None and mode == "drop":
                dropped[label] = dropped.get(label, 0) + 1
                continue
            row: dict[str, Any] = {
                "item_id": str(entry["instance_id"]),
                "model": model,
                "run": run,
                "scenario": scenario,
            }
            for key, value in args.items():
                if key != "model":
                    arg_columns.setdefault(f"run_{key}", None)
                    row[f"run_{key}"] = value
            row["train_trial_index"] = int(entry.get("train_trial_index", 0))
            row["split"] = None
            row["sub_split"] = None
            if mode == "keep":
                row["perturbation"] = label
            seen: set[str] = set()
            for stat in entry["stats"]:
                name_info = stat.get("name")
                if not isinstance(name_info, dict) or name_info.get("name") not in wanted:
                    continue
                name = str(name_info["name"])
                if name in seen:
                    raise ValueError(
                        f"HELM file '{path}' instance '{entry['instance_id']}' (train trial "
                        f"{row['train_trial_index']}) lists statistic '{name}' twice; "
                        "each statistic must appear once per entry."
                    )
                seen.add(name)
                if name_info.get("split") is not None:
                    row["split"] = str(name_info["split"])
                if name_info.get("sub_split") is not None:
                    row["sub_split"] = str(name_info["sub_split"])
                    has_sub_split = True
                stat_columns.setdefault(name, None)
                row[f"{_STAT}{name}"] = _stat_mean(stat)
            rows.append(row)
        if dropped:
            total = sum(dropped.values())
            warnings.warn(
                f"HELM run '{run}': dropped {total} perturbed instance entries "
                f"(perturbations: {format_examples(sorted(dropped))}); only unperturbed "
                "instances are read. Pass perturbations='keep' to read them too.",
                LogReadWarning,
                stacklevel=stacklevel,
            )
    columns = [
        "item_id",
        "model",
        "run",
        "scenario",
        *arg_columns,
        "train_trial_index",
        "split",
        *(["sub_split"] if has_sub_split else []),
        *(["perturbation"] if mode == "keep" else []),
    ]
    final = tagged_columns(columns, stat_columns, tag=_STAT, fallback_prefix="stat_")
    renamed = [name for name in stat_columns if final[f"{_STAT}{name}"] != name]
    if renamed:
        warnings.warn(
            f"HELM statistics {format_examples(renamed)} clash with reader columns and were "
            f"renamed to {format_examples([f'stat_{name}' for name in renamed])}.",
            LogReadWarning,
            stacklevel=stacklevel,
        )
    records = [{final.get(k, k): v for k, v in row.items()} for row in rows]
    frame = pd.DataFrame.from_records(records, columns=[*columns, *final.values()])
    frame["train_trial_index"] = frame["train_trial_index"].astype("int64")
    for name in final.values():
        frame[name] = frame[name].astype("float64")
    return frame


def read_helm(
    paths: PathInput,
    *,
    stats: str | Sequence[str] | None = None,
    perturbations: Literal["drop", "keep"] = "drop",
) -> pd.DataFrame:
    """Read HELM ``per_instance_stats.json`` files, one row per instance and train trial.

    Parameters
    ----------
    paths : str, os.PathLike or sequence of them
        ``per_instance_stats.json`` files, run directories holding one, or directories
        (e.g. ``benchmark_output/runs/<suite>``) searched recursively for them.
    stats : str, sequence of str or None, optional
        Statistic names to read (e.g. ``"exact_match"``); ``None`` reads all. Each name must
        be present in every file read.
    perturbations : {'drop', 'keep'}, optional
        ``'drop'`` (default) keeps only unperturbed instances: one row per (instance,
        train trial). ``'keep'`` also reads perturbed copies, adding a ``perturbation``
        column (e.g. ``'extra_space(num_spaces=2)'``, missing for the original), so rows
        are unique per (instance, train trial, perturbation).

    Returns
    -------
    pandas.DataFrame
        Columns, in order: ``item_id`` (HELM ``instance_id``), ``model`` (from
        ``run_spec.json``, else the run name's ``model=`` argument), ``run`` (run directory
        name), ``scenario`` (run name before ``:``), ``run_<key>`` for every other
        ``key=value`` argument of the run name (e.g. ``run_subject`` for MMLU: a candidate
        profile column), ``train_trial_index`` (int), ``split`` (and ``sub_split`` when
        present), ``perturbation`` (only with ``perturbations='keep'``), then one float
        column per statistic holding its ``mean`` over the instance (NaN when the
        statistic has no values, e.g. ``count`` 0).

    Raises
    ------
    ValueError
        If a path does not exist, holds no ``per_instance_stats.json``, a file is not one,
        ``stats`` names a statistic that a file does not have, ``perturbations`` is not
        'drop' or 'keep', or one entry repeats a statistic name.

    Warns
    -----
    LogReadWarning
        Once per file from which perturbed entries were dropped, with their count.

    Example
    -------
    >>> df = read_helm("benchmark_output/runs/v1", stats=["exact_match"])  # doctest: +SKIP
    >>> df.groupby("run_subject")["exact_match"].mean()  # doctest: +SKIP
    """
    return _read_helm(paths, stats=stats, perturbations=perturbations, stacklevel=3)
