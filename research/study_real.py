"""Matched-split relative-efficiency studies on the real datasets (issue 4, part 4).

The entry point is :mod:`scripts.study_real`; run from the repository root::

    python -m scripts.study_real --dataset psn_irt --reps 50 --jobs 2 --out docs/results/psn_irt/

For every family of cells of the dataset (one profile axis each, see :mod:`research.realdata`) the
study compares every feasible registered method (all but ``lace_oracle``; methods that need an
ordered profile are left out on categorical ones) on the same matched label splits, writes the
engine's outputs (records, summary, aggregate, paper-style tables, RE plot) and a profile-panel
plot under ``OUT/<family>/``, and a markdown report ``docs/results/study_<dataset>.md``. Text in
``OUT/commentary.md``, when present, is included in the report as the commentary.
"""

from __future__ import annotations

import argparse
import pickle
import shlex
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from slicewise.methods.registry import METHODS
from slicewise.studies.engine import study_cells
from slicewise.studies.summary import StudyResult

from . import realdata
from .real_report import subset_methods, write_family_outputs, write_report
from .stamp import code_version

#: Methods never run on real data: the oracle needs the true coefficient.
EXCLUDED = ("lace_oracle",)


@dataclass(frozen=True)
class FamilyRun:
    """The study of one family and how it was run."""

    family: realdata.Family
    result: StudyResult
    seconds: float
    reps: int
    versions: dict[str, str] = field(default_factory=dict)
    """Code version (git commit, '+' when the tree had uncommitted changes) per method."""


def feasible_methods(family: realdata.Family, requested: Sequence[str] | None = None) -> list[str]:
    """Registered methods that can run on every cell of ``family`` (naive first).

    A method is feasible when it is not excluded (``lace_oracle``), the family's profile is
    ordered if the method needs one, and every cell names a primary signal if it needs one.
    """
    names = [m for m in METHODS if m not in EXCLUDED] if requested is None else list(requested)
    unknown = [m for m in names if m not in METHODS]
    if unknown:
        raise ValueError(
            f"The '--methods' option must name registered methods ({', '.join(METHODS)}). "
            f"Got {unknown} instead."
        )
    out = []
    for name in names:
        needs = METHODS[name].needs
        if "continuous" in needs and family.kind == "categorical":
            continue
        if "categorical" in needs and family.kind != "categorical":
            continue
        if "primary" in needs and any(c.primary is None for c in family.cells):
            continue
        if "coef" in needs:
            continue
        out.append(name)
    if "naive" in out:
        out.remove("naive")
    return ["naive", *out]


def family_seed(seed: int, name: str) -> np.random.Generator:
    """An independent generator per family, stable when other families are added or dropped."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def run_family(
    family: realdata.Family,
    *,
    methods: Sequence[str] | None,
    budgets: Sequence[int],
    reps: int,
    seed: int,
    jobs: int,
) -> FamilyRun:
    """Run the matched-split study of one family."""
    chosen = feasible_methods(family, methods)
    start = time.perf_counter()
    result = study_cells(
        list(family.cells),
        methods=chosen,
        budgets=budgets,
        reps=reps,
        rng=family_seed(seed, family.name),
        n_jobs=jobs,
    )
    version = code_version()
    return FamilyRun(
        family=family,
        result=result,
        seconds=time.perf_counter() - start,
        reps=reps,
        versions=dict.fromkeys(result.methods, version),
    )


def merge_methods(first: StudyResult, second: StudyResult) -> StudyResult:
    """Append the methods of ``second`` that ``first`` lacks (same cells, budgets and splits).

    Both studies must come from the same seed, so their naive fits (and labeled sets) agree;
    every method's cross-fitting stream depends only on the split and budget, not on the other
    methods, so the merged study equals one run with every method.
    """
    cells = []
    for a, b in zip(first.cells, second.cells, strict=True):
        same = a.name == b.name and a.budgets == b.budgets and a.reps == b.reps
        if not same or not np.array_equal(a.estimates[0], b.estimates[0], equal_nan=True):
            raise ValueError(
                f"Cannot merge studies of cell {a.name!r}: different cells, budgets or splits."
            )
        extra = [k for k, m in enumerate(b.methods) if m not in a.methods]
        cells.append(
            replace(
                a,
                methods=(*a.methods, *(b.methods[k] for k in extra)),
                estimates=np.concatenate([a.estimates, b.estimates[extra]]),
                variances=np.concatenate([a.variances, b.variances[extra]]),
            )
        )
    return StudyResult(cells=tuple(cells), level=first.level)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.study_real", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--dataset", required=True, choices=sorted(realdata.BUILDERS))
    parser.add_argument("--families", default=None, help="comma-separated families (default all)")
    parser.add_argument(
        "--methods", default=None, help="comma-separated methods (default: every feasible one)"
    )
    parser.add_argument("--budgets", default=None, help="comma-separated label budgets")
    parser.add_argument("--reps", type=int, default=100, help="matched splits per cell (100)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes over cells (1)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="report path (default docs/results/study_<dataset>.md)",
    )
    parser.add_argument(
        "--cache", type=Path, default=None, help="folder for pickled results (outside docs/)"
    )
    parser.add_argument(
        "--from-cache",
        action="store_true",
        help="load the families found in --cache instead of running them (run the others, and "
        "only the methods a cached family lacks, on the same splits)",
    )
    parser.add_argument(
        "--refresh",
        default=None,
        help="with --from-cache: comma-separated methods to recompute on the cached splits "
        "(e.g. after their code changed)",
    )
    return parser


def _load(path: Path, family: realdata.Family) -> FamilyRun:
    with path.open("rb") as handle:
        stored = pickle.load(handle)
    versions = stored.get("versions") or dict.fromkeys(stored["result"].methods, "unknown")
    return FamilyRun(family, stored["result"], stored["seconds"], stored["reps"], versions)


def _save(path: Path, run: FamilyRun) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    stored = {
        "result": run.result,
        "seconds": run.seconds,
        "reps": run.reps,
        "versions": run.versions,
    }
    with path.open("wb") as handle:
        pickle.dump(stored, handle)


def scratch(argv: Sequence[str]) -> list[str]:
    """The arguments without the cache options: the command that reruns every study from scratch.

    A cached family (``--from-cache``, ``--refresh``) holds the same splits and fits that this
    command recomputes (for the code version recorded per method).
    """
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--cache", "--refresh"):
            skip = True
            continue
        if arg == "--from-cache" or arg.startswith(("--cache=", "--refresh=")):
            continue
        out.append(arg)
    return out


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    families = _split(args.families)
    methods = _split(args.methods)
    data = realdata.load(args.dataset, families=families)
    budgets = (
        data.budgets if args.budgets is None else tuple(int(b) for b in _split(args.budgets) or [])
    )
    argv_list = list(sys.argv[1:] if argv is None else argv)
    command = "python -m scripts.study_real " + " ".join(shlex.quote(a) for a in scratch(argv_list))
    if args.from_cache and args.cache is None:
        raise SystemExit("--from-cache needs --cache DIR")
    refresh = _split(args.refresh) or []
    runs: list[FamilyRun] = []
    for family in data.families:
        cache = None if args.cache is None else args.cache / args.dataset / f"{family.name}.pkl"
        if args.from_cache and cache is not None and cache.exists():
            run = _load(cache, family)
            kept = [m for m in run.result.methods if m == "naive" or m not in refresh]
            if len(kept) < len(run.result.methods):  # recompute these on the same splits
                versions = {m: run.versions.get(m, "unknown") for m in kept}
                run = FamilyRun(
                    family, subset_methods(run.result, kept), run.seconds, run.reps, versions
                )
            wanted = feasible_methods(family, methods)
            missing = [m for m in wanted if m not in run.result.methods]
            if missing:  # new or refreshed methods: same seed, same splits
                print(f"{args.dataset}/{family.name}: adding {', '.join(missing)} ...", flush=True)
                extra = run_family(
                    family,
                    methods=["naive", *missing],
                    budgets=run.result.budgets,
                    reps=run.reps,
                    seed=args.seed,
                    jobs=args.jobs,
                )
                merged = merge_methods(run.result, extra.result)
                order = [m for m in wanted if m in merged.methods]
                order += [m for m in merged.methods if m not in order]
                run = FamilyRun(
                    family,
                    subset_methods(merged, order),
                    run.seconds + extra.seconds,
                    run.reps,
                    {**run.versions, **{m: extra.versions[m] for m in missing}},
                )
                _save(cache, run)
        else:
            print(f"{args.dataset}/{family.name}: {len(family.cells)} cells ...", flush=True)
            run = run_family(
                family,
                methods=methods,
                budgets=budgets,
                reps=args.reps,
                seed=args.seed,
                jobs=args.jobs,
            )
            print(f"  done in {run.seconds:.0f} s", flush=True)
            if cache is not None:
                _save(cache, run)
        runs.append(run)
        for path in write_family_outputs(run.result, family, args.out / family.name, command):
            print(f"wrote {path}")
    report = args.report or Path("docs/results") / f"study_{args.dataset}.md"
    commentary_path = args.out / "commentary.md"
    commentary = commentary_path.read_text() if commentary_path.exists() else None
    write_report(data, runs, report, out=args.out, command=command, commentary=commentary)
    print(f"wrote {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
