"""The ``slicewise`` command line.

Subcommands: ``profile`` (a profile from an item table, or every model, gaps, rankings, deployment
scores and cascades), ``methods``, ``topics`` (slices from a text column), ``demo``, ``study``, ``simulate``, ``import`` (evaluation-harness
logs), ``join`` (gold grades onto an item table), ``domains``, ``validate`` and ``sample``
(design-based domains), ``plan`` and ``next`` (labels needed per slice; the next batch to
label). Errors are printed as one
line naming the problem, with exit status 2; warnings as ``warning: ...`` lines.

Each subcommand's module is imported only when that subcommand runs (or its help is asked for),
so ``slicewise methods`` does not pay for the estimators' imports.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..exceptions import SlicewiseWarning
from ._out import check_out


class Command(NamedTuple):
    """A subcommand: its one-line help, and where its argument adder and runner live."""

    help: str
    module: str
    add_args: str | None
    run: str


COMMANDS: dict[str, Command] = {
    "profile": Command(
        "estimate a profile from an item table", ".profile", "_add_profile_args", "_run_profile"
    ),
    "methods": Command("list the estimators", ".misc", None, "_run_methods"),
    "topics": Command(
        "find topics (slices) from a text column, label-free",
        ".topics",
        "add_topics_args",
        "run_topics",
    ),
    "demo": Command("run on the shipped AlpacaEval 2 table", ".misc", None, "_run_demo"),
    "study": Command(
        "relative-efficiency study on matched label splits",
        ".study",
        "_add_study_args",
        "_run_study",
    ),
    "simulate": Command(
        "the LACE paper's Appendix I simulations", ".study", "_add_simulate_args", "_run_simulate"
    ),
    "import": Command(
        "read Inspect, lm-eval or HELM logs into an item table",
        ".misc",
        "_add_import_args",
        "_run_import",
    ),
    "join": Command(
        "add a column of gold grades to an item table by key",
        ".misc",
        "_add_join_args",
        "_run_join",
    ),
    "domains": Command(
        "design-based domain estimates (HT, Hajek, PPI, PPI++, GREG, FH, PP-S, PP-TS)",
        ".domains",
        "add_domains_args",
        "run_domains",
    ),
    "validate": Command(
        "design-based cross-validation: choose a domain estimator and report its error",
        ".domains",
        "add_validate_args",
        "run_validate",
    ),
    "sample": Command(
        "draw a probability sample to label (SRS, stratified, Poisson)",
        ".domains",
        "add_sample_args",
        "run_sample",
    ),
    "plan": Command(
        "how many more labels each slice needs for a target half-width",
        ".plan",
        "add_plan_args",
        "run_plan",
    ),
    "next": Command(
        "choose the next batch of items to label (adaptive or uniform)",
        ".plan",
        "add_next_args",
        "run_next",
    ),
}


def _load(command: Command, attr: str) -> Callable[..., Any]:
    function: Callable[..., Any] = getattr(importlib.import_module(command.module, __name__), attr)
    return function


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``slicewise`` command.

    Every subcommand is listed; the options are added for ``command`` only (for all of them when
    ``command`` is None), so parsing one subcommand imports only its own module.
    """
    parser = argparse.ArgumentParser(
        prog="slicewise",
        description="Model performance across a profile axis from a few gold labels and cheap signals.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, spec in COMMANDS.items():
        child = sub.add_parser(name, help=spec.help, description=spec.help)
        if command not in (None, name):
            continue
        if spec.add_args is not None:
            _load(spec, spec.add_args)(child)
        if name == "demo":
            child.add_argument("--out", type=Path, default=None, help="directory for the outputs")
            child.add_argument(
                "--topics",
                action="store_true",
                help="profile over topics found from the instructions, with the HTML report",
            )
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word not starting with '-'), if any."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``slicewise`` command; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    # without a known subcommand no options are needed: argparse prints the list or an error
    parser = build_parser(_command_of(words) or "")
    args = parser.parse_args(words)
    args.printed_notes = set()
    args.command_line = shlex.join(["slicewise", *words])
    spec = COMMANDS[args.command]
    run = _load(spec, spec.run)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SlicewiseWarning)
        try:
            check_out(args)
            status: int = run(args)
        except (ValueError, TypeError, OSError, ImportError) as err:
            print(f"slicewise: error: {err}", file=sys.stderr)
            return 2
    for warning in caught:
        if str(warning.message) not in args.printed_notes:
            print(f"warning: {warning.message}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
