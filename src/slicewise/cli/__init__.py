"""The ``slicewise`` command line.

Subcommands: ``profile`` (a profile from an item table, or every model, gaps, rankings, deployment
scores and cascades), ``methods``, ``demo``, ``study``, ``simulate``, ``import`` (evaluation-harness
logs), ``join`` (gold grades onto an item table), ``domains``, ``validate`` and ``sample``
(design-based domains), ``plan`` and ``next`` (labels needed per slice; the next batch to
label). Errors are printed as one
line naming the problem, with exit status 2; warnings as ``warning: ...`` lines.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from ..exceptions import SlicewiseWarning
from ._out import check_out
from .domains import (
    add_domains_args,
    add_sample_args,
    add_validate_args,
    run_domains,
    run_sample,
    run_validate,
)
from .misc import _add_import_args, _add_join_args, _run_demo, _run_import, _run_join, _run_methods
from .plan import add_next_args, add_plan_args, run_next, run_plan
from .profile import _add_profile_args, _run_profile
from .study import _add_simulate_args, _add_study_args, _run_simulate, _run_study

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
    "join": ("add a column of gold grades to an item table by key", _add_join_args, _run_join),
    "domains": (
        "design-based domain estimates (HT, Hajek, PPI, PPI++, GREG, FH, PP-S, PP-TS)",
        add_domains_args,
        run_domains,
    ),
    "validate": (
        "design-based cross-validation: choose a domain estimator and report its error",
        add_validate_args,
        run_validate,
    ),
    "sample": (
        "draw a probability sample to label (SRS, stratified, Poisson)",
        add_sample_args,
        run_sample,
    ),
    "plan": (
        "how many more labels each slice needs for a target half-width",
        add_plan_args,
        run_plan,
    ),
    "next": (
        "choose the next batch of items to label (adaptive or uniform)",
        add_next_args,
        run_next,
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
    args.command_line = shlex.join(["slicewise", *(sys.argv[1:] if argv is None else argv)])
    _, _, run = COMMANDS[args.command]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SlicewiseWarning)
        try:
            check_out(args)
            status = run(args)
        except (ValueError, TypeError, OSError, ImportError) as err:
            print(f"slicewise: error: {err}", file=sys.stderr)
            return 2
    for warning in caught:
        if str(warning.message) not in args.printed_notes:
            print(f"warning: {warning.message}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
