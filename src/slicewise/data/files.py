"""Read an item table from CSV, Parquet or JSON Lines, chosen by the file's suffix."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a table file into a DataFrame.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.parquet`` (``.pq``) or JSON Lines (``.jsonl``, ``.ndjson``, ``.json`` with one
        object per line) file.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the suffix is not one of the supported ones.
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
        return pd.read_csv(file)
    if fmt == "parquet":
        return pd.read_parquet(file)
    return pd.read_json(file, lines=True)


def write_table(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` as CSV, Parquet or JSON Lines, chosen by the suffix of ``path``."""
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
    else:
        frame.to_json(file, orient="records", lines=True)
    return file
