"""PyMC NUTS fit of the area-level taxonomy model, for the comparison in bench_domains.py.

Runs in a separate environment with PyMC installed (not a slicewise dependency):

    python benchmarks/mcmc_area_model.py model.npz

Same model as slicewise.smoothing.bayes: y_d ~ N(theta_d, psi_d),
theta = X beta + sum_l Z_l u_l + v, u_l ~ N(0, sigma_l^2), v ~ N(0, sigma_v^2),
sigma ~ half-Cauchy(0, 0.25); beta gets N(0, 10^2) (PyMC needs a proper prior; flat in effect).
Non-centred parametrisation. Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np


def main() -> None:
    import arviz as az
    import pymc as pm

    data = np.load(sys.argv[1])
    y, psi, x, z, col = data["y"], data["psi"], data["x"], data["z"], data["column_level"]
    levels = int(col.max()) + 1 if col.size else 0
    with pm.Model():
        beta = pm.Normal("beta", 0.0, 10.0, shape=x.shape[1])
        mu = pm.math.dot(x, beta)
        sigmas = []
        for level in range(levels):
            cols = np.flatnonzero(col == level)
            s = pm.HalfCauchy(f"sigma_{level}", 0.25)
            raw = pm.Normal(f"u_{level}", 0.0, 1.0, shape=cols.size)
            mu = mu + pm.math.dot(z[:, cols], raw * s)
            sigmas.append(s)
        s_v = pm.HalfCauchy("sigma_v", 0.25)
        v = pm.Normal("v", 0.0, 1.0, shape=y.size)
        theta = pm.Deterministic("theta", mu + v * s_v)
        sigmas.append(s_v)
        pm.Normal("y", theta, np.sqrt(psi), observed=y)
        start = time.perf_counter()
        trace = pm.sample(
            draws=1000,
            tune=1000,
            chains=2,
            cores=2,
            target_accept=0.95,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
        seconds = time.perf_counter() - start
    post = trace.posterior
    theta_s = post["theta"].stack(s=("chain", "draw")).values
    ess = az.ess(trace, var_names=["theta"])["theta"].values
    names = [f"sigma_{level}" for level in range(levels)] + ["sigma_v"]
    report = {
        "seconds": seconds,
        "chains": 2,
        "draws": 1000,
        "tune": 1000,
        "theta_mean": theta_s.mean(axis=1).tolist(),
        "theta_sd": theta_s.std(axis=1).tolist(),
        "sigma_mean": [float(post[n].mean()) for n in names],
        "min_ess": float(np.min(ess)),
        "divergences": int(trace.sample_stats["diverging"].sum()),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
