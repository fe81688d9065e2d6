"""``slicewise methods``, ``slicewise demo``, ``slicewise import`` and ``slicewise join``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._common import _columns, _print_notes

if TYPE_CHECKING:
    from .._typing import Kind


def _run_methods(args: argparse.Namespace) -> int:
    from .listing import format_listing

    print(format_listing())
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    import numpy as np

    if getattr(args, "topics", False):
        from .topics import run_topics_demo

        return run_topics_demo(args)

    from ..api import profile
    from ..datasets import DEMO_SIGNALS, load_demo
    from ..reports.output import format_table, write_outputs

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
    from ..io import import_logs

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


def _add_join_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", type=Path, help="item table (.parquet, .csv or .jsonl)")
    parser.add_argument("grades", type=Path, help="table of gold grades: key column(s) and a label")
    parser.add_argument(
        "--on",
        type=_columns,
        default=["item_id"],
        help="key column(s) in both tables, comma-separated (default item_id; e.g. model,doc_qid)",
    )
    parser.add_argument(
        "--label", default=None, help="label column of GRADES (default: its only non-key column)"
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="output table (.parquet, .csv or .jsonl)"
    )


def _run_join(args: argparse.Namespace) -> int:
    from ..data.files import read_table, write_table
    from ..io import add_grades

    items = add_grades(
        read_table(args.items), read_table(args.grades), on=args.on, label=args.label
    )
    label = items.columns[-1]
    graded = int(items[label].notna().sum())
    write_table(items, args.out)
    print(f"wrote {args.out}: {len(items)} rows, {graded} graded (column '{label}')")
    return 0
