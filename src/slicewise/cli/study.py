"""``slicewise study`` and ``slicewise simulate``: matched-split studies and the paper's simulations."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import _budgets, _columns, _grid, add_report_arg, write_report


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
    parser.add_argument("--ridge", type=float, default=0.3, help="ridge penalty lambda (0.3)")
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
    parser.add_argument("--z", required=True, type=_columns, help="profile column(s)")
    parser.add_argument("--kind", choices=["continuous", "ordinal", "categorical"], default=None)
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
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--stress",
        action="store_true",
        help="instead of the method comparison, run LACE's ridge x bandwidth stress grid "
        "(lambda in 0.03-3, h/h0 in 0.5-2, b = h; LACE paper Table 27; the paper uses 40 reps)",
    )
    mode.add_argument(
        "--cv",
        action="store_true",
        help="choose every method's tuning parameter by within-L 3-fold cross-validation "
        "inside every split (LACE paper Table 28)",
    )
    parser.add_argument(
        "--sparse",
        type=int,
        default=None,
        metavar="K",
        help="also report the study on each cell's K grid points with the lowest pool "
        "effective sample size (the sparse region; the paper uses 5); writes OUT/sparse/",
    )
    _add_study_common(parser, budgets="50,100,200", reps=100)


def _run_study(args: argparse.Namespace) -> int:
    from ..data.files import read_table
    from ..studies.engine import CellSpec, study_cells
    from ..studies.sensitivity import cv_study, sparse_region, stress_grid

    frame = read_table(args.items)
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
    if args.stress:
        if args.sparse is not None:
            raise ValueError("--sparse applies to the method comparison and --cv, not --stress.")
        stress = stress_grid(
            cells, budgets=args.budgets, reps=args.reps, rng=args.seed, n_jobs=args.jobs
        )
        _report_stress(stress, args)
        return 0
    if args.cv:
        result = cv_study(
            cells,
            methods=args.methods,
            budgets=args.budgets,
            reps=args.reps,
            rng=args.seed,
            n_jobs=args.jobs,
        )
    else:
        result = study_cells(
            cells,
            methods=args.methods,
            budgets=args.budgets,
            reps=args.reps,
            rng=args.seed,
            n_jobs=args.jobs,
            progress=not args.no_progress,
            ridge=args.ridge,
        )
    _report_study(result, args)
    write_report(args, result)
    if args.cv and args.out is not None:
        from ..studies.sensitivity import chosen_parameters

        path = Path(args.out) / "chosen.csv"
        chosen_parameters(result).to_csv(path, index=False)
        print(f"wrote {path}")
    if args.sparse is not None:
        print(f"\nSparse region ({args.sparse} grid points with the lowest pool n_eff):")
        sparse = sparse_region(result, k=args.sparse)
        out = None if args.out is None else Path(args.out) / "sparse"
        _report_study(sparse, argparse.Namespace(out=out))
    return 0


def _report_stress(result: Any, args: argparse.Namespace) -> None:
    """Print the Table-27 summary; with --out write the grid, per-cell minima and a report."""
    print(result.table())
    if args.out is None:
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "stress.csv": result.frame(),
        "stress_cells.csv": result.cell_minimum(),
        "stress_summary.csv": result.summary(),
    }
    for name, frame in files.items():
        frame.to_csv(out / name, index=False)
        print(f"wrote {out / name}")
    command = "slicewise " + " ".join(sys.argv[1:]) if sys.argv[1:] else ""
    lines = [f"Command: `{command}`", "", result.table(), ""]
    for budget in [*result.budgets, "overall"]:
        grid = result.grid(budget)
        lines += [
            f"Geometric-mean RE of LACE over cells, n = {budget} (rows lambda, columns h/h0):",
            "",
            "| lambda | " + " | ".join(f"{c:g}" for c in grid.columns) + " |",
            "|" + "---|" * (len(grid.columns) + 1),
            *[
                f"| {r:g} | " + " | ".join(f"{v:.3f}" for v in grid.loc[r]) + " |"
                for r in grid.index
            ],
            "",
        ]
    (out / "stress.md").write_text("\n".join(lines))
    print(f"wrote {out / 'stress.md'}")


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
        ridge=args.ridge,
        rng=args.seed,
        progress=not args.no_progress,
    )
    _report_study(result, args)
    return 0
