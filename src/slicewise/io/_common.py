"""Helpers shared by the log readers: path discovery, choice checks, value conversion."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from slicewise._validation import format_examples
from slicewise.exceptions import SlicewiseWarning

__all__ = [
    "LogReadWarning",
    "PathInput",
    "as_path_list",
    "find_files",
    "format_examples",
    "is_scalar_json",
    "read_json_object",
    "select_names",
    "tagged_columns",
    "to_cell",
]

PathInput: TypeAlias = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
"""One path or a sequence of paths (files or directories)."""


class LogReadWarning(SlicewiseWarning):
    """Something in an evaluation log was unusual but the log could still be read.

    Emitted at most once per log file and per kind of problem (for instance errored
    samples, missing scores, dropped perturbed instances), with the count and the file name.

    Example
    -------
    >>> import warnings
    >>> from slicewise.io import LogReadWarning, read_inspect
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", LogReadWarning)  # make them errors here
    ...     frame = read_inspect("logs/")  # doctest: +SKIP
    """


def as_path_list(paths: PathInput, *, parameter: str = "paths") -> list[Path]:
    """Normalise one path or a sequence of paths to a non-empty list of existing paths.

    Parameters
    ----------
    paths : str, os.PathLike or sequence of them
        The paths given by the user.
    parameter : str, optional
        Parameter name used in error messages.

    Returns
    -------
    list of pathlib.Path
        The paths, in the order given.

    Raises
    ------
    ValueError
        If no path is given or a path does not exist.

    Example
    -------
    >>> as_path_list(".")
    [PosixPath('.')]
    """
    items: list[str | os.PathLike[str]] = (
        [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    )
    if not items:
        raise ValueError(f"`{parameter}` is empty; give at least one file or directory.")
    result = [Path(p) for p in items]
    missing = [str(p) for p in result if not p.exists()]
    if missing:
        raise ValueError(
            f"`{parameter}` has {len(missing)} path(s) that do not exist: "
            f"{format_examples(missing)}."
        )
    return result


def find_files(
    paths: Sequence[Path], patterns: Sequence[str], *, what: str, parameter: str = "paths"
) -> list[Path]:
    """Expand directories into the files matching ``patterns`` (recursively), keep files.

    Parameters
    ----------
    paths : sequence of pathlib.Path
        Files and directories.
    patterns : sequence of str
        Glob patterns (file names) searched for in directories, e.g. ``["*.eval"]``.
    what : str
        Description of the files, for the error message.
    parameter : str, optional
        Parameter name used in error messages.

    Returns
    -------
    list of pathlib.Path
        Files given directly, then the matches of each directory in sorted order, without
        duplicates.

    Raises
    ------
    ValueError
        If a directory contains no matching file.

    Example
    -------
    >>> find_files([Path(".")], ["*.toml"], what="TOML files")  # doctest: +SKIP
    [PosixPath('pyproject.toml')]
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            matches = sorted(
                {m for pattern in patterns for m in path.rglob(pattern) if m.is_file()}
            )
            if not matches:
                raise ValueError(
                    f"`{parameter}` directory '{path}' contains no {what} "
                    f"(searched recursively for {', '.join(patterns)})."
                )
            found.extend(matches)
        else:
            found.append(path)
    seen: set[Path] = set()
    unique: list[Path] = []
    for path in found:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def select_names(
    requested: str | Sequence[str] | None,
    available: Sequence[str],
    *,
    parameter: str,
    what: str,
    where: str,
) -> list[str]:
    """Check a user's choice of names (scorers, metrics, stats) against what a log holds.

    Parameters
    ----------
    requested : str, sequence of str or None
        The user's choice; ``None`` selects everything available.
    available : sequence of str
        Names present in the logs, in display order.
    parameter : str
        Parameter name used in error messages.
    what : str
        Plural noun for the names, e.g. ``"scorers"``.
    where : str
        Where the names were looked for, e.g. a file name.

    Returns
    -------
    list of str
        The selected names, in the order requested (or ``available`` order).

    Raises
    ------
    ValueError
        If a requested name is not available, or ``requested`` is empty.

    Example
    -------
    >>> select_names("acc", ["acc", "acc_norm"], parameter="metric", what="metrics", where="x")
    ['acc']
    """
    if requested is None:
        return list(available)
    wanted = [requested] if isinstance(requested, str) else list(requested)
    if not wanted:
        raise ValueError(f"`{parameter}` is empty; give at least one name or None for all {what}.")
    unknown = [name for name in wanted if name not in available]
    if unknown:
        raise ValueError(
            f"`{parameter}` asks for {what} not found in {where}: {format_examples(unknown)}; "
            f"available {what}: {format_examples(available, limit=50) or '(none)'}."
        )
    return list(dict.fromkeys(wanted))


def is_scalar_json(value: Any) -> bool:
    """Return whether a JSON value is a scalar (string, number, boolean or null).

    Parameters
    ----------
    value : Any
        A value decoded from JSON.

    Returns
    -------
    bool
        True for ``str``, ``int``, ``float``, ``bool`` and ``None``.

    Example
    -------
    >>> is_scalar_json([1, 2])
    False
    """
    return value is None or isinstance(value, str | int | float | bool)


def to_cell(value: Any) -> Any:
    """Turn a JSON value into something a DataFrame cell (and Parquet) can hold.

    Scalars are kept; lists and dicts become compact JSON text with sorted keys.

    Parameters
    ----------
    value : Any
        A value decoded from JSON.

    Returns
    -------
    Any
        The scalar itself, or a JSON string.

    Example
    -------
    >>> to_cell({"b": 1, "a": [2]})
    '{"a":[2],"b":1}'
    """
    if is_scalar_json(value):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def not_text(path: Path, what: str, error: UnicodeDecodeError) -> ValueError:
    """The error for a log file that is not UTF-8 text (a binary or compressed file)."""
    return ValueError(
        f"{what} '{path}' is not UTF-8 text (byte {error.object[error.start]:#04x} at position "
        f"{error.start}); is it a binary or compressed file?"
    )


def read_json_object(path: Path, *, what: str) -> Mapping[str, Any]:
    """Read a JSON file whose top level must be an object.

    Parameters
    ----------
    path : pathlib.Path
        The file.
    what : str
        Description of the file for error messages.

    Returns
    -------
    Mapping
        The decoded object.

    Raises
    ------
    ValueError
        If the file is not valid JSON or its top level is not an object.

    Example
    -------
    >>> read_json_object(Path("results.json"), what="lm-eval results file")  # doctest: +SKIP
    """
    try:
        with path.open("r", encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what} '{path}' is not valid JSON: {exc}.") from exc
    except UnicodeDecodeError as exc:
        raise not_text(path, what, exc) from None
    if not isinstance(data, dict):
        raise ValueError(
            f"{what} '{path}' must hold a JSON object at top level, got {type(data).__name__}."
        )
    return data


def tagged_columns(
    plain: Sequence[str], tagged: Iterable[str], *, tag: str, fallback_prefix: str
) -> dict[str, str]:
    """Final column names for internally tagged keys, renaming those that clash.

    Readers keep metric or statistic values under keys ``tag + name`` while building rows,
    so that a metric cannot overwrite a fixed column (``model``, ``split``...). This maps
    each tagged key to ``name``, or to ``fallback_prefix + name`` when ``name`` is already
    one of the ``plain`` columns.

    Parameters
    ----------
    plain : sequence of str
        The reader's other column names.
    tagged : iterable of str
        Metric or statistic names (without the tag).
    tag : str
        The internal prefix of their row keys.
    fallback_prefix : str
        Prefix added to a clashing name, e.g. ``"metric_"``.

    Returns
    -------
    dict of str to str
        ``{tag + name: final column name}`` in ``tagged`` order.

    Example
    -------
    >>> tagged_columns(["model"], ["acc", "model"], tag="~", fallback_prefix="metric_")
    {'~acc': 'acc', '~model': 'metric_model'}
    """
    taken = set(plain)
    return {
        f"{tag}{name}": (f"{fallback_prefix}{name}" if name in taken else name) for name in tagged
    }
