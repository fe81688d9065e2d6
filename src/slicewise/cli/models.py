"""The multi-model paths of ``slicewise profile``: --model-col, --pair, --rank, --deploy, --rater."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ._common import _columns, _print_notes, write_report


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
    "primary": ("--primary", None, ("single", "models")),
    "bounded": ("--bounded", None, ("single",)),
    "missing": ("--missing", "impute", ("single", "models")),
    "models": ("--models", None, ("models", "rank", "deploy")),
    "paired_signals": ("--paired-signals", None, ("pair", "rank")),
    "correction": ("--correction", None, ("rank",)),
    "draws": ("--draws", None, ("rank",)),
    "cost_rater": ("--cost-rater", None, ("cascade",)),
    "cost_label": ("--cost-label", None, ("cascade",)),
}


def _analysis_function(mode: str) -> Callable[..., Any]:
    """The library function behind each analysis."""
    from ..api import profile
    from ..models.cascade import cascade
    from ..models.deploy import deployment_score
    from ..models.gaps import gap
    from ..models.profiles import profile_models
    from ..models.ranking import rank_models

    functions: dict[str, Callable[..., Any]] = {
        "single": profile,
        "models": profile_models,
        "pair": gap,
        "rank": rank_models,
        "deploy": deployment_score,
        "cascade": cascade,
    }
    return functions[mode]


def _tuning_uses() -> dict[str, tuple[str, object, tuple[str, ...]]]:
    """The declared tuning options as OPTION_USE entries: the analyses whose function takes
    each (read from the functions' signatures, so the two cannot disagree)."""
    from ..methods.options import CLI_OPTIONS, flag_of, options_taken

    taken = {mode: options_taken(_analysis_function(mode)) for mode in ANALYSES}
    return {
        name: (flag_of(name), None, tuple(m for m in ANALYSES if name in taken[m]))
        for name in CLI_OPTIONS
    }


def _options(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """The tuning options given on the command line that the analysis takes."""
    from ..methods.options import given_options, options_taken

    return given_options(args, options_taken(_analysis_function(mode)))


def _label_spec(args: argparse.Namespace) -> str | list[str] | dict[str, str]:
    """``--label``: one column, or (with a comma, and not itself a column) one per model."""
    from ..data.files import read_table

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
    uses_of = {
        dest: (flag, unset, uses) for dest, (flag, unset, uses) in OPTION_USE.items()
    } | _tuning_uses()
    for dest, (flag, unset, uses) in uses_of.items():
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
    from ..models.influence import INFLUENCE_METHODS

    if mode == "cascade":
        if method is not None:
            raise ValueError(
                f"--rater runs the cascade estimator, which has no --method choice; got --method "
                f"{method}."
            )
        return "cascade"
    if mode in ("rank", "deploy") and method is not None and method not in INFLUENCE_METHODS:
        raise ValueError(
            f"{ANALYSES[mode]} needs a linear method's influence values: --method "
            f"{', '.join(INFLUENCE_METHODS)}; got --method {method}."
        )
    return method or "auto"


def _common(args: argparse.Namespace) -> dict[str, Any]:
    """Options every multi-model function takes, as keywords."""
    return {
        "z": args.z if len(args.z) > 1 else args.z[0],
        "kind": args.kind,
        "grid": args.grid,
        "bandwidth": args.bandwidth,
        "level": args.level,
        "target": args.target,
        "id": args.id_col,
    }


def _report(args: argparse.Namespace, text: str, notes: Sequence[str], write: Any) -> int:
    """Print the table and the notes; with --out, call ``write(out)`` and list the files."""
    print(text)
    _print_notes(notes, args.printed_notes)
    if args.out is not None:
        for path in write(args.out):
            print(f"wrote {path}")
    return 0


def _run_models(args: argparse.Namespace, label: Any) -> int:
    from ..models.profiles import profile_models
    from ..reports.model_output import format_models, write_models

    result = profile_models(
        args.items,
        label=label,
        signals=args.signals,
        model=args.model_col,
        models=args.models,
        method=args.method,
        primary=args.primary,
        missing=args.missing,
        **_common(args),
        **_options(args, "models"),
    )
    notes = [n for p in result.profiles for n in p.notes]
    status = _report(args, format_models(result), notes, lambda out: write_models(result, out))
    write_report(args, result, label=label if isinstance(label, str) else None)
    return status


def _run_pair(args: argparse.Namespace, label: Any) -> int:
    from ..models.gaps import gap
    from ..reports.output import format_table, write_outputs

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
        **_common(args),
        **_options(args, "pair"),
    )
    text = (
        f"Gap {a} - {b} from paired differences on {result.params['n_pairs']} items labeled for "
        f"both (> 0: {a} scores higher)\n" + format_table(result)
    )
    status = _report(args, text, result.notes, lambda out: write_outputs(result, out, stem="gap"))
    write_report(args, result, label=label if isinstance(label, str) else None)
    return status


def _run_rank(args: argparse.Namespace, label: Any) -> int:
    from ..models.ranking import rank_models
    from ..reports.model_output import format_ranking, write_ranking

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
        **_options(args, "rank"),
        **options,
        **_common(args),
    )
    from ..reports.html_more import ranking_html

    status = _report(
        args, format_ranking(result), result.notes, lambda out: write_ranking(result, out)
    )
    write_report(args, result, label=label if isinstance(label, str) else None, render=ranking_html)
    return status


def _deploy_tables(args: argparse.Namespace, label: Any) -> dict[str, tuple[Any, str]]:
    """Model name -> (its table, its label column) for one deployment score per model."""
    import pandas as pd

    from ..data.files import read_table

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
    from ..models.deploy import deployment_score
    from ..models.deploy_mix import read_deploy
    from ..reports.html_more import deploy_html
    from ..reports.model_output import format_deploy, write_deploy

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
            **_options(args, "deploy"),
        )
        for name, (table, column) in tables.items()
    }
    by_model = args.model_col is not None or not isinstance(label, str)
    notes = [f"model {m!r}: {n}" if by_model else n for m, s in scores.items() for n in s.notes]
    args.printed_notes.update(n for s in scores.values() for n in s.notes)
    text = format_deploy(scores, deploy=deploy, by_model=by_model)
    status = _report(
        args,
        text,
        notes,
        lambda out: write_deploy(scores, out, deploy=deploy, by_model=by_model),
    )
    write_report(
        args,
        scores,
        label=label if isinstance(label, str) else None,
        render=partial(deploy_html, deploy=deploy, by_model=by_model),
    )
    return status


def _run_cascade(args: argparse.Namespace, label: Any) -> int:
    from ..models.cascade import cascade
    from ..reports.output import format_table, write_outputs

    result = cascade(
        args.items,
        signals=args.signals,
        rater=args.rater,
        label=label,
        **_common(args),
        **_options(args, "cascade"),
    )
    _report(
        args, format_table(result), result.notes, lambda o: write_outputs(result, o, stem="cascade")
    )
    if args.cost_rater is not None:
        _report_break_even(args, result)
    write_report(args, result, label=label if isinstance(label, str) else None)
    return 0


def _report_break_even(args: argparse.Namespace, result: Any) -> None:
    from ..models.cascade import cascade_break_even
    from ..reports.model_output import format_plan, plan_frame, write_plan

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
