"""``slicewise profile``: one profile, or (with the model flags) many models, gaps, rankings."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..methods.options import CLI_OPTIONS, add_option_flags, given_options, options_taken
from ._common import (
    _columns,
    _grid,
    _print_notes,
    add_levels_arg,
    add_old_strata_arg,
    add_report_arg,
    apply_levels,
    resolve_strata_count,
    write_report,
)
from .models import PROFILE_RUNS, _add_model_args, _profile_mode
from .topics import add_profile_topics_args, apply_topics


def _add_profile_args(parser: argparse.ArgumentParser) -> None:
    from ..methods.registry import METHODS

    parser.add_argument(
        "items", help="item table: CSV, Parquet, JSON (array of records) or JSON Lines"
    )
    parser.add_argument(
        "--z",
        default=None,
        type=_columns,
        help="profile column(s), comma-separated (or --topics TEXT)",
    )
    parser.add_argument(
        "--kind",
        choices=["continuous", "ordinal", "categorical"],
        default=None,
        help="locality rule (default: inferred from the column type)",
    )
    add_levels_arg(parser)
    parser.add_argument(
        "--signals",
        type=_columns,
        default=None,
        help="cheap-signal columns, comma-separated (e.g. judge,conf)",
    )
    parser.add_argument("--label", required=True, help="gold label column (missing = unlabeled)")
    parser.add_argument(
        "--gold",
        default=None,
        help="gold labels in a separate table (CSV, Parquet, JSON Lines) joined to the items by "
        "--on; the items may then be a Parquet folder or glob, scanned out of core",
    )
    parser.add_argument(
        "--on", type=_columns, default=None, help="key column(s) of --gold and the items"
    )
    parser.add_argument(
        "--method",
        default=None,
        choices=sorted(METHODS),
        metavar="NAME",
        help="estimator (see `slicewise methods`; default auto; auto, lace, global_cv or naive "
        "with --rank and --deploy)",
    )
    parser.add_argument(
        "--grid",
        type=_grid,
        default=None,
        help="number of grid points, or comma-separated points/levels",
    )
    parser.add_argument(
        "--bandwidth",
        type=float,
        default=None,
        help="profile bandwidth h (continuous) or b_ord (ordinal)",
    )
    parser.add_argument("--primary", default=None, help="primary judge signal column")
    tuning = parser.add_argument_group(
        "tuning options", "each option's default is the library's (see `slicewise methods`)"
    )
    add_option_flags(tuning, CLI_OPTIONS)
    add_old_strata_arg(parser)
    parser.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument(
        "--bounded",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="--bounded: Wilson-type score intervals with the reported se, inside [0, 1] "
        "(res.ci(bounded=True)); --no-bounded: estimate +/- t se. Default: Wilson-type for a "
        "mean of labels, +/- t se for a gap between models",
    )
    parser.add_argument("--target", choices=["pool", "population"], default="pool")
    parser.add_argument("--id", dest="id_col", default=None, help="item id column")
    parser.add_argument(
        "--missing",
        choices=["impute", "error"],
        default="impute",
        help="missing signal values: impute the pool mean and add a missingness-indicator "
        "signal, said in the notes (default), or stop with an error",
    )
    parser.add_argument(
        "--inclusion",
        default=None,
        help="column of known inclusion probabilities of the labeled rows (e.g. pi, written by "
        "slicewise next); every method marked in `slicewise methods`, the default auto included",
    )
    parser.add_argument(
        "--select",
        action="store_true",
        help="choose the method's tuning parameter by within-L 3-fold CV first",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for profile.csv, profile.json and profile.png (with the flags below: "
        "profiles.*, gap.*, ranking.*, deploy.* or cascade.*)",
    )
    add_report_arg(parser)
    _add_model_args(parser)
    add_profile_topics_args(parser)


def _run_profile(args: argparse.Namespace) -> int:
    from ..api import profile
    from ..reports.output import format_table, write_outputs
    from ..sources import is_scanned_only

    if is_scanned_only(args.items):
        print(
            f"The items {args.items} are scanned out of core (only the labeled rows are held in "
            "memory); a progress bar shows each pass."
        )
    resolve_strata_count(args)
    apply_topics(args)
    mode, label = _profile_mode(args)
    apply_levels(args)
    if mode != "single":
        return PROFILE_RUNS[mode](args, label)
    if args.select:
        return _run_select(args)
    result = profile(
        args.items,
        z=args.z if len(args.z) > 1 else args.z[0],
        signals=args.signals,
        label=args.label,
        kind=args.kind,
        method=args.method,
        grid=args.grid,
        bandwidth=args.bandwidth,
        primary=args.primary,
        level=args.level,
        target=args.target,
        id=args.id_col,
        missing=args.missing,
        inclusion=args.inclusion,
        gold=args.gold,
        on=args.on,
        progress=True,
        **given_options(args, CLI_OPTIONS),
    )
    print(format_table(result, bounded=args.bounded))
    _print_notes(result.notes, args.printed_notes)
    if args.out is not None:
        for path in write_outputs(result, args.out, label=args.label, bounded=args.bounded):
            print(f"wrote {path}")
    write_report(args, result, label=args.label)
    return 0


def _run_select(args: argparse.Namespace) -> int:
    from ..reports.output import format_table, write_outputs
    from ..selection.cv import select

    chosen = select(
        args.items,
        z=args.z if len(args.z) > 1 else args.z[0],
        signals=args.signals,
        label=args.label,
        method=args.method,
        kind=args.kind,
        grid=args.grid,
        bandwidth=args.bandwidth,
        primary=args.primary,
        level=args.level,
        target=args.target,
        id=args.id_col,
        missing=args.missing,
        **given_options(args, options_taken(select)),
    )
    curve = chosen.mean_score
    print(f"within-L {chosen.scores.shape[1]}-fold CV of {chosen.method}'s {chosen.parameter}:")
    for value, score in zip(chosen.grid, curve, strict=True):
        mark = "  <- chosen" if value == chosen.chosen else ""
        print(f"  {chosen.parameter} = {value:g}: CV score {score:.6g}{mark}")
    print()
    print(format_table(chosen.result, bounded=args.bounded))
    _print_notes(chosen.result.notes, args.printed_notes)
    if args.out is not None:
        for path in write_outputs(chosen.result, args.out, label=args.label, bounded=args.bounded):
            print(f"wrote {path}")
    write_report(args, chosen.result, label=args.label)
    return 0
