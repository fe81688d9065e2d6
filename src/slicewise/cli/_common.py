"""Argument parsers and printing helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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


def write_report(
    args: argparse.Namespace,
    result: Any,
    *,
    label: str | None = None,
    render: Callable[..., str] | None = None,
) -> None:
    """With ``--report``, write ``render(result, path, ...)`` there (default: ``result.to_html``),
    recording the command and the data."""
    path = getattr(args, "report", None)
    if path is None:
        return
    context: dict[str, object] = {}
    items = getattr(args, "items_path", getattr(args, "items", None))
    if items is not None:
        context["data"] = str(items)
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
    if render is None:
        result.to_html(path, **kwargs)
    else:
        render(result, path, **kwargs)
    print(f"wrote {path}")


def _levels(text: str) -> list[str]:
    levels = [v.strip() for v in text.split(",") if v.strip()]
    if len(levels) < 2:
        raise argparse.ArgumentTypeError("expected two or more comma-separated levels, low to high")
    return levels


def add_levels_arg(parser: argparse.ArgumentParser) -> None:
    """The ``--levels`` option: the order of a text profile column."""
    parser.add_argument(
        "--levels",
        type=_levels,
        default=None,
        metavar="LOW,...,HIGH",
        help="order of the levels of a text --z column, comma-separated from low to high "
        "(e.g. easy,medium,hard); makes the profile ordinal",
    )


def apply_levels(args: argparse.Namespace) -> None:
    """With ``--levels``, read the table and make ``--z`` an ordered categorical column.

    ``args.items`` becomes the DataFrame (the file name stays in ``args.items_path``) and
    ``--kind`` defaults to ordinal. Values outside the levels stop with a one-line error.
    """
    levels = getattr(args, "levels", None)
    if levels is None:
        return
    import pandas as pd

    from ..data.files import read_table

    if len(args.z) != 1:
        raise ValueError(f"--levels orders one --z column; got {len(args.z)}: {args.z}.")
    column = args.z[0]
    frame = read_table(args.items)
    if column not in frame.columns:
        raise ValueError(f"--levels: no column '{column}' in {args.items}.")
    text = frame[column].astype("string")
    outside = sorted(set(text.dropna()) - set(levels))
    if outside:
        raise ValueError(
            f"--levels: column '{column}' has values that are not among the levels "
            f"{','.join(levels)}: {outside[:5]}{' ...' if len(outside) > 5 else ''}."
        )
    frame[column] = pd.Categorical(text, categories=levels, ordered=True)
    args.items_path = args.items
    args.items = frame
    if args.kind is None:
        args.kind = "ordinal"


#: ``--strata`` means one thing across the command line: the name of a stratum column (sample,
#: domains, validate). The number of equal-width strata of Z of ``strat_ppi`` is
#: ``slicewise profile --strata-count N`` (a declared option, :mod:`slicewise.methods.options`).


def add_old_strata_arg(parser: argparse.ArgumentParser) -> None:
    """``--strata N``, the old spelling of ``--strata-count N`` in ``slicewise profile``."""
    parser.add_argument(
        "--strata",
        dest="strata_old",
        default=None,
        metavar="N",
        help="old spelling of --strata-count (a number); in sample, domains and validate "
        "--strata names a stratum column",
    )


def resolve_strata_count(args: argparse.Namespace) -> None:
    """Turn ``--strata N`` into ``--strata-count N`` (with a warning); refuse a column name."""
    old = getattr(args, "strata_old", None)
    if old is not None:
        if not old.strip().isdigit() or int(old) < 1:
            raise ValueError(
                f"--strata names a stratum column in sample, domains and validate; slicewise "
                f"profile takes no stratum column (give a design's inclusion probabilities with "
                f"--inclusion COL). For the number of strata of strat_ppi use --strata-count N. "
                f"Got --strata {old!r}."
            )
        if args.strata_count is not None:
            raise ValueError(
                f"--strata {old} is the old spelling of --strata-count; give one of them, not "
                f"both (got --strata-count {args.strata_count})."
            )
        print(
            f"warning: --strata {old} in slicewise profile is now spelled --strata-count {old} "
            "(--strata names a stratum column everywhere else); the old spelling still works "
            "for now.",
            file=sys.stderr,
        )
        args.strata_count = int(old)


@contextmanager
def strata_column_hint(args: argparse.Namespace) -> Iterator[None]:
    """Add a hint to a missing ``--strata`` column that looks like a number of strata."""
    try:
        yield
    except ValueError as err:
        value = getattr(args, "strata", None)
        if isinstance(value, str) and value.strip().isdigit() and "'strata'" in str(err):
            raise ValueError(
                f"--strata names the stratum column of the design; {value!r} is not a column "
                "of the table. (The number of equal-width strata of Z of strat_ppi is "
                f"`slicewise profile --strata-count {value}`.) {err}"
            ) from err
        raise
