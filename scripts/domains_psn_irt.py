"""Oracle study of the domain estimators on PSN-IRT (../shared/data/psn_irt/items.csv).

Two settings, both with a 10% stratified (proportional) budget and repeated draws:

* ``single``: one candidate model, the 11 benchmarks as domains, the other 11 models'
  correctness as auxiliaries (PPI's prediction is their mean); PP-TS adds a skill-area level
  above the benchmarks (:data:`AREAS`: the closest analogue here of the PP-S paper's task
  types inside benchmarks);
* ``crossed``: all 12 models x 11 benchmarks = 132 domains, units = model-item pairs, no
  auxiliary (every model is a target, so no other model's labels are cheap), and PP-TS has
  crossed model and benchmark effects.

Run from the repository root:

    python -m scripts.domains_psn_irt --setting single --candidate model_0 --reps 100
    python -m scripts.domains_psn_irt --setting crossed --reps 100
    python -m scripts.domains_psn_irt --setting single --candidate all --reps 100 \
        --objective ensemble --direct greg --no-dbcv   # the PP-S paper's estimators
"""

from __future__ import annotations

import os

# One BLAS thread per worker process: the repetitions run in parallel and the matrices are small.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from research.domain_harness import run_harness
from slicewise._typing import OBJECTIVES
from slicewise.domains.fit import DomainProblem
from slicewise.reports.markdown import markdown_table

DATA = Path("..") / "shared" / "data" / "psn_irt" / "items.csv"
MODELS = [f"model_{k}" for k in range(12)]
#: A skill area for each benchmark: the taxonomy level of PP-TS in the single setting.
AREAS = {
    "GSM8K": "math",
    "MATH": "math",
    "TheoremQA": "math",
    "HumanEval": "code",
    "MBPP": "code",
    "MMLU": "knowledge",
    "ARC-C": "knowledge",
    "GPQA Diamond": "knowledge",
    "Chinese SimpleQA": "knowledge",
    "BBH": "reasoning",
    "HellaSwag": "reasoning",
}


def single(frame: pd.DataFrame, candidate: str, args: argparse.Namespace) -> pd.DataFrame:
    codes, labels = pd.factorize(frame["benchmark"], sort=True)
    others = [m for m in MODELS if m != candidate]
    aux = frame[others].to_numpy(dtype=np.float64)
    y = frame[candidate].to_numpy(dtype=np.float64)
    domain = codes.astype(np.intp)
    n_dom = labels.size
    area_codes = pd.factorize(pd.Series([AREAS[str(b)] for b in labels]), sort=True)[0]
    problem = DomainProblem(
        auxiliaries=aux,
        prediction=aux.mean(axis=1),
        covariates=None,
        taxonomy=(area_codes.astype(np.intp),),
        taxonomy_names=("area",),
        direct=args.direct,
        variance_df=args.variance_df,
        objective=args.objective,
    )
    methods = ("ht", "ppi", "ppi++", "greg", "greg-or-hajek", "fh", "pp-s", "pp-ts")
    candidates = ("ht", "ppi", "greg", "greg-or-hajek", "fh", "pp-s")
    return run(problem, domain, y, methods, candidates, n_dom, args)


def crossed(frame: pd.DataFrame, args: argparse.Namespace) -> None:
    """132 model x benchmark domains, no auxiliary, crossed model and benchmark effects.

    No auxiliary is used here: every model's correctness is itself a target, so the other
    models' correctness on an item is not a cheap signal in this setting (the mean over the
    other 11 models equals (item total - own label) / 11 and, combined with benchmark effects,
    leaks the candidate's own accuracy; see docs/results/domains_psn_irt.md).
    """
    bench_codes, bench_labels = pd.factorize(frame["benchmark"], sort=True)
    correct = frame[MODELS].to_numpy(dtype=np.float64)
    n_items, n_models = correct.shape
    y = correct.T.reshape(-1)  # model-major: unit = (model, item)
    model = np.repeat(np.arange(n_models), n_items)
    bench = np.tile(bench_codes, n_models)
    n_bench = bench_labels.size
    domain = (model * n_bench + bench).astype(np.intp)
    n_dom = n_models * n_bench
    dom_model = np.repeat(np.arange(n_models), n_bench).astype(np.intp)
    dom_bench = np.tile(np.arange(n_bench), n_models).astype(np.intp)
    problem = DomainProblem(
        auxiliaries=np.zeros((y.size, 0)),
        prediction=None,
        covariates=np.zeros((n_dom, 0)),
        taxonomy=(dom_model, dom_bench),
        taxonomy_names=("model", "benchmark"),
        direct="ht",
        variance_df=args.variance_df,
        objective=args.objective,
    )
    methods = ("ht", "fh", "pp-s", "pp-ts")
    run(problem, domain, y, methods, methods, n_dom, args)


def run(
    problem: DomainProblem,
    domain: np.ndarray,
    y: np.ndarray,
    methods: tuple[str, ...],
    candidates: tuple[str, ...],
    n_dom: int,
    args: argparse.Namespace,
) -> None:
    budget = round(args.fraction * y.size)
    start = time.perf_counter()
    result = run_harness(
        problem,
        domain,
        y,
        methods=methods,
        budget=budget,
        reps=args.reps,
        dbcv=candidates if args.dbcv else (),
        folds=args.folds,
        rng=np.random.default_rng(args.seed),
        n_jobs=args.jobs,
    )
    elapsed = time.perf_counter() - start
    n_d = np.bincount(domain, minlength=n_dom)
    print(
        f"domains {n_dom}, pool {y.size}, budget {budget} ({args.fraction:.0%}), reps {args.reps},"
        f" smallest domain {n_d.min()}, labels per domain {int(np.floor(args.fraction * n_d.min()))}"
        f"-{int(np.ceil(args.fraction * n_d.max()))}, {elapsed:.0f} s"
    )
    print(markdown_table(result.table(), 4))
    if args.dbcv:
        print()
        print(markdown_table(result.validation_table(), 3))
    if args.per_domain:
        rmse = np.sqrt(np.nanmean(result.squared_error, axis=0))
        cover = np.nanmean(result.covered, axis=0)
        table = pd.DataFrame({"n_pool": n_d})
        for c, name in enumerate(result.methods):
            table[f"rmse_{name}"] = rmse[c]
            table[f"cov_{name}"] = cover[c]
        print()
        print(markdown_table(table.reset_index(), 3))
    return result.table()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--setting", choices=("single", "crossed"), default="single")
    parser.add_argument("--candidate", default="model_0")
    parser.add_argument("--fraction", type=float, default=0.10)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--variance-df", type=float, default=4.0)
    parser.add_argument("--no-dbcv", dest="dbcv", action="store_false")
    parser.add_argument("--per-domain", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20260918)
    parser.add_argument("--objective", choices=OBJECTIVES, default=OBJECTIVES[0])
    parser.add_argument(
        "--direct",
        choices=("greg-or-hajek", "greg", "ht"),
        default="greg-or-hajek",
        help="direct estimator under the smoothing (greg: the PP-S paper's)",
    )
    args = parser.parse_args()
    frame = pd.read_csv(DATA)
    if args.setting == "single" and args.candidate == "all":
        rows = []
        for candidate in MODELS:
            print(f"\n### candidate {candidate}\n")
            table = single(frame, candidate, args).set_index("method")
            rows.append(
                {"candidate": candidate}
                | {f"rmse {m}": table.loc[m, "rmse"] for m in table.index}
                | {
                    f"cover {m}": table.loc[m, "coverage"]
                    for m in ("ht", "greg", "greg-or-hajek", "fh", "pp-s", "pp-ts")
                }
            )
        print("\n### all candidates\n")
        summary = pd.DataFrame(rows)
        print(markdown_table(summary, 3))
        means = summary.drop(columns="candidate").mean()
        print("\nmean over candidates: " + ", ".join(f"{k} {v:.4f}" for k, v in means.items()))
    elif args.setting == "single":
        single(frame, args.candidate, args)
    else:
        crossed(frame, args)


if __name__ == "__main__":
    main()
