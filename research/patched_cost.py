"""Shared plumbing of the research scripts that measure what one function of slicewise costs in
interval width (:mod:`research.floor_cost`, :mod:`research.df_cost`): ``auto`` fitted twice on
the same matched label draws of every real family, once as shipped and once with the function
replaced in the modules that call it by name, and a stamped table of the per-family rows."""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from slicewise.reports.markdown import markdown_table
from slicewise.studies.engine import study_cells

from . import realdata
from .stamp import stamp


def paired_studies(
    dataset: str,
    reps: int,
    cells: int,
    *,
    callers: Sequence[str],
    name: str,
    replacement: Callable[..., Any],
) -> Iterator[tuple[Any, Sequence[int], Any, Any]]:
    """(family, budgets, shipped study, patched study) for every family of ``dataset``: the
    first ``cells`` cells, ``naive`` and ``auto``, seed 0, with ``name`` replaced by
    ``replacement`` in every module of ``callers`` for the patched one."""
    for module in callers:
        importlib.import_module(module)
    shipped = getattr(sys.modules[callers[0]], name)

    def use(function: Callable[..., Any]) -> None:
        for module in callers:
            setattr(sys.modules[module], name, function)

    data = realdata.load(dataset)
    for family in data.families:
        specs = list(family.cells)[:cells]
        runs = []
        for function in (shipped, replacement):
            use(function)
            try:
                runs.append(
                    study_cells(
                        specs, methods=("naive", "auto"), budgets=data.budgets, reps=reps, rng=0
                    )
                )
            finally:
                use(shipped)
        yield family, data.budgets, runs[0], runs[1]


def main(
    argv: list[str] | None,
    *,
    module: str,
    title: str,
    family_rows: Callable[[str, int, int], list[dict[str, object]]],
    doc: str,
) -> None:
    """The command line of a cost script: --datasets, --reps, --cells, --out; the rows of every
    dataset as one stamped Markdown table."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(sorted(realdata.BUILDERS)))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--cells", type=int, default=2)
    parser.add_argument("--out", default=f"docs/results/generated/{module}.md")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for dataset in args.datasets.split(","):
        rows.extend(family_rows(dataset, args.reps, args.cells))
        print(f"{dataset} done", flush=True)
    text = stamp(f"python -m research.{module} " + " ".join(argv))
    text += f"\n\n# {title}\n\n" + markdown_table(pd.DataFrame(rows), digits=3) + "\n"
    Path(args.out).write_text(text)
    print(text)
