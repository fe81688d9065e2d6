"""``slicewise topics`` (slices found from a text column), ``slicewise profile --topics`` and
``slicewise demo --topics``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..topics.options import add_topic_flags, given_topic_options
from ._common import _print_notes


def add_topics_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "items",
        help="item table (CSV, JSON Lines, Parquet); a Parquet folder or glob is streamed",
    )
    parser.add_argument("--text", required=True, help="text column (e.g. prompt)")
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        help="output table (.csv, .parquet, .jsonl): the items with a 'topic' column (a "
        "streamed pool: its row number in scan order and the topic)",
    )
    parser.add_argument("--seed", type=int, default=0, help="draws the fit sample of a large pool")
    add_topic_flags(parser.add_argument_group("topic options"))


def run_topics(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..data.files import read_table, write_table
    from ..sources import is_pool_source
    from ..topics import topics

    streamed = is_pool_source(args.items)
    frame = None if streamed else read_table(args.items)
    found = topics(
        args.items if streamed else frame,
        text=args.text,
        rng=args.seed,
        progress=streamed,
        **given_topic_options(args),
    )
    _print_sizes(found)
    _print_notes(found.attrs["notes"], args.printed_notes)
    out = (
        pd.DataFrame({"row": found.index, "topic": found.astype(str)})
        if frame is None
        else frame.assign(topic=found.astype(str))
    )
    write_table(out, args.out)
    print(f"wrote {args.out}: {len(out)} rows, column 'topic'")
    return 0


def _print_sizes(found: Any) -> None:
    counts = found.value_counts(sort=False)
    print(f"{len(counts)} topics ({found.attrs['topics']['method']}), items per topic:")
    for name, count in counts.items():
        print(f"  {count:>7}  {name}")


def add_profile_topics_args(parser: argparse.ArgumentParser) -> None:
    """``--topics TEXT`` and the topic options of ``slicewise profile``."""
    parser.add_argument(
        "--topics",
        default=None,
        metavar="TEXT",
        help="profile over topics found from this text column instead of --z (label-free; "
        "budget: the labeled rows unless --topic-budget is given)",
    )
    add_topic_flags(parser.add_argument_group("topic options (with --topics)"))


def apply_topics(args: argparse.Namespace) -> None:
    """With ``--topics``, read the table, add its topics as column 'topic' and profile over it.

    ``args.items`` becomes the DataFrame (the file name stays in ``args.items_path``); the
    budget is the number of rows with a label unless ``--topic-budget`` is given.
    """
    if args.topics is None:
        if args.z is None:
            raise ValueError("slicewise profile needs --z COLUMN(S) or --topics TEXT_COLUMN.")
        return
    from ..data.files import read_table
    from ..topics import topics

    if args.z is not None:
        raise ValueError(
            f"--topics profiles over the topics of {args.topics!r}; give --z or --topics, not "
            f"both (got --z {','.join(args.z)})."
        )
    frame = read_table(args.items)
    options = given_topic_options(args)
    if "budget" not in options and args.label in frame.columns:
        options["budget"] = max(1, int(frame[args.label].notna().sum()))
    found = topics(frame, text=args.topics, rng=getattr(args, "rng", None) or 0, **options)
    _print_sizes(found)
    print(f"note: topic budget: {options.get('budget')} labels.")
    _print_notes(found.attrs["notes"], args.printed_notes)
    print()
    args.items_path = args.items
    args.items = frame.assign(topic=found)
    args.z = ["topic"]
    args.kind = "categorical"


def run_topics_demo(args: argparse.Namespace) -> int:
    """``slicewise demo --topics``: claude-2.1 on AlpacaEval 2 over topics of the instructions."""
    import numpy as np

    from ..api import profile
    from ..datasets import DEMO_SIGNALS, load_demo
    from ..reports.output import format_table
    from ..topics import topics

    frame = load_demo(instructions=True)
    n_lab = int(frame["gold"].notna().sum())
    print(
        "slicewise demo --topics: AlpacaEval 2, candidate claude-2.1. Nobody defined a profile "
        "axis:\ntopics are found from the 805 instructions alone (label-free), sized for the "
        f"{n_lab} gold labels,\nthen the default profile over them is compared with the "
        "full-pool truth.\n"
    )
    found = topics(frame, text="instruction", budget=n_lab, rng=0)
    _print_sizes(found)
    _print_notes(found.attrs["notes"], args.printed_notes)
    frame["topic"] = found
    truth = profile(frame, z="topic", label="truth", kind="categorical", method="naive").estimate
    result = profile(frame, z="topic", signals=DEMO_SIGNALS, label="gold", kind="categorical")
    print()
    print(format_table(result, truth=truth))
    interval = result.ci()
    covered = float(np.mean((interval.low <= truth) & (truth <= interval.high)))
    print(f"-> {covered:.0%} of the topics covered by their 95% interval\n")
    print(result.worst())
    print(f"(true worst topic: {result.z[int(np.argmin(truth))]!r})\n")
    out = Path(args.out if args.out is not None else "demo-output") / "topics"
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.html"
    result.to_html(
        report,
        label="gold",
        context={
            "data": "AlpacaEval 2 (shipped demo), topics of the instructions",
            "signals": ", ".join(DEMO_SIGNALS),
            "command": args.command_line,
        },
    )
    frame[["item_id", "topic"]].to_csv(out / "topics.csv", index=False)
    print(f"wrote {report}\nwrote {out / 'topics.csv'}")
    return 0
