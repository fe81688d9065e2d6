"""Argument parsers and printing helpers shared by the subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def _columns(text: str) -> list[str]:
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise argparse.ArgumentTypeError("expected one or more comma-separated column names")
    return cols


def _grid(text: str) -> int | list[float] | list[str]:
    if text.isdigit():
        return int(text)
    parts = [p.strip() for p in text.split(",")]
    try:
        return [float(p) for p in parts]
    except ValueError:
        return parts


def _float_or_inf(text: str) -> float:
    return float("inf") if text.lower() in {"inf", "infinity"} else float(text)


def _print_notes(notes: Sequence[str], printed: set[str] | None = None) -> None:
    for note in notes:
        print(f"note: {note}")
        if printed is not None:
            printed.add(note)


def _budgets(text: str) -> list[int]:
    try:
        return [int(b) for b in text.split(",") if b.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError("expected comma-separated integers") from err
