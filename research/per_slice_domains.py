"""Per-domain validity of the default of :func:`slicewise.domains` on real data (issue 11).

Run from the repository root::

    python -m research.per_slice_domains --dataset psn_irt --reps 200 --jobs 2
    python -m research.per_slice_domains --dataset lmarena --reps 200 --jobs 2

The default is what a user gets with no method argument: the problem is built by the same
validation as :func:`slicewise.domains` (``prepare`` with the signature's defaults: covariates
'auto', the direct estimator ``direct`` (``'greg-or-hajek'``), ``variance_df`` and
``prior_scale``) and fitted with its default method; every interval is :meth:`slicewise.DomainResult.ci` on that fit
(:func:`research.domain_harness.fit_interval`). Datasets, as in docs/results/domains_*.md:

* ``psn_irt``: each of the 12 models as candidate, the 11 benchmarks as domains, the other 11
  models' correctness as signals, stratified SRS by benchmark with proportional allocation of
  2%, 5% and 10% of the pool (the same draws for every candidate);
* ``lmarena``: the 298 model pairs as domains, the reward model's verdict as the signal, the PAS
  protocol n_j = int(fraction x N_j) labels per pair, fractions 0.05, 0.1 and 0.4.

Per domain and budget, against the full-pool mean: coverage of the 95% intervals of the default
(as printed: ``ci()``; also both kinds, normal +/- bias bound and Wilson-type) and of the direct
labels-only estimator (Hajek; HT is the same under SRS within domains); bias in Monte-Carlo
standard errors; RMSE of each; ``worse``: the default's MSE above the direct one by more than 2
Monte-Carlo standard errors of the paired difference. Per dataset and budget: mean coverage, the
worst domain with at least 20 expected labels, counts of such domains biased (> 3 MC SE) or worse.
"""

from __future__ import annotations

import os

# One BLAS thread per worker process: the repetitions run in parallel and the matrices are small.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import inspect
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from slicewise._typing import FloatArray, IntArray
from slicewise.data.designs import sample_from_design
from slicewise.domains.api import domains, labels_mean
from slicewise.domains.fit import DomainProblem, fit_domains
from slicewise.domains.input import prepare
from slicewise.inference.bounded import interval_bounds
from slicewise.reports.markdown import markdown_table
from slicewise.results import critical_value
from slicewise.smoothing.objective import OBJECTIVES

from .domain_harness import HarnessSpec, draw_sample, fit_interval
from .realdata import DATA_DIR
from .stamp import stamp

MIN_LABELS = 20.0
LEVEL = 0.95
DIRECT = "hajek"
#: The keyword defaults of :func:`slicewise.domains`: what a user gets without options.
DEFAULTS: dict[str, Any] = {
    name: p.default
    for name, p in inspect.signature(domains).parameters.items()
    if p.default is not inspect.Parameter.empty
}
PSN_MODELS = tuple(f"model_{k}" for k in range(12))
BUDGETS = {"psn_irt": (0.02, 0.05, 0.10), "lmarena": (0.05, 0.1, 0.4)}
#: Interval kinds recorded per fit: as printed (``ci()``), normal, Wilson-type.
KINDS = ("shown", "normal", "wilson")


@dataclass(frozen=True)
class Cell:
    """One candidate's domain problem on a fully labeled pool."""

    name: str
    problem: DomainProblem
    domain: IntArray
    domain_labels: tuple[str, ...]
    y: FloatArray


def _problem(
    frame: pd.DataFrame, domain: str, signals: Sequence[str], objective: str
) -> tuple[Cell, str]:
    prepared = prepare(
        frame,
        domain=domain,
        label="y",
        signals=list(signals),
        inclusion=None,
        strata=None,
        prediction=DEFAULTS["prediction"],
        taxonomy=DEFAULTS["taxonomy"],
        covariates=DEFAULTS["covariates"],
        direct=DEFAULTS["direct"],
        variance_df=DEFAULTS["variance_df"],
        prior_scale=DEFAULTS["prior_scale"],
        func="per_slice_domains",
        objective=objective,
    )
    cell = Cell(
        name="",
        problem=prepared.problem,
        domain=prepared.sample.domain,
        domain_labels=tuple(str(v) for v in prepared.labels),
        y=frame["y"].to_numpy(dtype=np.float64),
    )
    return cell, str(DEFAULTS["method"])


def psn_cells(objective: str) -> list[Cell]:
    """12 candidates, 11 benchmarks, the other 11 models as signals."""
    frame = pd.read_csv(DATA_DIR / "psn_irt" / "items.csv")
    cells = []
    for candidate in PSN_MODELS:
        others = [m for m in PSN_MODELS if m != candidate]
        table = frame[["benchmark", *others]].assign(y=frame[candidate].astype(float))
        cell, _ = _problem(table, "benchmark", others, objective)
        cells.append(
            Cell(candidate, cell.problem, cell.domain, cell.domain_labels, cell.y),
        )
    return cells


def lmarena_cells(objective: str) -> list[Cell]:
    """298 model pairs, the reward model's verdict as the signal."""
    battles = pd.read_csv(DATA_DIR / "lmarena" / "battles.csv").sort_values(
        ["group_id", "id"], kind="stable"
    )
    table = pd.DataFrame(
        {
            "pair": battles["model_a"] + " vs " + battles["model_b"],
            "prediction": battles["prediction"].astype(float),
            "y": battles["winner"].astype(float),
        }
    )
    cell, _ = _problem(table, "pair", ["prediction"], objective)
    return [Cell("all pairs", cell.problem, cell.domain, cell.domain_labels, cell.y)]


def _spec(cell: Cell, dataset: str, fraction: float, method: str) -> HarnessSpec:
    n_dom = len(cell.domain_labels)
    sizes = np.bincount(cell.domain, minlength=n_dom)
    stratum_sizes = (
        np.floor(fraction * sizes).astype(np.intp) if dataset == "lmarena" else None
    )  # the PAS protocol; PSN-IRT: proportional allocation of round(fraction x M)
    return HarnessSpec(
        problem=cell.problem,
        domain=cell.domain,
        n_domains=n_dom,
        y=cell.y,
        strata=cell.domain,
        stratum_labels=np.arange(n_dom).astype(object),
        budget=round(fraction * cell.y.size),
        allocation="proportional",
        methods=(method, DIRECT),
        level=LEVEL,
        dbcv=(),
        folds=5,
        stratum_sizes=stratum_sizes,
    )


def _reps(spec: HarnessSpec, seeds: Sequence[np.random.SeedSequence]) -> dict[str, FloatArray]:
    """Estimates, interval bounds per kind, labeled counts and smoothing flags of some draws."""
    r, c, d = len(seeds), len(spec.methods), spec.n_domains
    out = {
        "estimate": np.full((r, c, d), np.nan),
        "low": np.full((r, c, len(KINDS) + 1, d), np.nan),
        "high": np.full((r, c, len(KINDS) + 1, d), np.nan),
        "n_labeled": np.zeros((r, d)),
        "smoothed": np.zeros((r, d)),
    }
    crit = critical_value(spec.level)
    for i, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        sample = sample_from_design(spec.domain, d, draw_sample(spec, rng), spec.y)
        out["n_labeled"][i] = sample.n_labeled
        for m, method in enumerate(spec.methods):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = fit_domains(spec.problem, sample, method)
            out["estimate"][i, m] = fit.estimate
            for k, bounded in enumerate((None, False, True)):
                low, high = fit_interval(fit, sample, spec.level, bounded=bounded)
                out["low"][i, m, k], out["high"][i, m, k] = low, high
            # sensitivity: Wilson-type with p(1 - p) at the direct (GREG) estimate, not the
            # labels-only mean
            _, n_eff = labels_mean(sample)
            bound = np.zeros(d) if fit.bias_bound is None else fit.bias_bound
            low, high = interval_bounds(
                fit.estimate,
                fit.se,
                crit,
                bound,
                naive_estimate=fit.direct.estimate,
                n_labeled_eff=n_eff,
            )
            out["low"][i, m, -1], out["high"][i, m, -1] = low, high
            if "moved" in fit.params:
                out["smoothed"][i] = np.asarray(fit.params["moved"], dtype=np.float64)
    return out


def run_cell(spec: HarnessSpec, reps: int, seed: int, jobs: int) -> dict[str, FloatArray]:
    """All draws of one cell and budget (split into ``jobs`` batches of worker processes)."""
    seeds = np.random.SeedSequence(seed).spawn(reps)
    batches = [list(b) for b in np.array_split(np.arange(reps), max(jobs, 1)) if b.size]
    if jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            parts = list(
                pool.map(_reps, [spec] * len(batches), [[seeds[i] for i in b] for b in batches])
            )
    else:
        parts = [_reps(spec, seeds)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def domain_table(cell: Cell, spec: HarnessSpec, out: dict[str, FloatArray]) -> pd.DataFrame:
    """One row per domain: labels, coverage by kind, bias, RMSE of the default and the direct."""
    n_dom = spec.n_domains
    counts = np.bincount(cell.domain, minlength=n_dom)
    truth = np.bincount(cell.domain, weights=cell.y, minlength=n_dom) / counts
    err = out["estimate"] - truth  # (R, C, D)
    inside = (out["low"] <= truth) & (truth <= out["high"])  # (R, C, K, D)
    width = out["high"] - out["low"]
    # the normal interval as a reader can use it: its part inside [0, 1]
    clipped = np.clip(out["high"], 0.0, 1.0) - np.clip(out["low"], 0.0, 1.0)
    rows = []
    for g in range(n_dom):
        ed, en = err[:, 0, g], err[:, 1, g]
        ok = np.isfinite(ed) & np.isfinite(en)
        ed, en = ed[ok], en[ok]
        diff = ed**2 - en**2
        mcse_d = float(ed.std(ddof=1) / np.sqrt(ed.size))
        mcse_n = float(en.std(ddof=1) / np.sqrt(en.size))
        cov = inside[ok][:, :, :, g].mean(axis=0)  # (C, K+1)
        wid = width[ok][:, :, :, g].mean(axis=0)
        wid_clipped = clipped[ok][:, :, :, g].mean(axis=0)
        rows.append(
            {
                "cell": cell.name,
                "domain": cell.domain_labels[g],
                "n_pool": int(counts[g]),
                "truth": float(truth[g]),
                "expected_labels": float(out["n_labeled"][:, g].mean()),
                "reps": int(ok.sum()),
                "smoothed": float(out["smoothed"][ok, g].mean()),
                "coverage": float(cov[0, 0]),
                "coverage_normal": float(cov[0, 1]),
                "coverage_wilson": float(cov[0, 2]),
                "coverage_wilson_direct_p": float(cov[0, 3]),
                "coverage_direct": float(cov[1, 0]),
                "coverage_direct_normal": float(cov[1, 1]),
                "coverage_direct_wilson": float(cov[1, 2]),
                "width": float(wid[0, 0]),
                "width_normal": float(wid[0, 1]),
                "width_normal_clipped": float(wid_clipped[0, 1]),
                "width_wilson": float(wid[0, 2]),
                "width_direct": float(wid[1, 0]),
                "bias": float(ed.mean()),
                "bias_z": float(ed.mean() / mcse_d) if mcse_d > 0 else 0.0,
                "bias_z_direct": float(en.mean() / mcse_n) if mcse_n > 0 else 0.0,
                "rmse": float(np.sqrt(np.mean(ed**2))),
                "rmse_direct": float(np.sqrt(np.mean(en**2))),
                "worse": bool(diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(diff.size)),
            }
        )
    return pd.DataFrame(rows)


def summary_table(slices: pd.DataFrame) -> pd.DataFrame:
    """Per budget: mean coverage by kind, the worst domain with >= 20 expected labels, counts of
    biased and worse domains among those, widths and the RMSE ratio."""
    out = []
    for budget, part in slices.groupby("budget", sort=False):
        big = part[part["expected_labels"] >= MIN_LABELS]
        worst = big.iloc[int(np.argmin(big["coverage"].to_numpy()))] if len(big) else None
        low_all = part.iloc[int(np.argmin(part["coverage"].to_numpy()))]
        out.append(
            {
                "budget": budget,
                "domains": len(part),
                "smoothed_share": float(part["smoothed"].mean()),
                "mean_coverage": float(part["coverage"].mean()),
                "mean_cov_normal": float(part["coverage_normal"].mean()),
                "mean_cov_wilson": float(part["coverage_wilson"].mean()),
                "mean_cov_direct": float(part["coverage_direct"].mean()),
                "domains_20": len(big),
                "worst_cov_20": float(worst["coverage"]) if worst is not None else np.nan,
                "worst_20": f"{worst['cell']} / {worst['domain']}" if worst is not None else "",
                "worst_cov_20_normal": float(big["coverage_normal"].min()) if len(big) else np.nan,
                "worst_cov_all": float(low_all["coverage"]),
                "worst_all": f"{low_all['cell']} / {low_all['domain']}",
                "below_090": int((part["coverage"] < 0.90).sum()),
                "below_090_normal": int((part["coverage_normal"] < 0.90).sum()),
                "biased_20": int((big["bias_z"].abs() > 3).sum()),
                "worse_20": int(big["worse"].sum()),
                "biased_all": int((part["bias_z"].abs() > 3).sum()),
                "worse_all": int(part["worse"].sum()),
                "width_ratio_wilson_normal": float(
                    part["width_wilson"].mean() / part["width_normal"].mean()
                ),
                "width_ratio_wilson_clipped": float(
                    part["width_wilson"].mean() / part["width_normal_clipped"].mean()
                ),
                "mse_ratio_direct_default": float(
                    (part["rmse_direct"] ** 2).mean() / (part["rmse"] ** 2).mean()
                ),
            }
        )
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=sorted(BUDGETS))
    parser.add_argument("--budgets", default=None, help="comma-separated fractions")
    parser.add_argument("--cells", type=int, default=None, help="first N candidates")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=20260918)
    parser.add_argument("--out", default="docs/results/per_slice_domains")
    parser.add_argument("--objective", choices=OBJECTIVES, default=DEFAULTS["objective"])
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    fractions = (
        BUDGETS[args.dataset]
        if args.budgets is None
        else tuple(float(b) for b in args.budgets.split(","))
    )
    build = psn_cells if args.dataset == "psn_irt" else lmarena_cells
    cells = build(args.objective)[: args.cells]
    method = str(DEFAULTS["method"])
    start = time.perf_counter()
    tables = []
    for fraction in fractions:
        for cell in cells:
            spec = _spec(cell, args.dataset, fraction, method)
            result = run_cell(spec, args.reps, args.seed, args.jobs)
            tables.append(domain_table(cell, spec, result).assign(budget=fraction))
            print(f"{args.dataset} {fraction} {cell.name}: {time.perf_counter() - start:.0f} s")
    slices = pd.concat(tables, ignore_index=True)
    slices.insert(0, "dataset", args.dataset)
    summary = summary_table(slices)
    summary.insert(0, "dataset", args.dataset)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = args.dataset + ("" if args.objective == DEFAULTS["objective"] else f"_{args.objective}")
    slices.to_csv(out / f"{name}_domains.csv", index=False)
    summary.to_csv(out / f"{name}_summary.csv", index=False)
    text = stamp("python -m research.per_slice_domains " + " ".join(argv))
    text += (
        f"\n\nmethod {method!r}, objective {args.objective!r}, {args.reps} draws, "
        f"{time.perf_counter() - start:.0f} s\n\n" + markdown_table(summary, digits=3) + "\n"
    )
    (out / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
