"""Frozen reference: statsmodels' local-constant kernel regression (Nadaraya-Watson).

slicewise's ``naive`` profile on a continuous Z is the local-constant kernel regression of the
labeled Y on Z with a Gaussian kernel. This script fits statsmodels' ``KernelReg`` (reg_type='lc',
var_type='c', fixed bandwidth) on seeded data and writes the data, the grid and its predictions to
``statsmodels_kernreg.json`` so the test suite needs no statsmodels at test time.

Run from the repository root: python tests/reference/make_statsmodels_reference.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import statsmodels
from statsmodels.nonparametric.kernel_regression import KernelReg

HERE = Path(__file__).resolve().parent


def main() -> None:
    rng = np.random.default_rng(20261130)
    m = 400
    z = rng.uniform(0.0, 10.0, m)
    y = (rng.random(m) < 0.2 + 0.06 * z).astype(float)
    labeled = np.sort(rng.choice(m, 120, replace=False))
    grid = np.linspace(1.0, 9.0, 9)
    cases = []
    for bandwidth in (0.6, 1.5):
        model = KernelReg(
            endog=y[labeled], exog=z[labeled], var_type="c", reg_type="lc", bw=[bandwidth]
        )
        mean, _ = model.fit(grid)
        cases.append({"bandwidth": bandwidth, "prediction": mean.tolist()})
    payload = {
        "source": f"statsmodels {statsmodels.__version__} KernelReg(reg_type='lc', var_type='c')",
        "z": z.tolist(),
        "y": y.tolist(),
        "labeled": labeled.tolist(),
        "grid": grid.tolist(),
        "cases": cases,
    }
    (HERE / "statsmodels_kernreg.json").write_text(json.dumps(payload) + "\n")


if __name__ == "__main__":
    main()
