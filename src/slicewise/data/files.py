"""Read and write an item table as CSV, Parquet, JSON or JSON Lines, chosen by the file's suffix.

Reading checks the file once and says what is wrong with it in terms of the file and the rule it
breaks (empty, not text, not comma-separated, a row with too many fields, not a JSON array of
records), instead of passing on the parser's message.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}

#: Separators that, found in the only column name of a CSV file, show it was written with another
#: separator than the comma.
OTHER_SEPARATORS = {";": "semicolon", "\t": "tab", "|": "pipe"}

_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _where(error: json.JSONDecodeError) -> str:
    return f"line {error.lineno} column {error.colno}: {error.msg}"


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _not_utf8(file: Path, what: str, err: UnicodeDecodeError) -> ValueError:
    return ValueError(
        f"Cannot read '{file.name}': it holds byte {err.object[err.start]:#04x}, which is not "
        f"UTF-8 text, so it is not {what}. Save the file as UTF-8."
    )


def _check_text(file: Path, what: str) -> None:
    """Raise when ``file`` is empty or starts like a binary file (NUL bytes)."""
    with file.open("rb") as handle:
        head = handle.read(65536)
    if not head.strip():
        raise ValueError(
            f"Cannot read '{file.name}': the file is empty; {what} needs a header and one row "
            "per item."
        )
    if b"\x00" in head:
        raise ValueError(
            f"Cannot read '{file.name}': it holds NUL bytes, so it is a binary file, not {what} "
            "(UTF-8 text). Was a Parquet or compressed file given a text suffix?"
        )


def _read_csv(file: Path) -> pd.DataFrame:
    what = "a CSV item table"
    _check_text(file, what)
    try:
        frame = pd.read_csv(file)
    except UnicodeDecodeError as err:
        raise _not_utf8(file, what, err) from None
    except pd.errors.ParserError as err:
        ragged = _RAGGED.search(str(err))
        if ragged is None:
            raise ValueError(f"Cannot read '{file.name}' as CSV: {str(err).strip()}") from None
        expected, line, saw = ragged.groups()
        raise ValueError(
            f"Cannot read '{file.name}': line {line} has {saw} fields but the header has "
            f"{expected}; every row of a CSV item table must have as many comma-separated fields "
            "as the header (quote values that contain a comma)."
        ) from None
    if frame.shape[1] == 1:
        name = str(frame.columns[0])
        for sep, sep_name in OTHER_SEPARATORS.items():
            if sep in name:
                raise ValueError(
                    f"Cannot read '{file.name}': its header {name!r} is read as one column but "
                    f"contains the {sep_name} {sep!r}, so the file looks {sep_name}-separated; "
                    "a CSV item table must be comma-separated. Convert it, e.g. "
                    f"pandas.read_csv(path, sep={sep!r}).to_csv(new_path, index=False)."
                )
    return frame


def _records(file: Path, rows: list[Any], where: str) -> pd.DataFrame:
    """A frame from a list of JSON values that must each be an object (one item)."""
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ValueError(
                f"Cannot read '{file.name}': {where.format(k + 1)} is a JSON "
                f"{_json_type(row)}, not an object; each item must be an object of "
                'column: value pairs, e.g. {"z": 1, "label": 0}.'
            )
    return pd.DataFrame.from_records(rows)


def _read_json(file: Path) -> pd.DataFrame:
    what = "a JSON item table"
    _check_text(file, what)
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(file, what, err) from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as err:
        hint = (
            " It holds several JSON values, one after another: if it is JSON Lines (one object "
            "per line), give it the suffix .jsonl."
            if err.msg == "Extra data"
            else ""
        )
        raise ValueError(
            f"Cannot read '{file.name}': it is not valid JSON ({_where(err)}). A .json item "
            f"table must be one JSON array of objects, one per item.{hint}"
        ) from None
    if not isinstance(payload, list):
        raise ValueError(
            f"Cannot read '{file.name}': it holds a JSON {_json_type(payload)}, but a .json "
            'item table must be a JSON array of objects, one per item: [{"z": 1, "label": 0}, '
            "...]."
        )
    return _records(file, payload, "element {}")


def _read_jsonl(file: Path) -> pd.DataFrame:
    what = "a JSON Lines item table"
    _check_text(file, what)
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise _not_utf8(file, what, err) from None
    rows: list[Any] = []
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise ValueError(
                f"Cannot read '{file.name}': line {number} is not one JSON value "
                f"({err.msg} at column {err.colno}); a JSON Lines item table holds one JSON "
                "object per line (a file holding one JSON array should end in .json)."
            ) from None
        lines.append(number)
    for row, number in zip(rows, lines, strict=True):
        if not isinstance(row, dict):
            raise ValueError(
                f"Cannot read '{file.name}': line {number} holds a JSON {_json_type(row)}, "
                "not an object; a JSON Lines item table holds one object per line (a file "
                "holding one JSON array should end in .json)."
            )
    return pd.DataFrame.from_records(rows)


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a table file into a DataFrame.

    Parameters
    ----------
    path : str or path-like
        A ``.csv`` (comma-separated, UTF-8), ``.parquet`` (``.pq``), ``.json`` (one JSON array of
        objects, one per item) or JSON Lines (``.jsonl``, ``.ndjson``: one object per line) file.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the suffix is not one of the supported ones, or the file breaks its format's rule:
        empty, binary or not UTF-8, a CSV that is not comma-separated or has a row with more
        fields than the header, JSON that is not an array of objects, a JSON Lines line that is
        not one object, or a header without rows. Each message names the file and the rule.
    """
    file = Path(path)
    fmt = SUFFIXES.get(file.suffix.lower())
    if fmt is None:
        valid = ", ".join(sorted(SUFFIXES))
        raise ValueError(
            f"Cannot read '{file.name}': the suffix {file.suffix!r} is not a supported table "
            f"format. Use one of {valid}."
        )
    if not file.is_file():
        raise FileNotFoundError(f"Item table file '{file}' does not exist.")
    if fmt == "csv":
        frame = _read_csv(file)
    elif fmt == "parquet":
        try:
            frame = pd.read_parquet(file)
        except (OSError, ValueError) as err:
            raise ValueError(f"Cannot read '{file.name}' as Parquet: {err}") from None
    elif fmt == "json":
        frame = _read_json(file)
    else:
        frame = _read_jsonl(file)
    if len(frame) == 0:
        raise ValueError(
            f"Cannot read '{file.name}': it has no rows"
            + (f" (only the columns {list(map(str, frame.columns))})" if frame.shape[1] else "")
            + "; an item table needs one row per item."
        )
    return frame


def as_frame(data: object, *, name: str, func: str) -> pd.DataFrame:
    """``data`` as a DataFrame: a path is read with :func:`read_table`, a DataFrame passes, any
    other object is a TypeError naming the parameter ``name`` of ``func``."""
    frame = read_table(data) if isinstance(data, str | os.PathLike) else data
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"The '{name}' parameter of {func} must be a pandas DataFrame or a path to a CSV, "
            f"Parquet, JSON or JSON Lines file. Got {type(data).__name__} instead."
        )
    return frame


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` as CSV, Parquet, a JSON array of records (``.json``) or JSON Lines."""
    file = Path(path)
    fmt = SUFFIXES.get(file.suffix.lower())
    if fmt is None:
        valid = ", ".join(sorted(SUFFIXES))
        raise ValueError(
            f"Cannot write '{file.name}': the suffix {file.suffix!r} is not a supported table "
            f"format. Use one of {valid}."
        )
    file.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.to_csv(file, index=False)
    elif fmt == "parquet":
        frame.to_parquet(file, index=False)
    elif fmt == "json":
        frame.to_json(file, orient="records", double_precision=15)
    else:
        frame.to_json(file, orient="records", lines=True, double_precision=15)
    return file
