"""The ``slicewise`` command line.

Subcommands: ``profile`` (estimate a profile from an item table), ``methods`` (list the methods),
``demo`` (run on the shipped AlpacaEval table). Errors are printed as one line naming the problem,
with exit status 2; warnings are printed as ``warning: ...`` lines.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._typing import Kind
from .exceptions import SlicewiseWarning


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


def _add_profile_args(parser: argparse.ArgumentParser) -> None:
    from .methods.registry import METHODS

    parser.add_argument("items", help="item table: CSV, Parquet or JSON Lines")
    parser.add_argument(
        "--z", required=True, type=_columns, help="profile column(s), comma-separated"
    )
    parser.add_argument(
        "--kind",
        choices=["continuous", "ordinal", "categorical"],
        default=None,
        help="locality rule (default: inferred from the column type)",
    )
    parser.add_argument("--signals", type=_columns, default=None, help="cheap-signal columns")
    parser.add_argument("--label", required=True, help="gold label column (missing = unlabeled)")
    parser.add_argument(
        "--method",
        default="auto",
        choices=sorted(METHODS),
        metavar="NAME",
        help="estimator (see `slicewise methods`; default auto)",
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
    parser.add_argument(
        "--nuisance-scale",
        type=_float_or_inf,
        default=1.0,
        help="nuisance bandwidth b as a multiple of h (inf: pooled coefficient)",
    )
    parser.add_argument("--ridge", type=float, default=0.3, help="ridge penalty lambda (0.3)")
    parser.add_argument("--primary", default=None, help="primary judge signal column")
    parser.add_argument("--C", dest="C", type=float, default=1.0, help="logistic C (1.0)")
    parser.add_argument("--strata", type=int, default=5, help="strata of strat_ppi (5)")
    parser.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--target", choices=["pool", "population"], default="pool")
    parser.add_argument("--id", dest="id_col", default=None, help="item id column")
    parser.add_argument("--seed", type=int, default=None, help="seed for cross-fitting methods")
    parser.add_argument(
        "--shrinkage",
        type=_float_or_inf,
        default=None,
        help="kappa of lace_shrunk/lace_learned/auto (default: chosen by CV)",
    )
    parser.add_argument(
        "--learner",
        choices=["logistic", "boosting"],
        default="logistic",
        help="learner of the cross-fitted prediction (lace_learned, auto)",
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
        help="directory for profile.csv, profile.json and profile.png",
    )


def _run_profile(args: argparse.Namespace) -> int:
    from .api import profile
    from .reports.output import format_table, write_outputs

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
        nuisance_scale=args.nuisance_scale,
        ridge=args.ridge,
        primary=args.primary,
        C=args.C,
        strata=args.strata,
        shrinkage=args.shrinkage,
        learner=args.learner,
        level=args.level,
        target=args.target,
        id=args.id_col,
        rng=args.seed,
    )
    print(format_table(result))
    _print_notes(result.notes, args.printed_notes)
    if args.out is not None:
        for path in write_outputs(result, args.out):
            print(f"wrote {path}")
    return 0


def _run_select(args: argparse.Namespace) -> int:
    from .reports.output import format_table, write_outputs
    from .selection.cv import select

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
        rng=args.seed,
        nuisance_scale=args.nuisance_scale,
        ridge=args.ridge,
        C=args.C,
        strata=args.strata,
        id=args.id_col,
    )
    curve = chosen.mean_score
    print(f"within-L {chosen.scores.shape[1]}-fold CV of {chosen.method}'s {chosen.parameter}:")
    for value, score in zip(chosen.grid, curve, strict=True):
        mark = "  <- chosen" if value == chosen.chosen else ""
        print(f"  {chosen.parameter} = {value:g}: CV score {score:.6g}{mark}")
    print()
    print(format_table(chosen.result))
    _print_notes(chosen.result.notes, args.printed_notes)
    if args.out is not None:
        for path in write_outputs(chosen.result, args.out):
            print(f"wrote {path}")
    return 0


def _print_notes(notes: Sequence[str], printed: set[str] | None = None) -> None:
    for note in notes:
        print(f"note: {note}")
        if printed is not None:
            printed.add(note)


def _run_methods(args: argparse.Namespace) -> int:
    from .methods.registry import methods

    frame = methods()
    print(frame.to_string(index=False))
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from .api import profile
    from .datasets import DEMO_SIGNALS, load_demo
    from .reports.output import format_table, write_outputs

    frame = load_demo()
    n_lab = int(frame["gold"].notna().sum())
    print(
        "slicewise demo: AlpacaEval 2, candidate claude-2.1 (GPT-4-turbo judge preference over "
        f"gpt4_1106_preview).\nGold labels on a random {n_lab} of {len(frame)} instructions; cheap "
        "signals on all: five other models' preferences and the output length.\n"
        "The full-pool truth is known here, so each profile is compared with it: naive (gold\n"
        "labels only), the LACE paper's estimator, and slicewise's default (auto).\n"
    )
    runs: list[tuple[str, str, Kind]] = [
        ("length", "log_instruction_len", "continuous"),
        ("dataset", "dataset", "categorical"),
    ]
    for stem, z, kind in runs:
        truth = profile(frame, z=z, label="truth", kind=kind, method="naive").estimate
        for method in ("naive", "lace", "auto"):
            result = profile(
                frame, z=z, signals=DEMO_SIGNALS, label="gold", kind=kind, method=method
            )
            print(format_table(result, truth=truth))
            _print_notes(result.notes, args.printed_notes)
            finite = np.isfinite(result.estimate)
            rmse = float(np.sqrt(np.mean((result.estimate[finite] - truth[finite]) ** 2)))
            interval = result.ci()
            covered = float(np.mean((interval.low <= truth) & (truth <= interval.high)))
            print(
                f"-> RMSE against the full-pool truth: {rmse:.4f}; "
                f"{covered:.0%} of the grid points covered\n"
            )
            if method == "auto" and args.out is not None:
                for path in write_outputs(result, Path(args.out) / stem, truth=truth):
                    print(f"wrote {path}")
                print()
    return 0


def _budgets(text: str) -> list[int]:
    try:
        return [int(b) for b in text.split(",") if b.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError("expected comma-separated integers") from err


def _add_study_common(parser: argparse.ArgumentParser, *, budgets: str, reps: int) -> None:
    from .methods.registry import METHODS

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
    parser.add_argument("--z", required=True, type=_columns, help="profile column(s)")
    parser.add_argument("--kind", choices=["continuous", "ordinal", "categorical"], default=None)
    parser.add_argument("--signals", type=_columns, default=None, help="cheap-signal columns")
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
    from .data.files import read_table
    from .studies.engine import CellSpec, study_cells
    from .studies.sensitivity import cv_study, sparse_region, stress_grid

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
    if args.cv and args.out is not None:
        from .studies.sensitivity import chosen_parameters

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
    from .reports.study_output import write_study_outputs

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
    from .reports.study_output import write_gain_outputs
    from .studies.simulate import gain_check, simulate

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


def _add_import_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "kind", choices=["inspect", "lm-eval", "helm"], help="which harness wrote the logs"
    )
    parser.add_argument("paths", nargs="+", help="log files or directories")
    parser.add_argument(
        "--out", required=True, type=Path, help="output table (.parquet, .csv or .jsonl)"
    )
    parser.add_argument("--scorer", type=_columns, default=None, help="inspect: scorer(s) to keep")
    parser.add_argument("--metric", type=_columns, default=None, help="lm-eval: metric(s) to keep")
    parser.add_argument("--filter", default=None, help="lm-eval: the filter to read")
    parser.add_argument("--stats", type=_columns, default=None, help="helm: stat name(s) to keep")
    parser.add_argument(
        "--keep-perturbations",
        action="store_true",
        help="helm: keep perturbed instances (dropped by default, with a warning)",
    )


def _run_import(args: argparse.Namespace) -> int:
    from .io import import_logs

    options: dict[str, Any] = {}
    if args.scorer is not None:
        options["scorer"] = args.scorer
    if args.metric is not None:
        options["metric"] = args.metric
    if args.filter is not None:
        options["filter"] = args.filter
    if args.stats is not None:
        options["stats"] = args.stats
    if args.keep_perturbations:
        options["perturbations"] = "keep"
    frame = import_logs(args.kind, args.paths, args.out, **options)
    print(f"wrote {args.out}: {len(frame)} rows, columns {', '.join(map(str, frame.columns))}")
    return 0


COMMANDS: dict[
    str,
    tuple[
        str, Callable[[argparse.ArgumentParser], None] | None, Callable[[argparse.Namespace], int]
    ],
] = {
    "profile": ("estimate a profile from an item table", _add_profile_args, _run_profile),
    "methods": ("list the estimators", None, _run_methods),
    "demo": ("run on the shipped AlpacaEval 2 table", None, _run_demo),
    "study": ("relative-efficiency study on matched label splits", _add_study_args, _run_study),
    "simulate": ("the LACE paper's Appendix I simulations", _add_simulate_args, _run_simulate),
    "import": (
        "read Inspect, lm-eval or HELM logs into an item table",
        _add_import_args,
        _run_import,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``slicewise`` command."""
    parser = argparse.ArgumentParser(
        prog="slicewise",
        description="Model performance across a profile axis from a few gold labels and cheap signals.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_args, _) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        if add_args is not None:
            add_args(child)
        if name == "demo":
            child.add_argument("--out", type=Path, default=None, help="directory for the outputs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slicewise`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.printed_notes = set()
    _, _, run = COMMANDS[args.command]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SlicewiseWarning)
        try:
            status = run(args)
        except (ValueError, TypeError, FileNotFoundError, ImportError) as err:
            print(f"slicewise: error: {err}", file=sys.stderr)
            return 2
    for warning in caught:
        if str(warning.message) not in args.printed_notes:
            print(f"warning: {warning.message}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
