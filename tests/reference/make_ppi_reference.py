"""Freeze ppi_py's PPI++ mean estimate and interval on a seeded dataset (tests/reference).

Run once, in a throwaway environment that has ppi_py (it is not a slicewise dependency):

    python3.11 -m venv /tmp/ppi-venv && /tmp/ppi-venv/bin/pip install ppi-python
    /tmp/ppi-venv/bin/python tests/reference/make_ppi_reference.py

It writes tests/reference/ppi_reference.json with the dataset itself (so the test does not depend
on numpy's random streams) and ppi_py's outputs. The test, tests/methods/test_baselines.py, reads
the JSON and needs no ppi_py.

Conventions (ppi_py 0.2.3, ``ppi_py.ppi``): with n labeled items and N unlabeled items (here the
pool T of M = n + N items minus the labeled set L),

    ppi_mean_pointestimate = mean_L(Y) - lam * {mean_L(Yhat) - mean_U(Yhat)},
    lam (PPI++, clipped to [0, 1]) = Cov_L(Y, Yhat) / {(1 + n/N) Var_{L+U}(Yhat)},

with Cov_L a 1/n covariance over L and Var_{L+U} numpy's ddof-1 variance over all M items. The
slicewise finite-pool form mean_L(Y) - eta {mean_L(P) - mean_T(P)} with eta = Cov_L / Var_T (both
1/size moments) is the same estimator with lam = eta * N / M; since Var_{L+U} (ddof 1) =
Var_T * M / (M - 1), ppi_py's own lam equals eta * (N / M) * (M - 1) / M. The "matched" entries
evaluate ppi_py at lam_matched = lam_ppi * M / (M - 1), i.e. at slicewise's coefficient.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
import ppi_py
from ppi_py.ppi import _calc_lam_glm

SEED = 20260501
M = 2000
N_LABELED = 400
ALPHA = 0.05


def main() -> None:
    rng = np.random.default_rng(SEED)
    y = (rng.random(M) < 0.6).astype(float)
    signal = y + 0.8 * rng.standard_normal(M)
    prediction = 1.0 / (1.0 + np.exp(-(-0.5 + 1.5 * signal)))  # a fixed predictor, not fitted
    labeled = np.zeros(M, dtype=bool)
    labeled[rng.permutation(M)[:N_LABELED]] = True

    y_lab = y[labeled]
    p_lab = prediction[labeled]
    p_unl = prediction[~labeled]
    n, big_n = y_lab.size, p_unl.size

    default_est = float(ppi_py.ppi_mean_pointestimate(y_lab, p_lab, p_unl)[0])
    default_ci = ppi_py.ppi_mean_ci(y_lab, p_lab, p_unl, alpha=ALPHA)
    estimate_1 = ppi_py.ppi_mean_pointestimate(y_lab, p_lab, p_unl, lam=1)
    lam = float(
        _calc_lam_glm(
            (y_lab - estimate_1)[:, None],
            (p_lab - estimate_1)[:, None],
            (p_unl - estimate_1)[:, None],
            np.eye(1),
            clip=True,
        )
    )
    lam_matched = lam * M / (M - 1)
    matched_est = float(ppi_py.ppi_mean_pointestimate(y_lab, p_lab, p_unl, lam=lam_matched)[0])
    matched_ci = ppi_py.ppi_mean_ci(y_lab, p_lab, p_unl, alpha=ALPHA, lam=lam_matched)
    classical_ci = ppi_py.ppi_mean_ci(y_lab, p_lab, p_unl, alpha=ALPHA, lam=0)

    out = {
        "source": "ppi-python " + version("ppi-python"),
        "seed": SEED,
        "alpha": ALPHA,
        "n": n,
        "N": big_n,
        "M": M,
        "y": y.tolist(),
        "prediction": prediction.tolist(),
        "labeled": labeled.astype(int).tolist(),
        "lam_ppi": lam,
        "lam_matched": lam_matched,
        "estimate_default": default_est,
        "ci_default": [float(default_ci[0][0]), float(default_ci[1][0])],
        "estimate_matched": matched_est,
        "ci_matched": [float(matched_ci[0][0]), float(matched_ci[1][0])],
        "ci_classical": [float(classical_ci[0][0]), float(classical_ci[1][0])],
    }
    path = Path(__file__).with_name("ppi_reference.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}: lam_ppi = {lam:.6f}, estimate = {default_est:.6f}")


if __name__ == "__main__":
    main()
