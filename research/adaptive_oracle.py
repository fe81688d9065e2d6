"""The oracle ceiling on "labels saved" of the adaptive labeling benchmark (issue 14).

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m research.adaptive_oracle --reps 20 \\
        --only split-judge,specialist-i3 [--prediction learned] [--practical] [--estimate]

(the numbers of docs/results/adaptive.md, with the commands there).

For each of the benchmark's simulated pools (``benchmarks.bench_adaptive``, the pool of
replication s drawn exactly as :func:`benchmarks.bench_adaptive.one_run` draws it), the true
conditional variance v_i = Var(Y | Z_i, S_i) of every item is computed from the generator
(Bayes' rule on its Bernoulli label and its signal model), and with it, for every grid point g,
the Poisson-design variance of the difference estimator with the best fixed prediction
f(Z, S) = E[Y | Z, S] of the benchmark's target (the kernel-weighted pool mean of Y):

.. math::

    V_g(\\pi) = \\sum_i a_{gi} (1 / \\pi_i - 1), \\qquad
    a_{gi} = k_{gi}^2 v_i / (\\textstyle\\sum_j k_{gj})^2,

k the profile's kernel (the one ``sw.profile`` uses). Uniform labeling of n items has
pi_i = n / M; the labels uniform labeling needs for a worst-grid-point variance V is then
M / (1 + V / max_g A_g), A_g = sum_i a_gi.

The oracle design minimises max_g V_g(pi) over pi with sum_i pi_i = 550 (the benchmark's
expected total: a pilot of 100, three batches of 150) and bounds l <= pi_i <= 1 (:func:`minimax`,
the dual over the grid points' weights, Neyman allocation in each step; the reported gap between
the primal and the dual value says it converged). The protocols (``PROTOCOLS``):

* ``pilot+floor``: the benchmark's. pi_i = 1 - (1 - pi_0)(1 - q_i), pi_0 = 100 / M, and
  q_i at least the floor of three batches, 1 - prod_b (1 - u 150 / |U_b|), u = 0.3,
  |U_b| = M - 100 - 150 (b - 1) (expected unlabeled items): l = pi_0 + (1 - pi_0) q_floor.
* ``pilot``: no floor, l = pi_0.
* ``floor``: no pilot, all 550 labels adaptive with the floor u 550 / M.
* ``none``: l = 0.

Beside them, ``rule`` is the allocation rule of ``sw.next_items`` (one batch of 450 after the
pilot, in expectation) given the true variances: each grid point's per-label residual variance
sigma^2_g = sum k^2 v / sum k^2 and pool size (sum k)^2 / sum k^2 (what ``sw.plan`` would
report) and sd_i = sqrt(v_i) (clipped as the rule clips it) into the code's own
:func:`slicewise.planning.adaptive.adaptive_probabilities` (the slices' targets, then the
within-slice floored Neyman allocation), and its V_g on the kernel target.

``--prediction`` sets f: ``bayes`` (E[Y | Z, S], the default), ``linear`` (the best prediction
linear in S at Z, the LACE oracle beta*(z); paper designs) or ``learned`` (the logistic residual
model of ``sw.next_items`` fitted on a uniform sample of 550 of the pool's labels), with
v_i = E[(Y - f_i)^2 | Z_i, S_i] = p_i (1 - p_i) + (p_i - f_i)^2. ``--practical`` adds the row
``practical``: the inclusion probabilities the benchmark's adaptive run of the same seed ends
with (``sw.next_items`` with ``--method``, default auto; from
:func:`benchmarks.bench_adaptive.one_run`) evaluated with the same V_g, i.e. how well the design
actually chosen would serve the estimator with the known prediction.

``--estimate`` draws labels and reports true errors (no variance formula): the cross-fitted
difference estimator of :func:`difference_errors` (its prediction the residual model, learned
from the labels drawn) under the ``pilot+floor`` oracle design, the benchmark's adaptive design
and uniform labeling at 1, 1.5 and 2 times the budget (:func:`estimate_rows`).

Output: per scenario, the mean over pools of the labels saved (1 - labels / uniform labels for
the worst variance; labels = sum_i pi_i, 550 for the oracle designs), its range, and the saving on the mean worst half-width (the
benchmark's way: uniform labels for the mean over pools of the oracle's worst half-width, from
the mean uniform curve).
"""

from __future__ import annotations

import argparse
import math
import warnings
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np
import pandas as pd

from slicewise.studies.paper_designs import Design

#: Benchmark protocol: pilot, batches, batch size, floor.
PILOT, BATCHES, BATCH, FLOOR = 100, 3, 150, 0.3
PROTOCOLS = ("pilot+floor", "pilot", "floor", "none", "rule")
#: Iterations of the dual ascent in :func:`minimax`.
ITERATIONS = 1000
#: Folds of the cross-fitted difference estimator (:func:`difference_errors`).
FOLDS = 5
#: Uniform budgets (times 550) of ``--estimate``'s comparison curve.
UNIFORM_MULTIPLIERS = (1.0, 1.5, 2.0)


def _paper_design(name: str) -> Design:
    from slicewise.studies.paper_designs import setting_b, setting_c, specialist

    designs = {"setting-b": lambda: setting_b(1000), "setting-c": lambda: setting_c(500)}
    designs["specialist-i3"] = lambda: specialist(3000)
    if name not in designs:
        raise ValueError(f"no generator for scenario {name!r}; choose split-judge or {designs}")
    return designs[name]()


def bayes_probability(name: str, full: pd.DataFrame) -> np.ndarray:
    """p_i = P(Y = 1 | Z_i, S_i) from the scenario's generator (Bayes' rule)."""
    if name == "split-judge":
        theta = np.array([0.3, 0.5, 0.6, 0.8])[full["level"].to_numpy().astype(int) - 1]
        judge, easy = full["judge"].to_numpy(), full["easy"].to_numpy()
        right = np.where(judge == 1, 0.98 * theta, 0.02 * theta)
        wrong = np.where(judge == 1, 0.02 * (1 - theta), 0.98 * (1 - theta))
        return np.asarray(np.where(easy == 1, right / (right + wrong), theta), dtype=np.float64)
    design = _paper_design(name)
    theta, gamma, offset, sigma = design._parameters(full["z"].to_numpy(dtype=np.float64))
    s = full[design.signal_names].to_numpy(dtype=np.float64)
    # log N(s; a + gamma, sigma) - log N(s; a, sigma), summed over the signals
    llr = np.sum(gamma * (2.0 * (s - offset) - gamma) / (2.0 * sigma**2), axis=1)
    logit = np.log(theta / (1 - theta)) + llr
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700))), dtype=np.float64)


def conditional_variance(name: str, full: pd.DataFrame, prediction: str = "bayes") -> np.ndarray:
    """v_i = E[(Y - f_i)^2 | Z_i, S_i] from the scenario's generator: with ``prediction='bayes'``
    f_i = p_i (:func:`bayes_probability`) and v_i = p_i (1 - p_i); with 'linear' (paper designs)
    f_i the best prediction linear in S at Z_i (the LACE oracle, beta*(Z_i)) and
    v_i = p_i (1 - p_i) + (p_i - f_i)^2. Split-judge's linear prediction in (judge, easy,
    judge x easy) within a level is saturated, so both are p_i (1 - p_i) there."""
    p = bayes_probability(name, full)
    if prediction == "bayes" or name == "split-judge":
        return np.asarray(p * (1 - p), dtype=np.float64)
    from slicewise.studies.paper_designs import oracle_moments

    design = _paper_design(name)
    theta, gamma, offset, sigma = design._parameters(full["z"].to_numpy(dtype=np.float64))
    s = full[design.signal_names].to_numpy(dtype=np.float64)
    beta = oracle_moments(theta, gamma, sigma)[0]
    f = theta + np.sum(beta * (s - offset - gamma * theta[:, None]), axis=1)
    return np.asarray(p * (1 - p) + (p - f) ** 2, dtype=np.float64)


@dataclass(frozen=True)
class Pool:
    a: np.ndarray  # (G, M): k^2 v / (sum k)^2
    kernel: np.ndarray  # (M, G)
    v: np.ndarray  # (M,)
    nearest: np.ndarray  # (M,)
    x: np.ndarray  # (M, p): the residual model's covariates
    y: np.ndarray  # (M,): the labels

    @property
    def size(self) -> int:
        return int(self.v.size)

    def variances(self, pi: np.ndarray) -> np.ndarray:
        # an item with v_i = 0 may get pi_i = 0 when nothing bounds it: it adds nothing
        return np.asarray(self.a @ (1.0 / np.maximum(pi, 1e-300) - 1.0), dtype=np.float64)

    def uniform_labels(self, worst: float) -> float:
        """Labels uniform labeling needs for a worst-grid-point variance ``worst``."""
        return self.size / (1.0 + worst / float(self.a.sum(axis=1).max()))


def pool_for(sc: object, seed: int, prediction: str = "bayes") -> Pool:
    """The pool of the benchmark's replication ``seed`` (drawn as ``one_run`` draws it)."""
    from slicewise.planning.plan import _context, nearest_point

    full = sc.draw(np.random.default_rng(seed))  # type: ignore[attr-defined]
    common = {"grid": list(sc.grid), "bandwidth": sc.bandwidth} if sc.grid else {}  # type: ignore[attr-defined]
    pilot = _context(
        full,
        z=sc.z,  # type: ignore[attr-defined]
        signals=list(sc.signals),  # type: ignore[attr-defined]
        label="y",
        kind=sc.kind,  # type: ignore[attr-defined]
        id=None,
        missing="impute",
        **{"grid": None, "bandwidth": None, **common},
    )
    kern = pilot.ctx.kernel(1.0)
    dense = np.asarray(kern if isinstance(kern, np.ndarray) else kern.toarray(), dtype=np.float64)
    order = pilot.items.input_rows(np.arange(len(full)))
    kernel = np.zeros_like(dense)
    kernel[order] = dense
    nearest = np.full(len(full), -1)
    nearest[order] = nearest_point(kern)
    x = residual_covariates(pilot, len(full))
    y = full["y"].to_numpy(dtype=np.float64)
    if prediction == "learned":
        p = bayes_probability(sc.name, full)  # type: ignore[attr-defined]
        f = learned_prediction(x, y, seed)
        v = p * (1.0 - p) + (p - f) ** 2
    else:
        v = conditional_variance(sc.name, full, prediction)  # type: ignore[attr-defined]
    a = (kernel**2 * v[:, None]).T / kernel.sum(axis=0)[:, None] ** 2
    return Pool(a=a, kernel=kernel, v=v, nearest=nearest, x=x, y=y)


def residual_covariates(pilot: object, m: int) -> np.ndarray:
    """Covariates of ``sw.next_items``'s residual model (the learner's, for a continuous profile
    with the kernel-weight and kernel-weight x signal terms), in the pool's rows."""
    from slicewise.planning.adaptive import residual_design

    items = pilot.items  # type: ignore[attr-defined]
    design = residual_design(pilot)
    out = np.empty_like(design)
    out[items.input_rows(np.arange(m))] = design  # canonical row j is input row order[j]
    return np.asarray(out, dtype=np.float64)


def learned_prediction(x: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray:
    """f_i of the residual model (logistic, C = 1, on :func:`residual_covariates`) fitted on a
    uniform sample of 550 of the pool's labels (seeded by ``seed``), every item."""
    from slicewise.estimators.predictors import fit_logistic

    sample = np.random.default_rng([seed, 550]).choice(
        y.size, PILOT + BATCHES * BATCH, replace=False
    )
    return np.asarray(fit_logistic(x[sample], y[sample], c=1.0).predict(x), dtype=np.float64)


def difference_errors(pool: Pool, pi: np.ndarray, labeled: np.ndarray, seed: int) -> np.ndarray:
    """Error at every grid point of the cross-fitted difference estimator with the residual
    model as its prediction: sum_T k f / sum_T k + sum_L k (y - f_oof) / pi / sum_T k, f the
    mean of five fold models fitted on the labeled items (unweighted), f_oof each labeled
    item's out-of-fold prediction. Unbiased for the pool profile given the fits."""
    from slicewise.estimators.predictors import fit_logistic

    index = np.flatnonzero(labeled)
    folds = np.random.default_rng([seed, 5]).integers(0, FOLDS, index.size)
    f_pool = np.zeros(pool.size)
    f_out = np.zeros(index.size)
    for k in range(FOLDS):
        fit = fit_logistic(pool.x[index[folds != k]], pool.y[index[folds != k]], c=1.0)
        prediction = fit.predict(pool.x)
        f_pool += prediction / FOLDS
        f_out[folds == k] = prediction[index[folds == k]]
    mass = pool.kernel.sum(axis=0)
    k_lab = pool.kernel[index]
    estimate = (pool.kernel.T @ f_pool + k_lab.T @ ((pool.y[index] - f_out) / pi[index])) / mass
    return np.asarray(estimate - pool.kernel.T @ pool.y / mass, dtype=np.float64)


def neyman(score: np.ndarray, lower: np.ndarray, budget: float) -> np.ndarray:
    """pi_i = clip(c sqrt(score_i), lower_i, 1) with sum pi = budget: minimises
    sum score_i / pi_i under the bounds."""
    root = np.sqrt(np.maximum(score, 0.0))
    lo, hi = 0.0, 1.0
    while np.clip(hi * root, lower, 1.0).sum() < budget and hi < 1e12:
        hi *= 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if np.clip(mid * root, lower, 1.0).sum() < budget:
            lo = mid
        else:
            hi = mid
    return np.asarray(np.clip(hi * root, lower, 1.0), dtype=np.float64)


def minimax(
    pool: Pool, lower: np.ndarray, budget: float, iterations: int = ITERATIONS
) -> tuple[np.ndarray, float]:
    """pi minimising max_g V_g(pi) under sum pi = budget, lower <= pi <= 1, and the relative
    duality gap. Exponentiated-gradient ascent on the grid points' weights lambda: the inner
    minimum of sum_g lambda_g V_g is the Neyman allocation on sum_g lambda_g a_gi (concave dual,
    gradient V_g); the best primal iterate is kept."""
    g = pool.a.shape[0]
    lam = np.full(g, 1.0 / g)
    best_pi, best_primal, best_dual = lower, math.inf, -math.inf
    for it in range(iterations):
        pi = neyman(lam @ pool.a, lower, budget)
        var = pool.variances(pi)
        dual = float(lam @ var)
        best_dual = max(best_dual, dual)
        if var.max() < best_primal:
            best_primal, best_pi = float(var.max()), pi
        step = 2.0 / math.sqrt(it + 1.0)
        lam = lam * np.exp(step * var / max(float(var.max()), 1e-300))
        lam /= lam.sum()
    return best_pi, (best_primal - best_dual) / best_primal


def rule(pool: Pool, pi0: float, more: float, floor: float) -> np.ndarray:
    """pi of ``sw.next_items``'s allocation given the true variances (one batch of ``more``
    labels after a uniform pilot at rate pi0, in expectation; module notes): its own
    :func:`slicewise.planning.adaptive.adaptive_probabilities` on sd_i = sqrt(v_i), clipped as
    next_items clips it, with the prior weight of next_items."""
    from slicewise.planning.adaptive import PRIOR_LABELS, RESIDUAL_SD, adaptive_probabilities

    k = pool.kernel
    sq = (k**2).sum(axis=0)
    n_pool = k.sum(axis=0) ** 2 / sq
    need = SimpleNamespace(
        sigma=np.sqrt((k**2 * pool.v[:, None]).sum(axis=0) / sq),
        n_labeled=pi0 * n_pool,
        n_pool=n_pool,
        size=k.shape[1],
    )
    m = pool.size
    batch = more / (1.0 - pi0)  # every item open, each at its (1 - pi0) share
    sd = np.clip(np.sqrt(pool.v), *RESIDUAL_SD)
    open_ = np.ones(m, dtype=bool)
    p = adaptive_probabilities(need, pool.nearest, sd, open_, batch, floor, PRIOR_LABELS)
    return np.asarray(1.0 - (1.0 - pi0) * (1.0 - p), dtype=np.float64)


def practical(sc: object, seed: int) -> np.ndarray:
    """pi of the benchmark's adaptive run ``seed`` (``sw.next_items`` as the benchmark calls
    it, the scenario's method; ``--method auto`` sets it)."""
    from benchmarks.bench_adaptive import one_run

    run = one_run(sc, seed, "adaptive", sc.batch)  # type: ignore[arg-type, attr-defined]
    return np.asarray(run["pi"], dtype=np.float64)


def design(pool: Pool, protocol: str, iterations: int = ITERATIONS) -> tuple[np.ndarray, float]:
    """(pi, duality gap) of ``protocol`` on ``pool``."""
    m = pool.size
    total = PILOT + BATCHES * BATCH
    pi0 = PILOT / m
    if protocol == "rule":
        return rule(pool, pi0, BATCHES * BATCH, FLOOR), 0.0
    if protocol == "pilot+floor":
        q = 1.0 - float(
            np.prod([1 - FLOOR * BATCH / (m - PILOT - BATCH * b) for b in range(BATCHES)])
        )
        low = pi0 + (1.0 - pi0) * q
    elif protocol == "pilot":
        low = pi0
    elif protocol == "floor":
        low = FLOOR * total / m
    else:
        low = 0.0
    return minimax(pool, np.full(m, low), float(total), iterations)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30, help="pools (the benchmark's seeds 0..)")
    parser.add_argument(
        "--only",
        default="split-judge,specialist-i3",
        help="scenarios (comma-separated): split-judge, setting-b, setting-c, specialist-i3",
    )
    parser.add_argument(
        "--prediction",
        choices=("bayes", "linear", "learned"),
        default="bayes",
        help="the difference estimator's prediction: E[Y | Z, S], the best linear in S at Z, or "
        "next_items' residual model fitted on a uniform 550 labels",
    )
    parser.add_argument("--iterations", type=int, default=ITERATIONS, help="of the dual ascent")
    parser.add_argument(
        "--practical",
        action="store_true",
        help="also evaluate the inclusion probabilities of the benchmark's adaptive runs",
    )
    parser.add_argument("--method", default="auto", help="method of those runs (default auto)")
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="also draw labels under the oracle design, the benchmark's adaptive one and uniform "
        "ones, and report the true errors of the cross-fitted difference estimator",
    )
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # next_items' notes in the practical runs
    from benchmarks.bench_adaptive import scenarios

    wanted = args.only.split(",")
    total = PILOT + BATCHES * BATCH
    estimates: list[str] = []
    print(
        "| scenario | protocol | labels saved, mean over pools (range) | uniform labels for the "
        "mean worst half-width | labels saved on it | worst half-width, oracle / uniform at 550 "
        "| largest duality gap |"
    )
    print("|---|---|---|---|---|---|---|")
    for sc in scenarios():
        if sc.name not in wanted:
            continue
        pools = [pool_for(sc, s, args.prediction) for s in range(args.reps)]
        uniform_worst = np.array([p.a.sum(axis=1).max() for p in pools])
        sc = replace(sc, method=args.method)
        oracle_pi: list[np.ndarray] = []
        for protocol in PROTOCOLS + (("practical",) if args.practical else ()):
            saved, half, gaps = [], [], []
            for seed, pool in enumerate(pools):
                if protocol == "practical":
                    pi, gap = practical(sc, seed), 0.0
                else:
                    pi, gap = design(pool, protocol, args.iterations)
                if protocol == "pilot+floor":
                    oracle_pi.append(pi)
                worst = float(pool.variances(pi).max())
                saved.append(1.0 - float(pi.sum()) / pool.uniform_labels(worst))
                half.append(1.96 * math.sqrt(max(worst, 0.0)))
                gaps.append(gap)
            # the benchmark's way: the mean uniform curve at the mean oracle half-width;
            # uniform's worst half-width at n labels is 1.96 sqrt((M / n - 1) A_max)
            m = pools[0].size
            grid_n = np.linspace(total, pools[0].size, 4000)
            curve = np.array(
                [np.mean(1.96 * np.sqrt((m / n - 1.0) * uniform_worst)) for n in grid_n]
            )
            goal = float(np.mean(half))
            n_u = float(np.interp(goal, curve[::-1], grid_n[::-1]))
            if goal > curve[0]:  # worse than uniform labeling at the same budget
                n_u = math.nan
            cell = f"< {total}" if math.isnan(n_u) else f"{n_u:.0f} | {1 - total / n_u:+.1%}"
            cell = f"{cell} | < 0%" if math.isnan(n_u) else cell
            at_550 = float(np.mean(1.96 * np.sqrt((m / total - 1.0) * uniform_worst)))
            print(
                f"| {sc.name} | {protocol} | {np.mean(saved):+.1%} ({min(saved):+.1%} to "
                f"{max(saved):+.1%}) | {cell} | {goal:.4f} / "
                f"{at_550:.4f} | {max(gaps):.1e} |",
                flush=True,
            )
        if args.estimate:
            estimates.extend(estimate_rows(sc, pools, oracle_pi))
    if estimates:
        print()
        print(
            "| scenario | design | labels | mean grid MSE | worst-point MSE | uniform labels "
            "for that worst-point MSE | labels saved on it |"
        )
        print("|---|---|---|---|---|---|---|")
        print("\n".join(estimates))


def estimate_rows(sc: object, pools: list[Pool], oracle_pi: list[np.ndarray]) -> list[str]:
    """Rows of ``--estimate``: the cross-fitted difference estimator (:func:`difference_errors`)
    under the oracle design (``pilot+floor``; Poisson draws seeded by the pool's seed), the
    benchmark's adaptive design and uniform labeling at :data:`UNIFORM_MULTIPLIERS` times the
    budget (the labeled sets of :func:`benchmarks.bench_adaptive.one_run`, same seeds); labels
    saved on the worst-point MSE from the uniform curve (interpolated in 1 / MSE)."""
    from benchmarks.bench_adaptive import one_run

    def summary(
        runs: list[tuple[np.ndarray, np.ndarray]], seeds_pools: list[Pool]
    ) -> tuple[float, float, float]:
        errors = np.array(
            [
                difference_errors(p, pi, lab, s)
                for s, (p, (pi, lab)) in enumerate(zip(seeds_pools, runs, strict=True))
            ]
        )
        mse = (errors**2).mean(axis=0)
        labels = float(np.mean([lab.sum() for _, lab in runs]))
        return labels, float(mse.mean()), float(mse.max())

    designs: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    designs["oracle (pilot+floor)"] = [
        (pi, np.random.default_rng([s, 77]).random(pi.size) < pi) for s, pi in enumerate(oracle_pi)
    ]
    for strategy, mult in [("adaptive", 1.0)] + [("uniform", m) for m in UNIFORM_MULTIPLIERS]:
        runs = [
            one_run(sc, s, strategy, round(sc.batch * mult))  # type: ignore[arg-type, attr-defined]
            for s in range(len(pools))
        ]
        name = f"{strategy}, {sc.method}" if strategy == "adaptive" else f"uniform x{mult:g}"  # type: ignore[attr-defined]
        designs[name] = [(np.asarray(r["pi"]), np.asarray(r["labeled"])) for r in runs]
    results = {name: summary(runs, pools) for name, runs in designs.items()}
    curve = [results[f"uniform x{m:g}"] for m in UNIFORM_MULTIPLIERS]
    labels_u = np.array([c[0] for c in curve])
    precision = np.array([1.0 / c[2] for c in curve])
    rows = []
    for name, (labels, mean_mse, worst_mse) in results.items():
        goal = 1.0 / worst_mse
        if goal < precision.min():  # worse than uniform labeling at the same budget
            cell = f"< {labels_u.min():.0f} | < 0%"
        elif goal > precision.max():
            cell = f"> {labels_u.max():.0f} | > {1 - labels / labels_u.max():.0%}"
        else:
            order = np.argsort(precision)
            n_u = float(np.interp(goal, precision[order], labels_u[order]))
            cell = f"{n_u:.0f} | {1 - labels / n_u:+.0%}"
        rows.append(
            f"| {sc.name} | {name} | {labels:.0f} | {mean_mse:.3g} | {worst_mse:.3g} | {cell} |"  # type: ignore[attr-defined]
        )
    return rows


if __name__ == "__main__":
    main()
