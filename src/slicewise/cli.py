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
from .cli_domains import (
    add_domains_args,
    add_sample_args,
    add_validate_args,
    run_domains,
    run_sample,
    run_validate,
)
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
        default=None,
        choices=sorted(METHODS),
        metavar="NAME",
        help="estimator (see `slicewise methods`; default auto; lace with --rank and --deploy)",
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
    parser.add_argument(
        "--seed", type=int, default=None, help="seed for cross-fitting methods (default 0)"
    )
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
        help="directory for profile.csv, profile.json and profile.png (with the flags below: "
        "profiles.*, gap.*, ranking.*, deploy.* or cascade.*)",
    )
    _add_model_args(parser)


def _run_profile(args: argparse.Namespace) -> int:
    from .api import profile
    from .reports.output import format_table, write_outputs

    mode, label = _profile_mode(args)
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


def _add_model_args(parser: argparse.ArgumentParser) -> None:
    models = parser.add_argument_group(
        "several models",
        "a long table (--model-col; one row per model-item) or a wide one (--label c1,c2: one "
        "label column per model, named by the column; or --label m1=c1,m2=c2)",
    )
    models.add_argument(
        "--model-col", default=None, metavar="COL", help="model column of a long table"
    )
    models.add_argument(
        "--models", type=_columns, default=None, metavar="A,B", help="only these models"
    )
    models.add_argument(
        "--pair", type=_columns, default=None, metavar="A,B", help="gap profile A - B (sw.gap)"
    )
    models.add_argument(
        "--paired-signals",
        choices=["both", "difference"],
        default=None,
        help="--pair/--rank: the two models' signals side by side (default) or their difference",
    )
    models.add_argument(
        "--rank", action="store_true", help="all pairwise gaps, simultaneous (sw.rank_models)"
    )
    models.add_argument(
        "--correction", choices=["maxt", "bonferroni"], default=None, help="--rank (maxt)"
    )
    models.add_argument(
        "--draws", type=int, default=None, metavar="N", help="--rank: max-|t| draws (10000)"
    )
    models.add_argument(
        "--deploy",
        default=None,
        metavar="FILE|SPEC",
        help="score under a deployment mix LEVEL=WEIGHT,... or a file (sw.read_deploy)",
    )
    cascade = parser.add_argument_group("cascaded raters (sw.cascade)")
    cascade.add_argument(
        "--rater",
        type=_columns,
        default=None,
        metavar="COL[,COL]",
        help="expensive rater column(s): present on a random subset that holds the labeled items",
    )
    cascade.add_argument(
        "--cost-rater", type=float, default=None, metavar="X", help="cost of one rater call"
    )
    cascade.add_argument(
        "--cost-label",
        type=float,
        default=None,
        metavar="Y",
        help="cost of one gold label (with --cost-rater: does the rater pay for itself?)",
    )


#: What each profile analysis is called in error messages.
ANALYSES = {
    "single": "a one-model profile",
    "models": "per-model profiles (--model-col or several --label columns)",
    "pair": "--pair",
    "rank": "--rank",
    "deploy": "--deploy",
    "cascade": "--rater",
}

#: Options that only some analyses take: dest -> (flag, value when not given, analyses).
OPTION_USE: dict[str, tuple[str, object, tuple[str, ...]]] = {
    "select": ("--select", False, ("single",)),
    "shrinkage": ("--shrinkage", None, ("single",)),
    "learner": ("--learner", "logistic", ("single",)),
    "primary": ("--primary", None, ("single", "models")),
    "C": ("--C", 1.0, ("single", "models", "pair")),
    "strata": ("--strata", 5, ("single", "models", "pair")),
    "seed": ("--seed", None, ("single", "models", "pair", "rank")),
    "models": ("--models", None, ("models", "rank", "deploy")),
    "paired_signals": ("--paired-signals", None, ("pair", "rank")),
    "correction": ("--correction", None, ("rank",)),
    "draws": ("--draws", None, ("rank",)),
    "cost_rater": ("--cost-rater", None, ("cascade",)),
    "cost_label": ("--cost-label", None, ("cascade",)),
}


def _label_spec(args: argparse.Namespace) -> str | list[str] | dict[str, str]:
    """``--label``: one column, or (with a comma, and not itself a column) one per model."""
    from .data.files import read_table

    text: str = args.label
    parts = [p.strip() for p in text.split(",")]
    if len(parts) < 2 or text in read_table(args.items).columns:
        return text
    if args.model_col is not None:
        raise ValueError(
            f"--label {text!r} names several columns, but --model-col {args.model_col!r} makes "
            "the table long: give its one gold-label column."
        )
    split = [p.partition("=") for p in parts]
    if not all(parts) or any(sep and not (k.strip() and v.strip()) for k, sep, v in split):
        raise ValueError(
            f"--label {text!r} has an empty entry; expected c1,c2 (one label column per model) "
            "or m1=c1,m2=c2 (model=column)."
        )
    if not any(sep for _, sep, _ in split):
        return parts
    if not all(sep for _, sep, _ in split):
        raise ValueError(
            f"--label {text!r} mixes model=column pairs and plain columns; use one form: c1,c2 "
            "or m1=c1,m2=c2."
        )
    mapping = {k.strip(): v.strip() for k, _, v in split}
    if len(mapping) < len(split):
        raise ValueError(f"--label {text!r} names a model more than once.")
    return mapping


def _profile_mode(args: argparse.Namespace) -> tuple[str, str | list[str] | dict[str, str]]:
    """Which analysis the flags ask for, after checking that they fit together."""
    label = _label_spec(args)
    multi = args.model_col is not None or not isinstance(label, str)
    asked = [
        (flag, mode)
        for flag, mode, given in (
            ("--pair", "pair", args.pair is not None),
            ("--rank", "rank", args.rank),
            ("--deploy", "deploy", args.deploy is not None),
            ("--rater", "cascade", args.rater is not None),
        )
        if given
    ]
    if len(asked) > 1:
        raise ValueError(
            f"{' and '.join(f for f, _ in asked)} are separate analyses; give one of --pair, "
            "--rank, --deploy and --rater per run."
        )
    mode = asked[0][1] if asked else ("models" if multi else "single")
    if mode in ("pair", "rank") and not multi:
        raise ValueError(
            f"{ANALYSES[mode]} compares models: give --model-col COL (long table) or one label "
            f"column per model, --label c1,c2 (wide table); got the one label column {label!r}."
        )
    if mode == "cascade" and multi:
        raise ValueError(
            "--rater profiles one model's table; it does not combine with --model-col or several "
            "--label columns."
        )
    if args.models is not None and not multi:
        raise ValueError(
            "--models picks models of a long (--model-col) or wide (--label c1,c2) table; this "
            f"table has the one label column {label!r}."
        )
    for dest, (flag, unset, uses) in OPTION_USE.items():
        value = getattr(args, dest)
        if value != unset and mode not in uses:
            wanted = " or ".join(ANALYSES[u] for u in uses)
            raise ValueError(
                f"{flag} applies to {wanted}, not to {ANALYSES[mode]}; got {flag} {value}."
            )
    if (args.cost_rater is None) != (args.cost_label is None):
        raise ValueError("--cost-rater and --cost-label go together; give both or neither.")
    if args.pair is not None and len(args.pair) != 2:
        raise ValueError(f"--pair takes exactly two models A,B; got {','.join(args.pair)!r}.")
    args.method = _method_for(mode, args.method)
    return mode, label


def _method_for(mode: str, method: str | None) -> str:
    from .methods.control_variates import LINEAR_METHODS

    if mode == "cascade":
        if method is not None:
            raise ValueError(
                f"--rater runs the cascade estimator, which has no --method choice; got --method "
                f"{method}."
            )
        return "cascade"
    if mode in ("rank", "deploy"):
        if method is None:
            return "lace"
        if method not in LINEAR_METHODS:
            raise ValueError(
                f"{ANALYSES[mode]} needs a linear method's influence values: --method "
                f"{', '.join(LINEAR_METHODS)}; got --method {method}."
            )
    return method or "auto"


def _common(args: argparse.Namespace) -> dict[str, Any]:
    """Options every multi-model function takes, as keywords."""
    return {
        "z": args.z if len(args.z) > 1 else args.z[0],
        "kind": args.kind,
        "grid": args.grid,
        "bandwidth": args.bandwidth,
        "nuisance_scale": args.nuisance_scale,
        "ridge": args.ridge,
        "level": args.level,
        "target": args.target,
        "id": args.id_col,
    }


def _seed(args: argparse.Namespace) -> int:
    """The seed of the randomised functions: 0 unless --seed is given, as for a one profile."""
    return 0 if args.seed is None else int(args.seed)


def _report(args: argparse.Namespace, text: str, notes: Sequence[str], write: Any) -> int:
    """Print the table and the notes; with --out, call ``write(out)`` and list the files."""
    print(text)
    _print_notes(notes, args.printed_notes)
    if args.out is not None:
        for path in write(args.out):
            print(f"wrote {path}")
    return 0


def _run_models(args: argparse.Namespace, label: Any) -> int:
    from .models import profile_models
    from .reports.model_output import format_models, write_models

    result = profile_models(
        args.items,
        label=label,
        signals=args.signals,
        model=args.model_col,
        models=args.models,
        method=args.method,
        primary=args.primary,
        C=args.C,
        strata=args.strata,
        rng=_seed(args),
        **_common(args),
    )
    notes = [n for p in result.profiles for n in p.notes]
    return _report(args, format_models(result), notes, lambda out: write_models(result, out))


def _run_pair(args: argparse.Namespace, label: Any) -> int:
    from .gaps import gap
    from .reports.output import format_table, write_outputs

    a, b = args.pair
    result = gap(
        args.items,
        model_a=a,
        model_b=b,
        label=label,
        signals=args.signals,
        model=args.model_col,
        method=args.method,
        paired_signals=args.paired_signals or "both",
        C=args.C,
        strata=args.strata,
        rng=_seed(args),
        **_common(args),
    )
    text = (
        f"Gap {a} - {b} from paired differences on {result.params['n_pairs']} items labeled for "
        f"both (> 0: {a} scores higher)\n" + format_table(result)
    )
    return _report(args, text, result.notes, lambda out: write_outputs(result, out, stem="gap"))


def _run_rank(args: argparse.Namespace, label: Any) -> int:
    from .gaps import rank_models
    from .reports.model_output import format_ranking, write_ranking

    options: dict[str, Any] = {
        k: v
        for k, v in (
            ("paired_signals", args.paired_signals),
            ("correction", args.correction),
            ("n_draws", args.draws),
        )
        if v is not None
    }
    result = rank_models(
        args.items,
        label=label,
        signals=args.signals,
        model=args.model_col,
        models=args.models,
        method=args.method,
        rng=_seed(args),
        **options,
        **_common(args),
    )
    return _report(
        args, format_ranking(result), result.notes, lambda out: write_ranking(result, out)
    )


def _deploy_tables(args: argparse.Namespace, label: Any) -> dict[str, tuple[Any, str]]:
    """Model name -> (its table, its label column) for one deployment score per model."""
    import pandas as pd

    from .data.files import read_table

    if args.model_col is None and isinstance(label, str):
        return {label: (args.items, label)}
    frame = read_table(args.items)
    if args.model_col is None:
        columns = label if isinstance(label, dict) else {c: c for c in label}
        names = list(columns) if args.models is None else args.models
        tables = {m: (frame, columns[m]) for m in names if m in columns}
    else:
        if args.model_col not in frame.columns:
            raise ValueError(
                f"--model-col {args.model_col!r} is not a column of the table; columns: "
                f"{list(frame.columns)[:30]}."
            )
        if frame[args.model_col].isna().any():
            raise ValueError(
                f"--model-col {args.model_col!r} has {int(frame[args.model_col].isna().sum())} "
                "missing values; every row of a long table must name its model."
            )
        model = frame[args.model_col].astype(str)
        names = list(pd.unique(model)) if args.models is None else args.models
        tables = {m: (frame[model == m], label) for m in names if (model == m).any()}
    unknown = [m for m in names if m not in tables]
    if unknown:
        raise ValueError(f"--models names model(s) {unknown} that are not in the table.")
    return tables


def _run_deploy(args: argparse.Namespace, label: Any) -> int:
    from .deploy import deployment_score, read_deploy
    from .reports.model_output import format_deploy, write_deploy

    deploy: Any = read_deploy(args.deploy)  # a mapping or a sample, as deploy= takes
    tables = _deploy_tables(args, label)
    scores = {
        name: deployment_score(
            table,
            label=column,
            deploy=deploy,
            signals=args.signals,
            method=args.method,
            **_common(args),
        )
        for name, (table, column) in tables.items()
    }
    by_model = args.model_col is not None or not isinstance(label, str)
    notes = [f"model {m!r}: {n}" if by_model else n for m, s in scores.items() for n in s.notes]
    args.printed_notes.update(n for s in scores.values() for n in s.notes)
    text = format_deploy(scores, deploy=deploy, by_model=by_model)
    return _report(
        args,
        text,
        notes,
        lambda out: write_deploy(scores, out, deploy=deploy, by_model=by_model),
    )


def _run_cascade(args: argparse.Namespace, label: Any) -> int:
    from .cascade import cascade
    from .reports.output import format_table, write_outputs

    result = cascade(
        args.items, signals=args.signals, rater=args.rater, label=label, **_common(args)
    )
    _report(
        args, format_table(result), result.notes, lambda o: write_outputs(result, o, stem="cascade")
    )
    if args.cost_rater is not None:
        _report_break_even(args, result)
    return 0


def _report_break_even(args: argparse.Namespace, result: Any) -> None:
    from .cascade import cascade_break_even
    from .reports.model_output import format_plan, plan_frame, write_plan

    r2_xs = np.asarray(result.params["r2_y_xs"], dtype=np.float64)
    r2_s = np.asarray(result.params["r2_y_s"], dtype=np.float64)
    finite = np.isfinite(r2_xs) & np.isfinite(r2_s)
    if not finite.any():
        raise ValueError(
            "--cost-rater/--cost-label: no grid point has finite local R^2 values, so the "
            "break-even cost ratio cannot be computed."
        )
    plan = cascade_break_even(
        r2_y_xs=r2_xs[finite],
        r2_y_s=r2_s[finite],
        cost_rater=args.cost_rater,
        cost_label=args.cost_label,
    )
    frame = plan_frame(result, plan, finite)
    print()
    text = format_plan(frame, cost_rater=args.cost_rater, cost_label=args.cost_label)
    _report(args, text, [], lambda out: write_plan(frame, out))


#: The multi-model analyses of ``slicewise profile``: mode -> runner(args, label spec).
PROFILE_RUNS: dict[str, Callable[[argparse.Namespace, Any], int]] = {
    "models": _run_models,
    "pair": _run_pair,
    "rank": _run_rank,
    "deploy": _run_deploy,
    "cascade": _run_cascade,
}


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
