"""Argument parsers and printing helpers shared by the subcommands."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


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


def add_report_arg(parser: argparse.ArgumentParser) -> None:
    """The ``--report FILE.html`` option."""
    from pathlib import Path

    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="FILE.html",
        help="also write one self-contained HTML report (plot, per-slice table, what was chosen "
        "and why, warnings, data summary, how to reproduce); opens offline, also on a phone",
    )


def write_report(args: argparse.Namespace, result: Any, *, label: str | None = None) -> None:
    """With ``--report``, write ``result.to_html`` there, recording the command and the data."""
    path = getattr(args, "report", None)
    if path is None:
        return
    context: dict[str, object] = {}
    if getattr(args, "items", None) is not None:
        context["data"] = str(args.items)
    if label:
        context["label"] = label
    signals = getattr(args, "signals", None)
    if signals:
        context["signals"] = ", ".join(signals)
    context["seed"] = getattr(args, "seed", None)
    context["command"] = getattr(args, "command_line", "")
    kwargs: dict[str, Any] = {"context": context}
    if label is not None:
        kwargs["label"] = label
    result.to_html(path, **kwargs)
    print(f"wrote {path}")
