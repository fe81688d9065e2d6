"""Fit time and peak memory of the domain smoothing methods and of one DB-CV run.

Synthetic pool: 300 domains x 200 units (60,000 units), one auxiliary, a three-level taxonomy
(5 suites > 30 benchmarks > 300 domains, so PP-TS has three variance components: suite,
benchmark, domain), 10% stratified SRS of labels. Timed: ``sw.domains(method='pp-s')``,
``sw.domains(method='pp-ts')`` (Bayesian, exact integration over the variance components,
validation included), the Bayesian fit alone on the area-level model, a four-component variant
(one more crossed level), and one ``sw.validate`` with K = 5 folds and 6 candidates.

Optionally compares the Bayesian PP-TS fit with an MCMC fit of the same area-level model (PyMC
NUTS) run in a separate environment:

    python -m benchmarks.bench_domains
    python -m benchmarks.bench_domains --mcmc-python /tmp/mcmc-venv/bin/python
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.smoothing.bayes import bayes_fit
from slicewise.smoothing.linear_mixed import AreaModel, indicator_levels

from ._util import peak_memory, timed

D, UNITS, SUITES, BENCHES = 300, 200, 5, 30
MCMC_SCRIPT = Path(__file__).with_name("mcmc_area_model.py")


def make_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    domain = np.repeat(np.arange(D), UNITS)
    bench = domain // (D // BENCHES)
    suite = bench // (BENCHES // SUITES)
    cross = domain % 7
    logit = (
        rng.normal(0, 0.8, SUITES)[suite]
        + rng.normal(0, 0.5, BENCHES)[bench]
        + rng.normal(0, 0.3, 7)[cross]
        + rng.normal(0, 0.3, D)[domain]
    )
    p = 1 / (1 + np.exp(-logit))
    y = (rng.random(domain.size) < p).astype(float)
    judge = np.clip(p + 0.6 * (y - p) + rng.normal(0, 0.2, domain.size), 0, 1)
    frame = pd.DataFrame(
        {
            "domain": domain,
            "benchmark": bench,
            "suite": suite,
            "style": cross,
            "judge": judge,
            "correct": y,
        }
    )
    drawn = sw.sample(frame, strata="domain", fraction=0.1, rng=seed + 1)
    return drawn.apply(frame, label="correct")


def area_model(frame: pd.DataFrame, levels: list[str]) -> AreaModel:
    """The area-level model PP-TS fits (GREG direct estimates, pooled variances)."""
    res = sw.domains(
        frame,
        domain="domain",
        signals=["judge"],
        label="correct",
        strata="stratum",
        method="greg",
    )
    first = frame.groupby("domain").first()
    codes = [first[c].to_numpy(dtype=np.intp) for c in levels]
    z, col = indicator_levels(codes, levels)
    judge_mean = frame.groupby("domain")["judge"].mean().to_numpy()
    return AreaModel(
        y=res.estimate,
        psi=res.se**2,
        x=np.column_stack([np.ones(D), judge_mean]),
        z=z,
        column_level=col,
        level_names=tuple(levels),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mcmc-python", default=None)
    args = parser.parse_args()
    frame = make_frame()
    common = {
        "domain": "domain",
        "signals": ["judge"],
        "label": "correct",
        "strata": "stratum",
    }
    rows = []

    def add(name: str, func: object, target: float) -> None:
        cpu0 = time.process_time()
        seconds, _ = timed(func, repeat=3)  # type: ignore[arg-type]
        cpu = (time.process_time() - cpu0) / 3
        mb = peak_memory(func)  # type: ignore[arg-type]
        rows.append((name, seconds, cpu, target, mb))
        print(f"{name}: {seconds:.3f} s (cpu {cpu:.3f} s), peak {mb:.1f} MB", flush=True)

    add("sw.domains pp-s (300 domains)", lambda: sw.domains(frame, method="pp-s", **common), 1.0)
    add(
        "sw.domains pp-ts (suite, benchmark, domain: 3 components)",
        lambda: sw.domains(frame, method="pp-ts", taxonomy=["suite", "benchmark"], **common),
        1.0,
    )
    model3 = area_model(frame, ["suite", "benchmark"])
    add("bayes_fit alone, 3 components", lambda: bayes_fit(model3), 1.0)
    model4 = area_model(frame, ["suite", "benchmark", "style"])
    add("bayes_fit alone, 4 components (+ crossed style)", lambda: bayes_fit(model4), 1.0)
    cands = ["ht", "ppi", "greg", "fh", "pp-s", "pp-ts"]
    start = time.perf_counter()
    cpu0 = time.process_time()
    val = sw.validate(
        frame, candidates=cands, folds=5, taxonomy=["suite", "benchmark"], rng=0, **common
    )
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    mb = peak_memory(
        lambda: sw.validate(
            frame, candidates=cands, folds=5, taxonomy=["suite", "benchmark"], rng=0, **common
        )
    )
    rows.append(("sw.validate, K = 5, 6 candidates (1 run)", seconds, cpu, 10.0, mb))
    print(f"validate: {seconds:.2f} s, selected {val.selected}", flush=True)
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print()
    print("| what | wall seconds (best of 3) | CPU seconds | target | peak traced MB |")
    print("|---|---|---|---|---|")
    for name, sec, cpu_s, target, peak in rows:
        print(f"| {name} | {sec:.3f} | {cpu_s:.3f} | < {target:g} s | {peak:.1f} |")
    print(f"\nprocess max RSS {maxrss:.0f} MB")
    if args.mcmc_python:
        compare_mcmc(model3, args.mcmc_python)


def compare_mcmc(model: AreaModel, python: str) -> None:
    """Run PyMC NUTS on the same area-level model in another environment and compare."""
    start = time.perf_counter()
    fit = bayes_fit(model)
    exact_seconds = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        inputs = Path(tmp) / "model.npz"
        np.savez(
            inputs, y=model.y, psi=model.psi, x=model.x, z=model.z, column_level=model.column_level
        )
        out = subprocess.run(
            [python, str(MCMC_SCRIPT), str(inputs)], capture_output=True, text=True, check=True
        )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    mean = np.array(report["theta_mean"])
    sd = np.array(report["theta_sd"])
    print()
    print("| fit | seconds | max abs diff of posterior means | max abs diff of posterior sds |")
    print("|---|---|---|---|")
    print(f"| exact integration (bayes_fit) | {exact_seconds:.2f} | - | - |")
    print(
        f"| PyMC NUTS ({report['chains']} chains x {report['draws']} draws, "
        f"{report['tune']} tuning; min ESS {report['min_ess']:.0f}, "
        f"divergences {report['divergences']}) | {report['seconds']:.1f} "
        f"| {np.max(np.abs(mean - fit.estimate)):.4f} | {np.max(np.abs(sd - fit.sd)):.4f} |"
    )
    print(
        f"\nsigma posterior means: exact {np.round(fit.sigma_mean, 4).tolist()}, "
        f"NUTS {np.round(report['sigma_mean'], 4).tolist()}"
    )


if __name__ == "__main__":
    sys.exit(main())
