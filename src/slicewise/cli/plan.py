"""``slicewise plan`` (labels needed per slice) and ``slicewise next`` (which items to label next)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..methods.options import add_option_flags, given_options
from ._common import (
    _columns,
    _grid,
    _print_notes,
    add_levels_arg,
    add_report_arg,
    apply_levels,
    write_report,
)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "items", help="item table: CSV, Parquet, JSON (array of records) or JSON Lines"
    )
    parser.add_argument(
        "--z", required=True, type=_columns, help="profile column(s), comma-separated"
    )
    parser.add_argument(
        "--kind",
        choices=["continuous", "ordinal", "categorical"],
        default=None,
        help="locality rule (default: inferred from the column type)",
    )
    add_levels_arg(parser)
    parser.add_argument(
        "--signals", type=_columns, default=None, help="cheap-signal columns, comma-separated"
    )
    parser.add_argument(
        "--grid", type=_grid, default=None, help="number of grid points, or comma-separated points"
    )
    parser.add_argument("--bandwidth", type=float, default=None, help="profile bandwidth")
    parser.add_argument(
        "--halfwidth", type=float, default=0.05, help="target interval half-width (0.05)"
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--id", dest="id_col", default=None, help="item id column")
    add_option_flags(parser, ["uncertainty"])


def add_plan_args(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``slicewise plan``."""
    _add_common(parser)
    parser.add_argument(
        "--label",
        default=None,
        help="gold label column (missing = unlabeled); without it, or before any label, a "
        "budget from --r2 and --base-rate",
    )
    parser.add_argument("--method", default="auto", help="method planned for (default auto)")
    parser.add_argument(
        "--inclusion",
        default=None,
        help="inclusion-probability column of the labeled rows (pi, as written by "
        "slicewise next); needs a method that supports it (auto, global_cv, lace, ...)",
    )
    parser.add_argument(
        "--r2",
        type=lambda text: tuple(float(v) for v in text.split(",")),
        default=(0.0, 0.5),
        metavar="LOW,HIGH",
        help="budget before any label: assumed local R^2 range of the signals (0,0.5)",
    )
    parser.add_argument(
        "--base-rate", type=float, default=0.5, help="budget: assumed mean label (0.5)"
    )
    parser.add_argument(
        "--strategy",
        choices=["adaptive", "uniform"],
        default="adaptive",
        help="the design the labels will be drawn with: adaptive (`slicewise next`'s, the "
        "default) or uniform within each slice",
    )
    parser.add_argument(
        "--floor", type=float, default=0.3, help="uniform share of `slicewise next`'s batch (0.3)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of cross-fitting methods")
    parser.add_argument(
        "--out", type=Path, default=None, help="write the per-slice plan to this CSV file"
    )
    parser.add_argument("--plot", type=Path, default=None, help="write the plan's plot (PNG)")
    add_report_arg(parser)


def run_plan(args: argparse.Namespace) -> int:
    """``slicewise plan``."""
    from ..planning.plan import plan
    from ..reports.html_more import plan_html

    apply_levels(args)
    r2 = args.r2 if len(args.r2) != 1 else args.r2[0]
    result = plan(
        args.items,
        z=args.z if len(args.z) > 1 else args.z[0],
        signals=args.signals,
        label=args.label,
        halfwidth=args.halfwidth,
        level=args.level,
        method=args.method,
        kind=args.kind,
        grid=args.grid,
        bandwidth=args.bandwidth,
        inclusion=args.inclusion,
        r2=r2,
        base_rate=args.base_rate,
        id=args.id_col,
        strategy=args.strategy,
        floor=args.floor,
        rng=args.seed,
        **given_options(args, ["uncertainty"]),
    )
    print(
        f"plan ({result.method}): labels to reach a {result.level:.0%} half-width of "
        f"{result.target:g} at every grid point"
    )
    print(result.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(
        f"total additional labels: {result.total_more} (each slice its own share; "
        f"`slicewise next` samples toward it), {result.total_uniform} if spread uniformly"
    )
    _print_notes(result.notes, args.printed_notes)
    if args.out is not None:
        result.to_frame().to_csv(args.out, index=False)
        print(f"wrote {args.out}")
    if args.plot is not None:
        figure = result.plot().get_figure(root=True)
        if figure is not None:
            figure.savefig(args.plot, dpi=120, bbox_inches="tight")
        print(f"wrote {args.plot}")
    write_report(args, result, label=args.label, render=plan_html)
    return 0


def add_next_args(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``slicewise next``."""
    _add_common(parser)
    parser.add_argument("--label", required=True, help="gold label column (missing = unlabeled)")
    parser.add_argument(
        "--batch", type=int, default=200, help="expected number of items to select (200)"
    )
    parser.add_argument(
        "--strategy",
        choices=["adaptive", "uniform"],
        default="adaptive",
        help="adaptive: slices far from the target and items with a large predicted residual "
        "get more probability, with a uniform floor; uniform: equal probabilities",
    )
    parser.add_argument(
        "--method",
        default="auto",
        help="method whose standard errors define each slice's need (auto); finish with "
        "`slicewise profile --method <the same> --inclusion pi`",
    )
    parser.add_argument("--floor", type=float, default=0.3, help="uniform share of the batch (0.3)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the draw")
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help="file for the whole table with the columns 'selected' (label these) and 'pi' "
        "(the design); label the selected rows there and pass it to the next call",
    )


def run_next(args: argparse.Namespace) -> int:
    """``slicewise next``."""
    from ..data.files import write_table
    from ..planning.adaptive import next_items

    apply_levels(args)
    table = next_items(
        args.items,
        z=args.z if len(args.z) > 1 else args.z[0],
        signals=args.signals,
        label=args.label,
        batch=args.batch,
        strategy=args.strategy,
        halfwidth=args.halfwidth,
        level=args.level,
        method=args.method,
        floor=args.floor,
        kind=args.kind,
        grid=args.grid,
        bandwidth=args.bandwidth,
        id=args.id_col,
        rng=args.seed,
        **given_options(args, ["uncertainty"]),
    )
    write_table(table, args.out)
    chosen = int(table["selected"].sum())
    print(
        f"wrote {args.out}: {len(table)} rows, {chosen} selected (column 'selected'). Label them "
        f"in column '{args.label}', then run `slicewise next {args.out} ...` for another batch "
        f"or `slicewise profile {args.out} --method {args.method} --inclusion pi ...`."
    )
    _print_notes(table.attrs.get("notes", ()), args.printed_notes)
    return 0
