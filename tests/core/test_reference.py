"""naive equals statsmodels' local-constant kernel regression (frozen reference values)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "statsmodels_kernreg.json"


@pytest.mark.parametrize("case", [0, 1])
def test_naive_equals_statsmodels_kernel_regression(case: int) -> None:
    ref = json.loads(REFERENCE.read_text())
    z = np.array(ref["z"])
    y = np.full(z.size, np.nan)
    labeled = np.array(ref["labeled"])
    y[labeled] = np.array(ref["y"])[labeled]
    data = pd.DataFrame({"z": z, "y": y})
    expected = ref["cases"][case]
    res = sw.profile(
        data,
        z="z",
        label="y",
        method="naive",
        kind="continuous",
        grid=np.array(ref["grid"]),
        bandwidth=expected["bandwidth"],
    )
    np.testing.assert_allclose(res.estimate, expected["prediction"], rtol=1e-10)
