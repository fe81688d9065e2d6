"""``slicewise domains``, ``slicewise validate`` and ``slicewise sample``: design-based domains."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..methods.options import add_option_flags, given_options
from ._common import _columns, add_report_arg, strata_column_hint, write_report

if TYPE_CHECKING:
    import pandas as pd

    from ..domains.results import DomainResult

METHODS = ("ht", "hajek", "ppi", "ppi++", "greg", "greg-or-hajek", "fh", "pp-s", "pp-ts")


def _add_design_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("items", help="item table with a design: CSV, Parquet or JSON Lines")
    parser.add_argument(
        "--domain", required=True, type=_columns, help="domain column(s), comma-separated"
    )
    parser.add_argument("--label", required=True, help="gold label column (missing = unsampled)")
    parser.add_argument(
        "--signals", type=_columns, default=None, help="auxiliary columns, comma-separated"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--inclusion", default="pi", help="inclusion-probability column (pi)")
    group.add_argument(
        "--srs", action="store_true", help="simple random sampling within --strata (no column)"
    )
    parser.add_argument(
        "--strata", default=None, metavar="COL", help="stratum column of a stratified design"
    )
    parser.add_argument("--prediction", default=None, help="prediction column for PPI / PPI++")
    parser.add_argument("--taxonomy", type=_columns, default=None, help="taxonomy level columns")
    parser.add_argument(
        "--covariates",
        type=_columns,
        default=["auto"],
        help="domain covariates: auto, signals, prediction, none, or column names",
    )
    parser.add_argument(
        "--direct",
        choices=["greg-or-hajek", "greg", "ht"],
        default="greg-or-hajek",
        help="direct estimator under the smoothing (greg-or-hajek)",
    )
    parser.add_argument("--variance-df", type=float, default=4.0, help="variance pooling (4)")
    parser.add_argument("--prior-scale", type=float, default=0.25, help="half-Cauchy scale")
    add_option_flags(parser, ["objective"])
    parser.add_argument("--level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the outputs")


def add_domains_args(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``slicewise domains``."""
    _add_design_args(parser)
    parser.add_argument("--method", choices=METHODS, default="pp-s", help="estimator (pp-s)")
    add_report_arg(parser)


def add_validate_args(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``slicewise validate``."""
    _add_design_args(parser)
    add_report_arg(parser)
    parser.add_argument(
        "--candidates", type=_columns, default=None, help=f"estimators among {', '.join(METHODS)}"
    )
    parser.add_argument("--folds", type=int, default=5, help="DB-CV folds K (5)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")


def add_sample_args(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``slicewise sample``."""
    parser.add_argument("items", help="item table: CSV, Parquet or JSON Lines")
    parser.add_argument("--design", choices=["srs", "stratified", "poisson"], default="stratified")
    parser.add_argument(
        "--strata", default=None, metavar="COL", help="stratum column (stratified designs)"
    )
    size = parser.add_mutually_exclusive_group(required=True)
    size.add_argument("--budget", type=int, default=None, help="number of units to label")
    size.add_argument("--fraction", type=float, default=None, help="share of units to label")
    parser.add_argument(
        "--allocation", choices=["proportional", "equal", "neyman"], default="proportional"
    )
    parser.add_argument("--neyman", default=None, help="column of per-unit sd guesses (neyman)")
    parser.add_argument("--size", default=None, help="size column (poisson: pi proportional)")
    parser.add_argument("--minimum", type=int, default=2, help="least units per stratum (2)")
    parser.add_argument("--label", required=True, type=_columns, help="label column(s) to mask")
    parser.add_argument("--seed", type=int, default=None, help="random seed")
    parser.add_argument("--out", required=True, type=Path, help="output table with the design")


def _design_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    covariates: Any = args.covariates[0] if len(args.covariates) == 1 else args.covariates
    if covariates not in ("auto", "signals", "prediction", "none"):
        covariates = list(args.covariates)
    return {
        "domain": args.domain if len(args.domain) > 1 else args.domain[0],
        "label": args.label,
        "signals": args.signals,
        "inclusion": None if args.srs else args.inclusion,
        "strata": args.strata,
        "prediction": args.prediction,
        "taxonomy": args.taxonomy,
        "covariates": covariates,
        "direct": args.direct,
        "variance_df": args.variance_df,
        "prior_scale": args.prior_scale,
        "level": args.level,
        **given_options(args, ["objective"]),
    }


def _table(result: DomainResult) -> str:
    frame = result.to_frame()
    shown = [c for c in frame.columns if c not in ("direct_estimate", "direct_se", "method")]
    formatters = {
        c: (lambda v: "" if not math.isfinite(v) else f"{v:.4f}")
        for c in ("estimate", "se", "lower", "upper", "shrinkage")
        if c in frame.columns
    }
    header = (
        f"{result.method} estimates of {len(frame)} domains; {round(result.level * 100)}% intervals"
    )
    return header + "\n" + frame[shown].to_string(index=False, formatters=formatters)


def _write(
    result: DomainResult, out: Path, stem: str, extra: dict[str, pd.DataFrame]
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    path = out / f"{stem}.csv"
    result.to_frame().to_csv(path, index=False)
    written.append(path)
    path = out / f"{stem}.json"
    path.write_text(json.dumps(result.to_dict(), indent=2, default=str) + "\n")
    written.append(path)
    for name, frame in extra.items():
        path = out / name
        frame.to_csv(path, index=False)
        written.append(path)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return written
    import matplotlib.pyplot as plt

    from ..reports.plot import new_axes

    fig, axes = new_axes(height=max(3.6, 0.25 * result.size))
    result.plot(axes[0])
    fig.tight_layout()
    path = out / f"{stem}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [*written, path]


def _notes(notes: tuple[str, ...], args: argparse.Namespace) -> None:
    for note in notes:
        print(f"note: {note}")
        args.printed_notes.add(note)


def run_domains(args: argparse.Namespace) -> int:
    """``slicewise domains``: one estimator for every domain."""
    from ..domains import domains

    with strata_column_hint(args):
        result = domains(args.items, method=args.method, **_design_kwargs(args))
    print(_table(result))
    _notes(result.notes, args)
    if args.out is not None:
        for path in _write(result, args.out, "domains", {}):
            print(f"wrote {path}")
    write_report(args, result, label=args.label)
    return 0


def run_validate(args: argparse.Namespace) -> int:
    """``slicewise validate``: design-based cross-validation selects and reports the error."""
    from ..domains import validate

    with strata_column_hint(args):
        result = validate(
            args.items,
            candidates=args.candidates,
            folds=args.folds,
            rng=args.seed,
            **_design_kwargs(args),
        )
    scores = result.scores()
    print(scores.to_string(index=False))
    print(
        f"\nselected {result.selected}; reported RMSE {result.reported_rmse:.4f} "
        f"(design-based {result.folds}-fold CV)\n"
    )
    print(_table(result.result))
    _notes(result.notes, args)
    if args.out is not None:
        for path in _write(result.result, args.out, "validated", {"scores.csv": scores}):
            print(f"wrote {path}")
    write_report(args, result, label=args.label)
    return 0


def run_sample(args: argparse.Namespace) -> int:
    """``slicewise sample``: draw a probability sample and write the table with its design."""
    from ..data.files import read_table, write_table
    from ..domains.sample import sample

    frame = read_table(args.items)
    with strata_column_hint(args):
        drawn = sample(
            frame,
            design=args.design,
            strata=args.strata,
            budget=args.budget,
            fraction=args.fraction,
            allocation=args.allocation,
            neyman=args.neyman,
            size=args.size,
            minimum=args.minimum,
            rng=args.seed,
        )
    labels = args.label if len(args.label) > 1 else args.label[0]
    out = drawn.apply(frame, label=labels, strata="stratum" if args.strata else None)
    write_table(out, args.out)
    print(drawn.to_frame().to_string(index=False))
    print(f"\nwrote {args.out}: {drawn.n_sampled} of {len(frame)} units labeled")
    return 0
