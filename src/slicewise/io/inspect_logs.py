"""Read Inspect (``inspect_ai``) evaluation logs into an item table.

Both log formats are read with the standard library only, so slicewise does not need
``inspect_ai`` at run time:

* ``.eval``: a zip archive with ``header.json`` (the eval spec, results and status; an
  unfinished log only has ``_journal/start.json``) and one ``samples/<id>_epoch_<n>.json``
  member per sample and epoch. Recent Inspect versions compress the members with
  Zstandard (zip method 93), which :mod:`zipfile` reads natively from Python 3.14; on older
  Pythons the optional package ``zstandard`` is used for those members.
* ``.json``: one JSON object with ``eval``, ``status``, ``results`` and ``samples``.
"""

from __future__ import annotations

import importlib
import json
import math
import struct
import sys
import warnings
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from slicewise.io._common import (
    LogReadWarning,
    PathInput,
    as_path_list,
    find_files,
    format_examples,
    not_text,
    select_names,
    tagged_columns,
    to_cell,
)

__all__ = ["inspect_value_to_float", "read_inspect"]

_META = "\0meta:"  # marks internal row keys; stripped when the frame is built
_SCORE = "\0score:"

# Inspect's default score sentinels (inspect_ai/scorer/_metric.py: CORRECT, INCORRECT,
# PARTIAL, NOANSWER).
_CORRECT = "C"
_INCORRECT = "I"
_PARTIAL = "P"
_NOANSWER = "N"

_ZIP_ZSTANDARD = 93  # zip compression method id of Zstandard (APPNOTE 4.4.5)
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # zip local file header, 30 bytes
_BASE_COLUMNS = ("item_id", "model", "task", "epoch", "log")


def inspect_value_to_float(value: Any) -> float:
    """Convert one Inspect score value to a float, as Inspect itself does.

    Mirrors ``inspect_ai.scorer.value_to_float()`` with its default sentinels (inspect_ai
    0.3.285, ``src/inspect_ai/scorer/_metric.py``): ``"C"`` (CORRECT) -> 1.0, ``"P"``
    (PARTIAL) -> 0.5, ``"I"`` (INCORRECT) and ``"N"`` (NOANSWER) -> 0.0; numbers and
    booleans are cast to float; the strings ``"yes"``/``"true"`` -> 1.0 and
    ``"no"``/``"false"`` -> 0.0 (any case); strings holding a finite number are parsed.
    Where Inspect logs a warning and returns 0.0 for a value it cannot convert (a list, a
    dict, other text), this function returns NaN, so that such values count as missing.
    ``None`` (no score) is NaN too.

    Parameters
    ----------
    value : Any
        A score value as stored in a log (``Score.value``).

    Returns
    -------
    float
        The converted value, or NaN when there is no usable number.

    Raises
    ------
    None
        Never raises.

    Example
    -------
    >>> [inspect_value_to_float(v) for v in ["C", "P", "I", "N", "yes", "0.25", 3, None]]
    [1.0, 0.5, 0.0, 0.0, 1.0, 0.25, 3.0, nan]
    """
    if value is None:
        return math.nan
    if isinstance(value, str):
        if value == _CORRECT:
            return 1.0
        if value == _PARTIAL:
            return 0.5
        if value in (_INCORRECT, _NOANSWER):
            return 0.0
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(lowered)
        except ValueError:
            return math.nan
        return number if math.isfinite(number) else math.nan
    if isinstance(value, bool | int | float):
        return float(value)
    return math.nan


@dataclass
class _LogProblems:
    """Per-log tally of the problems reported in one warning."""

    errored: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)
    unconvertible: dict[str, list[str]] = field(default_factory=dict)
    status: str | None = None

    def message(self, name: str, n_samples: int) -> str | None:
        parts: list[str] = []
        if self.status is not None:
            parts.append(
                f"the log status is '{self.status}', not 'success' (the eval did not finish)"
            )
        if self.errored:
            parts.append(
                f"{len(self.errored)} of {n_samples} samples errored "
                f"({format_examples(self.errored)}); their score columns are NaN"
            )
        n_missing = sum(len(v) for v in self.missing.values())
        if n_missing:
            detail = "; ".join(f"{k}: {format_examples(v)}" for k, v in self.missing.items())
            noun = "score is" if n_missing == 1 else "scores are"
            parts.append(f"{n_missing} {noun} missing ({detail}) and NaN")
        n_bad = sum(len(v) for v in self.unconvertible.values())
        if n_bad:
            detail = "; ".join(f"{k}: {format_examples(v)}" for k, v in self.unconvertible.items())
            noun = "score value" if n_bad == 1 else "score values"
            parts.append(f"{n_bad} {noun} could not be converted to a number ({detail})")
        if not parts:
            return None
        return f"Inspect log '{name}': " + "; ".join(parts) + "."


def _zstandard() -> Any:
    """The optional ``zstandard`` module, imported only when a log needs it."""
    return importlib.import_module("zstandard")


def _zstd_decompress(raw: bytes, *, member: str, log: Path) -> bytes:
    """Decompress one Zstandard zip member (possibly several frames) with ``zstandard``."""
    try:
        zstd = _zstandard()
    except ImportError as exc:
        raise ImportError(
            f"Inspect log '{log}' is compressed with Zstandard (zip method 93, member "
            f"'{member}'), which Python {sys.version_info.major}.{sys.version_info.minor}'s "
            "zipfile cannot read; install the optional package 'zstandard' "
            "(pip install zstandard) or use Python 3.14 or newer."
        ) from exc
    decompressor = zstd.ZstdDecompressor()
    chunks: list[bytes] = []
    data = raw
    while data:
        obj = decompressor.decompressobj()
        chunks.append(obj.decompress(data))
        data = obj.unused_data
    return b"".join(chunks)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, log: Path) -> bytes:
    """Read one zip member, decompressing Zstandard members without patching zipfile."""
    try:
        return zf.read(info)
    except NotImplementedError:
        if info.compress_type != _ZIP_ZSTANDARD:
            raise
    fp = zf.fp
    if fp is None:  # pragma: no cover - the archive is open here
        raise ValueError(f"Inspect log '{log}' is closed.")
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER.size)
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != b"PK\x03\x04":
        raise ValueError(
            f"Inspect log '{log}' is not a valid zip: bad header for '{info.filename}'."
        )
    name_len, extra_len = fields[-2], fields[-1]
    fp.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    data = _zstd_decompress(fp.read(info.compress_size), member=info.filename, log=log)
    if zlib.crc32(data) != info.CRC:
        raise ValueError(f"Inspect log '{log}' is corrupt: CRC mismatch in '{info.filename}'.")
    return data


def _read_eval_file(path: Path) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]]:
    """Return (header, samples) of a ``.eval`` zip log."""
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ValueError(
            f"Inspect log '{path}' has the .eval suffix but is not a zip file."
        ) from exc
    with zf:
        infos = {info.filename: info for info in zf.infolist()}  # last entry of a name wins
        if "header.json" in infos:
            header = json.loads(_read_member(zf, infos["header.json"], path))
        elif "_journal/start.json" in infos:
            start = json.loads(_read_member(zf, infos["_journal/start.json"], path))
            header = {"eval": start.get("eval", {}), "status": "started"}
        else:
            raise ValueError(
                f"Inspect log '{path}' has neither 'header.json' nor '_journal/start.json'; "
                "it is not an Inspect .eval log."
            )
        samples = [
            json.loads(_read_member(zf, infos[name], path))
            for name in sorted(infos)
            if name.startswith("samples/") and name.endswith(".json")
        ]
    return header, samples


def _read_json_file(
    path: Path, *, explicit: bool
) -> tuple[Mapping[str, Any], list[Mapping[str, Any]]] | None:
    """Return (header, samples) of a ``.json`` log, or None for other JSON in a directory."""
    try:
        with path.open("r", encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        if not explicit:
            return None
        raise ValueError(f"Inspect log '{path}' is not valid JSON: {exc}.") from exc
    except UnicodeDecodeError as exc:
        if not explicit:
            return None
        raise not_text(path, "Inspect log", exc) from None
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        if not explicit:
            return None
        raise ValueError(f"'{path}' is not an Inspect JSON log: it has no top-level 'eval' object.")
    samples = data.get("samples") or []
    return data, list(samples)


def _scorer_names(header: Mapping[str, Any], samples: Sequence[Mapping[str, Any]]) -> list[str]:
    """Scorer names of a log: those declared in the eval spec, then any others in samples."""
    names: dict[str, None] = {}
    for entry in header.get("eval", {}).get("scorers") or []:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            names.setdefault(entry["name"].rsplit("/", 1)[-1], None)
    for sample in samples:
        for key in sample.get("scores") or {}:
            names.setdefault(str(key), None)
    return list(names)


def _error_message(error: Any) -> str | None:
    if error is None or error == "":
        return None
    if isinstance(error, dict):
        message = error.get("message")
        return str(message) if message is not None else json.dumps(error, sort_keys=True)
    return str(error)


def _log_rows(
    path: Path,
    header: Mapping[str, Any],
    samples: Sequence[Mapping[str, Any]],
    scorer: str | Sequence[str] | None,
    score_columns: dict[str, None],
    metadata_columns: dict[str, None],
) -> tuple[list[dict[str, Any]], _LogProblems]:
    """Build the rows of one log and tally its problems."""
    spec = header.get("eval", {})
    available = _scorer_names(header, samples)
    selected = select_names(
        scorer, available, parameter="scorer", what="scorers", where=f"Inspect log '{path.name}'"
    )
    problems = _LogProblems()
    status = header.get("status")
    if status is not None and status != "success":
        problems.status = str(status)
    dict_scorers = {
        name
        for sample in samples
        for name, entry in (sample.get("scores") or {}).items()
        if isinstance(entry, dict) and isinstance(entry.get("value"), dict)
    }
    rows: list[dict[str, Any]] = []
    for sample in samples:
        item_id = str(sample.get("id"))
        epoch = int(sample.get("epoch", 1))
        label = f"{item_id} (epoch {epoch})"
        row: dict[str, Any] = {
            "item_id": item_id,
            "model": spec.get("model"),
            "task": spec.get("task"),
            "epoch": epoch,
            "log": path.name,
        }
        for key, value in (sample.get("metadata") or {}).items():
            metadata_columns.setdefault(str(key), None)
            row[f"{_META}{key}"] = to_cell(value)
        error = _error_message(sample.get("error"))
        row["error"] = error
        rows.append(row)
        if error is not None:
            problems.errored.append(label)
        scores = sample.get("scores") or {}
        for name in selected:
            if name not in dict_scorers:
                score_columns.setdefault(name, None)
                row[f"{_SCORE}{name}"] = math.nan
            if error is not None:
                continue
            entry = scores.get(name)
            value = entry.get("value") if isinstance(entry, dict) else None
            if value is None:
                problems.missing.setdefault(name, []).append(label)
                continue
            parts = value.items() if isinstance(value, dict) else [(None, value)]
            for key, sub in parts:
                column = name if key is None else f"{name}.{key}"
                score_columns.setdefault(column, None)
                number = inspect_value_to_float(sub)
                if sub is not None and math.isnan(number):
                    problems.unconvertible.setdefault(column, []).append(label)
                row[f"{_SCORE}{column}"] = number
    rows.sort(key=lambda r: r["epoch"])
    return rows, problems


def _collect_logs(
    paths: PathInput,
) -> list[tuple[Path, Mapping[str, Any], list[Mapping[str, Any]]]]:
    given = as_path_list(paths)
    explicit = {p.resolve() for p in given if p.is_file()}
    files = find_files(given, ["*.eval", "*.json"], what="Inspect logs (.eval or .json)")
    logs: list[tuple[Path, Mapping[str, Any], list[Mapping[str, Any]]]] = []
    for path in files:
        is_explicit = path.resolve() in explicit
        if path.suffix == ".eval":
            header, samples = _read_eval_file(path)
        elif path.suffix == ".json":
            read = _read_json_file(path, explicit=is_explicit)
            if read is None:
                continue
            header, samples = read
        else:
            raise ValueError(
                f"`paths` file '{path}' is not an Inspect log: expected a .eval or .json suffix."
            )
        logs.append((path, header, samples))
    if not logs:
        raise ValueError(
            f"`paths` holds no Inspect logs: none of {format_examples([str(p) for p in files])} "
            "is an Inspect .eval or .json log."
        )
    return logs


def _read_inspect(
    paths: PathInput,
    *,
    scorer: str | Sequence[str] | None = None,
    stacklevel: int,
) -> pd.DataFrame:
    """Implement :func:`read_inspect`; ``stacklevel`` locates the user's frame for warnings."""
    logs = _collect_logs(paths)
    score_columns: dict[str, None] = {}
    metadata_columns: dict[str, None] = {}
    rows: list[dict[str, Any]] = []
    for path, header, samples in logs:
        log_rows, problems = _log_rows(
            path, header, samples, scorer, score_columns, metadata_columns
        )
        rows.extend(log_rows)
        message = problems.message(path.name, len(samples))
        if message is not None:
            warnings.warn(message, LogReadWarning, stacklevel=stacklevel)
    if not rows:
        names = format_examples([p.name for p, _, _ in logs])
        raise ValueError(
            f"`paths` Inspect logs hold no samples ({names}); were they written with "
            "--no-log-samples?"
        )
    plain = [*_BASE_COLUMNS, "error"]
    score_names = tagged_columns(plain, score_columns, tag=_SCORE, fallback_prefix="score_")
    meta_names = tagged_columns(
        [*plain, *score_names.values()], metadata_columns, tag=_META, fallback_prefix="metadata_"
    )
    renamed = [
        (key[len(tag) :], new)
        for tag, names in ((_SCORE, score_names), (_META, meta_names))
        for key, new in names.items()
        if key[len(tag) :] != new
    ]
    if renamed:
        warnings.warn(
            f"Inspect scorers or metadata fields {format_examples([old for old, _ in renamed])} "
            "clash with reader columns and were renamed to "
            f"{format_examples([new for _, new in renamed])}.",
            LogReadWarning,
            stacklevel=stacklevel,
        )
    final = {**score_names, **meta_names}
    records = [{final.get(k, k): v for k, v in row.items()} for row in rows]
    columns = [*_BASE_COLUMNS, *meta_names.values(), *score_names.values(), "error"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame["epoch"] = frame["epoch"].astype("int64")
    for column in score_names.values():
        frame[column] = frame[column].astype("float64")
    return frame


def read_inspect(
    paths: PathInput,
    *,
    scorer: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read Inspect ``.eval`` and ``.json`` logs into one row per (log, sample, epoch).

    Parameters
    ----------
    paths : str, os.PathLike or sequence of them
        Log files, or directories searched recursively for ``*.eval`` and ``*.json`` logs
        (JSON files in a directory that are not Inspect logs, such as ``logs.json``, are
        skipped; a JSON file named directly must be a log).
    scorer : str, sequence of str or None, optional
        Scorers to read (names as in the log, e.g. ``"includes"``); ``None`` reads all of
        them. Every name must be present in every log.

    Returns
    -------
    pandas.DataFrame
        Columns, in order: ``item_id`` (sample id as str), ``model``, ``task``, ``epoch``
        (int), ``log`` (file name), one column per sample metadata field (candidate profile
        columns Z; lists and dicts are stored as JSON text), one float column per scorer
        (a scorer whose value is a dict gives one column ``<scorer>.<key>`` per key), and
        ``error`` (the sample's error message, or missing). Scores are converted with
        :func:`inspect_value_to_float` (C/P/I/N -> 1/0.5/0/0). A scorer named like a fixed
        column is renamed ``score_<name>``, a metadata field named like another column
        ``metadata_<name>``. A scorer absent from one of several logs read with
        ``scorer=None`` is NaN on that log's rows. With several epochs an item has several
        rows: select an epoch or average them before :func:`build_item_table`.

    Raises
    ------
    ValueError
        If a path does not exist, a directory holds no log, a file is not an Inspect log,
        no log holds any sample (logs written with ``--no-log-samples``), or ``scorer``
        names a scorer that a log does not have (the message lists the available ones).
    ImportError
        If a ``.eval`` log is Zstandard-compressed, Python is older than 3.14 and the
        optional package ``zstandard`` is not installed.

    Warns
    -----
    LogReadWarning
        Once per log that has errored samples (their scores are NaN), missing scores (a
        scorer that gave no score: NaN), score values that are not numbers (NaN), or a
        status other than ``"success"``; the message gives the counts, the first sample
        ids and the file name. Also once if columns had to be renamed.

    Example
    -------
    >>> df = read_inspect("logs/", scorer=["includes", "judge"])  # doctest: +SKIP
    >>> df.loc[df["epoch"] == 1, ["item_id", "difficulty", "includes", "judge"]]  # doctest: +SKIP
    """
    return _read_inspect(paths, scorer=scorer, stacklevel=3)
