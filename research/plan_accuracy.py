"""Does ``sw.plan`` predict the half-width that its planned labels give? (issue 14)

Run from the repository root::

    python -m research.plan_accuracy --reps 20

For each scenario and draw: a pool with every label known, a uniform pilot of ``n0`` labels,
``sw.plan(..., halfwidth=h)`` with the default method; then every unlabeled item is labeled with
the plan's recommended share (``PlanResult.item_rate``, Poisson sampling), each item's inclusion
probability is ``n0 / M + (1 - n0 / M) * rate``, and ``sw.profile(..., inclusion='pi')`` with the
same method gives the realized half-width per grid point. Reported per scenario: the median over
draws and grid points of realized / predicted, the share of (draw, grid point) pairs within
+-20%, the labels the plan asked for, and the coverage of the final intervals; and the part of
the prediction that is the degrees of freedom: the median of the realized interval's df over the
planned ones (``planned_df``: the current df per effective label, times n_eff + n_more), the same
for the previous rule (the current deficit n_eff - df kept in absolute terms), and the median of
the realized t quantile over the planned one (both rules).

Scenarios: ``four-domains`` (the categorical pool of tests/planning/test_plan.py, the judge's
quality falling from domain a to d), the paper's ``setting-b`` (ordinal, 10 groups) and the
``specialist`` design I.3 (continuous Z).
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import slicewise as sw
from slicewise.planning.plan import planned_df
from slicewise.reports.markdown import markdown_table
from slicewise.results import critical_value
from slicewise.studies.paper_designs import setting_b, specialist


@dataclass(frozen=True)
class Scenario:
    name: str
    pool: Callable[[np.random.Generator], pd.DataFrame]
    z: str
    signals: list[str]
    pilot: int
    halfwidth: float


def _four_domains(rng: np.random.Generator) -> pd.DataFrame:
    theta, noise = np.array([0.2, 0.5, 0.6, 0.85]), np.array([0.3, 0.6, 1.2, 2.0])
    code = np.repeat(np.arange(4), 1500)
    y = (rng.random(code.size) < theta[code]).astype(float)
    judge = y + noise[code] * rng.standard_normal(code.size)
    return pd.DataFrame({"domain": np.array(list("abcd"))[code], "judge": judge, "y": y})


def scenarios() -> list[Scenario]:
    b, i3 = setting_b(), specialist()
    return [
        Scenario("four-domains", _four_domains, "domain", ["judge"], 160, 0.06),
        Scenario("setting-b", b.draw, "z", b.signal_names, 300, 0.035),
        Scenario("specialist", i3.draw, "z", i3.signal_names, 300, 0.04),
    ]


def one_draw(scenario: Scenario, seed: int, method: str = "auto") -> pd.DataFrame:
    """Realized / predicted half-width, n_more and coverage per grid point of one draw."""
    rng = np.random.default_rng(seed)
    full = scenario.pool(rng)
    m = len(full)
    pilot = np.zeros(m, dtype=bool)
    pilot[rng.choice(m, scenario.pilot, replace=False)] = True
    common: dict[str, Any] = {
        "z": scenario.z,
        "signals": scenario.signals,
        "label": "y",
        "method": method,
    }
    planned = sw.plan(
        full.assign(y=full["y"].where(pilot)),
        halfwidth=scenario.halfwidth,
        strategy="uniform",
        **common,
    )
    rate = planned.item_rate
    chosen = pilot | (rng.random(m) < rate)
    # an item's probability over both phases: the pilot's, or else its slice's planned share
    # (the share a pilot item would have had: the mean over its slice's unlabeled items)
    values = full[scenario.z].to_numpy()
    grid = np.asarray(planned.z)
    if values.dtype.kind in "fi":
        slice_of = np.abs(values[:, None] - grid.reshape(1, -1)).argmin(axis=1)
    else:
        slice_of = np.searchsorted(grid, values)
    share = np.array([rate[(slice_of == g) & ~pilot].mean() for g in range(grid.size)])
    pi = scenario.pilot / m + (1.0 - scenario.pilot / m) * share[slice_of]
    after = full.assign(y=full["y"].where(chosen), pi=pi)
    res = sw.profile(after, inclusion="pi", **common)
    ci = res.ci()
    n_eff, n_new = planned.n_labeled, planned.n_labeled + planned.n_more
    df_now = np.asarray(planned.df if planned.df is not None else n_eff - 1.0)
    df_plan = planned_df(df_now, n_eff, n_new)
    df_old = np.maximum(n_new - np.maximum(n_eff - df_now, 1.0), 1.0)
    df_real = np.full(len(res.estimate), np.inf) if res.df is None else np.asarray(res.df)
    truth = sw.profile(
        full, **{**common, "method": "naive"}
    ).estimate  # every label: the pool target
    return pd.DataFrame(
        {
            "scenario": scenario.name,
            "seed": seed,
            "grid": np.arange(len(res.estimate)),
            "predicted": planned.predicted,
            "realized": (np.asarray(ci.high) - np.asarray(ci.low)) / 2,
            "n_more": planned.n_more,
            "labels": int(chosen.sum()),
            "covered": (np.asarray(ci.low) <= truth) & (truth <= np.asarray(ci.high)),
            "df_ratio": df_real / df_plan,
            "df_ratio_old": df_real / df_old,
            "q_ratio": critical_value(0.95, df_real) / critical_value(0.95, df_plan),
            "q_ratio_old": critical_value(0.95, df_real) / critical_value(0.95, df_old),
        }
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m research.plan_accuracy", description=__doc__)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--method", default="auto", help="the method planned and estimated")
    parser.add_argument("--per-grid", action="store_true", help="print the per-point medians")
    args = parser.parse_args(argv)
    chosen = None if args.only is None else set(args.only.split(","))
    rows = []
    for scenario in scenarios():
        if chosen is not None and scenario.name not in chosen:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = pd.concat([one_draw(scenario, s, args.method) for s in range(args.reps)])
        ratio = frame["realized"] / frame["predicted"]
        if args.per_grid:
            by_point = frame.assign(ratio=ratio).groupby("grid")
            print(scenario.name, by_point[["ratio", "n_more", "predicted", "realized"]].median())
        rows.append(
            {
                "scenario": scenario.name,
                "method": args.method,
                "draws": args.reps,
                "pilot": scenario.pilot,
                "target": scenario.halfwidth,
                "labels (median)": int(frame.groupby("seed")["labels"].first().median()),
                "realized / predicted, median": round(float(ratio.median()), 3),
                "per-grid-point medians": "{:.2f}-{:.2f}".format(
                    *ratio.groupby(frame["grid"]).median().agg(["min", "max"])
                ),
                "within +-20%": round(float((ratio.sub(1).abs() < 0.2).mean()), 3),
                "range": f"{ratio.min():.2f}-{ratio.max():.2f}",
                "coverage": round(float(frame["covered"].mean()), 3),
                "df realized / planned (previous rule)": "{:.2f} ({:.2f})".format(
                    frame["df_ratio"].median(), frame["df_ratio_old"].median()
                ),
                "t quantile realized / planned (previous rule)": "{:.3f} ({:.3f})".format(
                    frame["q_ratio"].median(), frame["q_ratio_old"].median()
                ),
            }
        )
    print(markdown_table(pd.DataFrame(rows)))


if __name__ == "__main__":
    main()
