"""Reference values for the domain estimators, from independent implementations.

* ppi_py (ppi-python 0.2.3): classical mean interval, PPI (lambda = 1) and PPI++ (tuned lambda)
  point estimates and intervals for a global mean with equal probabilities, the whole pool passed
  as the unlabeled set;
* samplics (0.4.x): area-level EBLUP fitted by REML, with its Taylor (Prasad-Rao / Datta-Lahiri)
  MSE.

The inputs are generated here with a seeded numpy Generator and frozen into the JSON next to the
outputs, so the tests need neither package. Run in a throwaway environment outside the repository:

    python -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install ppi-python samplics
    /tmp/ref-venv/bin/python tests/reference/make_domain_reference.py
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("domain_reference.json")


def ppi_reference() -> dict[str, object]:
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

    rng = np.random.default_rng(20260918)
    m, n = 3000, 300
    f = np.clip(rng.beta(2, 2, m) + rng.normal(0, 0.05, m), 0, 1)
    y_all = (rng.random(m) < 0.15 + 0.7 * f).astype(float)
    labeled = np.sort(rng.choice(m, n, replace=False))
    y = y_all[labeled]
    fl = f[labeled]
    alpha = 0.05
    classical = classical_mean_ci(y, alpha=alpha)
    ppi1 = ppi_mean_pointestimate(y, fl, f, lam=1.0)
    ppi1_ci = ppi_mean_ci(y, fl, f, alpha=alpha, lam=1.0)
    tuned = ppi_mean_pointestimate(y, fl, f)
    tuned_ci = ppi_mean_ci(y, fl, f, alpha=alpha)
    # ppi_py's tuned lambda: recover it from the point estimate (estimate is linear in lambda).
    lam = float((np.mean(y) - tuned[0]) / (np.mean(fl) - np.mean(f)))
    return {
        "version": version("ppi-python"),
        "m": m,
        "labeled": labeled.tolist(),
        "f": f.tolist(),
        "y_labeled": y.tolist(),
        "alpha": alpha,
        "classical_ci": [float(classical[0]), float(classical[1])],
        "ppi_estimate": float(np.asarray(ppi1).ravel()[0]),
        "ppi_ci": [
            float(np.asarray(ppi1_ci[0]).ravel()[0]),
            float(np.asarray(ppi1_ci[1]).ravel()[0]),
        ],
        "ppipp_estimate": float(np.asarray(tuned).ravel()[0]),
        "ppipp_lambda": lam,
        "ppipp_ci": [
            float(np.asarray(tuned_ci[0]).ravel()[0]),
            float(np.asarray(tuned_ci[1]).ravel()[0]),
        ],
    }


def eblup_reference() -> dict[str, object]:
    from samplics.sae import EblupAreaModel
    from samplics.utils.types import FitMethod

    rng = np.random.default_rng(7)
    d = 40
    x = rng.normal(size=(d, 2))
    psi = rng.uniform(0.002, 0.02, d)
    theta = 0.5 + x @ np.array([0.05, -0.03]) + rng.normal(0, 0.12, d)
    y = theta + rng.normal(0, np.sqrt(psi))
    area = np.arange(d)
    model = EblupAreaModel(method=FitMethod.reml)
    model.fit(yhat=y, X=x, area=area, error_std=np.sqrt(psi), tol=1e-12, maxiter=500)
    model.predict(X=x, area=area)
    return {
        "version": version("samplics"),
        "x": x.tolist(),
        "psi": psi.tolist(),
        "y": y.tolist(),
        "sigma2": float(model.re_std**2),
        "beta": np.asarray(model.fixed_effects).tolist(),
        "estimate": [float(model.area_est[a]) for a in area],
        "mse": [float(model.area_mse[a]) for a in area],
    }


def main() -> None:
    reference = {"ppi_py": ppi_reference(), "samplics": eblup_reference()}
    OUT.write_text(json.dumps(reference, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
