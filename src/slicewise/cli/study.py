"""``slicewise study`` and ``slicewise simulate``: matched-split studies and the paper's simulations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..methods.options import add_option_flags, given_options
from ._common import (
    _budgets,
    _columns,
    _grid,
    add_levels_arg,
    add_report_arg,
    apply_levels,
    write_report,
)


def _add_study_common(parser: argparse.ArgumentParser, *, budgets: str, reps: int) -> None:
    from ..methods.registry import METHODS

    parser.add_argument(
        "--methods",
        type=_columns,
        default=["naive", "lace", "global_cv"],
        help=f"comma-separated methods among: {', '.join(METHODS)}",
    )
    parser.add_argument(
        "--budgets",
        type=_budgets,
        default=_budgets(budgets),
        help=f"comma-separated label budgets (default {budgets})",
    )
    parser.add_argument("--reps", type=int, default=reps, help=f"matched splits (default {reps})")
    add_option_flags(parser, ["ridge", "smooth", "objective"])
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for records.csv, summary.csv, aggregate.csv, table.md/.tex, re.png",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _add_study_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", help="fully labeled item table: CSV, Parquet or JSON Lines")
    add_report_arg(parser)
    parser.add_argument(
        "--z", required=True, type=_columns, help="profile column(s), comma-separated"
    )
    parser.add_argument("--kind", choices=["continuous", "ordinal", "categorical"], default=None)
    add_levels_arg(parser)
    parser.add_argument(
        "--signals",
        type=_columns,
        default=None,
        help="cheap-signal columns, comma-separated (e.g. judge,conf)",
    )
    parser.add_argument(
        "--label",
        required=True,
        type=_columns,
        help="gold label column; several columns make one cell each, and a label "
        "column listed in --signals is dropped from its own cell's signals",
    )
    parser.add_argument("--grid", type=_grid, default=None, help="grid points or count")
    parser.add_argument("--bandwidth", type=float, default=None, help="profile bandwidth")
    parser.add_argument("--primary", default=None, help="primary judge signal column")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes over cells")
    parser.add_argument(
        "--sparse",
        type=int,
        default=None,
        metavar="K",
        help="also report the study on each cell's K grid points with the lowest pool "
        "effective sample size (the sparse region; the paper uses 5); writes OUT/sparse/. "
        "(the paper's stress grid and per-split CV are in research/sensitivity.py)",
    )
    _add_study_common(parser, budgets="50,100,200", reps=100)


def _run_study(args: argparse.Namespace) -> int:
    from .._validation import check_positive_int
    from ..data.files import read_table
    from ..studies.engine import CellSpec, study_cells

    apply_levels(args)
    frame = read_table(args.items) if isinstance(args.items, str | Path) else args.items
    signals = args.signals or []
    cells = [
        CellSpec(
            name=label,
            table=frame,
            z=args.z if len(args.z) > 1 else args.z[0],
            label=label,
            signals=[s for s in signals if s != label],
            kind=args.kind,
            grid=args.grid,
            bandwidth=args.bandwidth,
            primary=args.primary,
        )
        for label in args.label
    ]
    if args.sparse is not None:
        check_positive_int(args.sparse, name="sparse", func="slicewise study")
    result = study_cells(
        cells,
        methods=args.methods,
        budgets=args.budgets,
        reps=args.reps,
        rng=args.seed,
        n_jobs=args.jobs,
        progress=not args.no_progress,
        **given_options(args, ["ridge", "smooth", "objective"]),
    )
    _report_study(result, args)
    write_report(args, result)
    if args.sparse is not None:
        print(f"\nSparse region ({args.sparse} grid points with the lowest pool n_eff):")
        sparse = result.restrict("sparse", k=args.sparse)
        out = None if args.out is None else Path(args.out) / "sparse"
        _report_study(sparse, argparse.Namespace(out=out))
    return 0


def _report_study(result: Any, args: argparse.Namespace) -> None:
    from ..reports.study_output import write_study_outputs

    print(result.table())
    if args.out is not None:
        command = "slicewise " + " ".join(sys.argv[1:]) if sys.argv[1:] else None
        for path in write_study_outputs(result, args.out, command=command):
            print(f"wrote {path}")


def _add_simulate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "design",
        choices=["setting-b", "setting-c", "specialist"],
        help="Appendix I design of the LACE paper",
    )
    parser.add_argument("--target", choices=["population", "pool"], default="population")
    parser.add_argument(
        "--gain-check",
        action="store_true",
        help="specialist design: validate the pointwise gain formula at shrinking "
        "bandwidths instead of a method comparison",
    )
    _add_study_common(parser, budgets="500,1000,1500", reps=300)


def _run_simulate(args: argparse.Namespace) -> int:
    from ..reports.study_output import write_gain_outputs
    from ..studies.simulate import gain_check, simulate

    if args.gain_check:
        if args.design != "specialist":
            raise ValueError("--gain-check applies to the 'specialist' design only.")
        frame = gain_check(
            budget=args.budgets[-1], reps=args.reps, rng=args.seed, progress=not args.no_progress
        )
        print(frame.round(3).to_string(index=False))
        if args.out is not None:
            for path in write_gain_outputs(frame, args.out):
                print(f"wrote {path}")
        return 0
    result = simulate(
        args.design,
        methods=args.methods,
        budgets=args.budgets,
        reps=args.reps,
        target=args.target,
        rng=args.seed,
        **given_options(args, ["ridge", "smooth", "objective"]),
        progress=not args.no_progress,
    )
    _report_study(result, args)
    return 0
