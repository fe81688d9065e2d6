"""One entry point over the log readers, and the import used by ``slicewise import``."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, TypeAlias

import pandas as pd

from slicewise._validation import check_choice
from slicewise.data.files import SUFFIXES, write_table
from slicewise.io._common import LogReadWarning, PathInput
from slicewise.io.helm import _read_helm
from slicewise.io.inspect_logs import _read_inspect
from slicewise.io.lm_eval import _read_lm_eval

__all__ = ["LOG_KINDS", "LogKind", "import_logs", "read_logs"]

LogKind: TypeAlias = Literal["inspect", "lm-eval", "helm"]
"""The evaluation harnesses whose logs can be read."""

LOG_KINDS: tuple[LogKind, ...] = ("inspect", "lm-eval", "helm")

# Which keyword options each kind accepts, with their "not given" defaults.
_OPTIONS: dict[str, tuple[LogKind, object]] = {
    "scorer": ("inspect", None),
    "metric": ("lm-eval", None),
    "filter": ("lm-eval", None),
    "stats": ("helm", None),
    "perturbations": ("helm", "drop"),
}


def _check_options(kind: LogKind, options: Mapping[str, object], func: str) -> None:
    for name, value in options.items():
        owner, default = _OPTIONS[name]
        if owner != kind and value != default:
            raise ValueError(
                f"The '{name}' parameter of {func} applies to kind '{owner}' only; got "
                f"{name}={value!r} with kind '{kind}'."
            )


def read_logs(
    kind: LogKind,
    paths: PathInput,
    *,
    scorer: str | Sequence[str] | None = None,
    metric: str | Sequence[str] | None = None,
    filter: str | Mapping[str, str] | None = None,
    stats: str | Sequence[str] | None = None,
    perturbations: Literal["drop", "keep"] = "drop",
) -> pd.DataFrame:
    """Read evaluation-harness logs of one kind into a frame with one row per item.

    Dispatches to :func:`read_inspect`, :func:`read_lm_eval` or :func:`read_helm`; each
    option applies to one kind only and must be left at its default for the others.

    Parameters
    ----------
    kind : {'inspect', 'lm-eval', 'helm'}
        Which harness wrote the logs.
    paths : str, os.PathLike or sequence of them
        Log files or directories (searched recursively).
    scorer : str, sequence of str or None, optional
        ``'inspect'`` only: scorers to read (default all).
    metric : str, sequence of str or None, optional
        ``'lm-eval'`` only: per-sample metrics to read (default all numeric ones).
    filter : str, mapping of str to str, or None, optional
        ``'lm-eval'`` only: the filter to keep for tasks that have several (required then).
    stats : str, sequence of str or None, optional
        ``'helm'`` only: statistics to read (default all).
    perturbations : {'drop', 'keep'}, optional
        ``'helm'`` only: drop (default) or keep perturbed instances.

    Returns
    -------
    pandas.DataFrame
        The reader's frame; see the reader of ``kind`` for its columns.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, an option is given for another kind, or the reader raises.
    ImportError
        For Zstandard-compressed Inspect ``.eval`` logs without ``zstandard`` on Python
        older than 3.14.

    Warns
    -----
    LogReadWarning
        As the reader of ``kind`` does.

    Example
    -------
    >>> items = read_logs("lm-eval", "out/", filter="strict-match")  # doctest: +SKIP
    """
    return _read_logs(
        kind,
        paths,
        scorer=scorer,
        metric=metric,
        filter=filter,
        stats=stats,
        perturbations=perturbations,
        func="read_logs",
        stacklevel=3,
    )


def _read_logs(
    kind: LogKind,
    paths: PathInput,
    *,
    scorer: str | Sequence[str] | None,
    metric: str | Sequence[str] | None,
    filter: str | Mapping[str, str] | None,
    stats: str | Sequence[str] | None,
    perturbations: Literal["drop", "keep"],
    func: str,
    stacklevel: int,
) -> pd.DataFrame:
    """Implementation of :func:`read_logs`; ``stacklevel`` locates the user's frame."""
    checked = check_choice(kind, LOG_KINDS, name="kind", func=func)
    _check_options(
        checked,
        {
            "scorer": scorer,
            "metric": metric,
            "filter": filter,
            "stats": stats,
            "perturbations": perturbations,
        },
        func,
    )
    if checked == "inspect":
        return _read_inspect(paths, scorer=scorer, stacklevel=stacklevel + 1)
    if checked == "lm-eval":
        return _read_lm_eval(paths, metric=metric, filter=filter, stacklevel=stacklevel + 1)
    return _read_helm(paths, stats=stats, perturbations=perturbations, stacklevel=stacklevel + 1)


def _mixed_object_columns(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Object columns whose non-missing values are of several Python types."""
    mixed: dict[str, list[str]] = {}
    for column in frame.columns:
        if frame[column].dtype != object:
            continue
        types = {type(v).__name__ for v in frame[column] if not pd.isna(v)}
        if len(types) > 1:
            mixed[str(column)] = sorted(types)
    return mixed


def import_logs(
    kind: LogKind,
    paths: PathInput,
    out: str | os.PathLike[str],
    *,
    scorer: str | Sequence[str] | None = None,
    metric: str | Sequence[str] | None = None,
    filter: str | Mapping[str, str] | None = None,
    stats: str | Sequence[str] | None = None,
    perturbations: Literal["drop", "keep"] = "drop",
) -> pd.DataFrame:
    """Read evaluation-harness logs and write them as a table file (``slicewise import``).

    Parameters
    ----------
    kind : {'inspect', 'lm-eval', 'helm'}
        Which harness wrote the logs.
    paths : str, os.PathLike or sequence of them
        Log files or directories.
    out : str or os.PathLike
        Output file; the format follows its suffix: ``.parquet``/``.pq`` (Parquet),
        ``.csv``, ``.jsonl``/``.ndjson`` (JSON Lines) or ``.json`` (one JSON array of
        records). Parent directories are created; an existing file is replaced.
    scorer, metric, filter, stats, perturbations
        As in :func:`read_logs`; each applies to one ``kind`` only.

    Returns
    -------
    pandas.DataFrame
        The frame as written.

    Raises
    ------
    ValueError
        If the suffix of ``out`` is not supported (checked before any log is read) or
        :func:`read_logs` raises.

    Warns
    -----
    LogReadWarning
        As :func:`read_logs` does, and when columns holding values of several types (e.g.
        numbers in one log, text in another) are written as text.

    Example
    -------
    >>> frame = import_logs("inspect", "logs/", "items.parquet")  # doctest: +SKIP
    """
    target = Path(out)
    if target.suffix.lower() not in SUFFIXES:
        raise ValueError(
            f"The 'out' parameter of import_logs must end in one of "
            f"{', '.join(sorted(SUFFIXES))}; got '{target.name}'."
        )
    frame = _read_logs(
        kind,
        paths,
        scorer=scorer,
        metric=metric,
        filter=filter,
        stats=stats,
        perturbations=perturbations,
        func="import_logs",
        stacklevel=3,
    )
    mixed = _mixed_object_columns(frame)
    if mixed:
        warnings.warn(
            "Columns "
            + ", ".join(f"'{c}' ({'/'.join(t)})" for c, t in mixed.items())
            + " mix value types across rows and are written as text.",
            LogReadWarning,
            stacklevel=2,
        )
        frame = frame.copy()
        for column in mixed:
            frame[column] = frame[column].map(lambda v: v if pd.isna(v) else str(v))
    write_table(frame, target)
    return frame
