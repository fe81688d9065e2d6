"""Agreement with ppi_py (global mean, equal probabilities) and samplics (area-level EBLUP, REML).

Reference values were produced by tests/reference/make_domain_reference.py with ppi-python 0.2.3
and samplics 0.6.1 and frozen in tests/reference/domain_reference.json (inputs included).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _domain_helpers import stratified_sample
from scipy import stats

from slicewise.estimators.survey.ht import hajek, horvitz_thompson
from slicewise.estimators.survey.ppi import power_tuned_coefficient, ppi, ppi_plus_plus
from slicewise.smoothing.fay_herriot import eblup
from slicewise.smoothing.linear_mixed import AreaModel

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "reference" / "domain_reference.json").read_text()
)


@pytest.fixture(scope="module")
def global_mean() -> dict[str, object]:
    ref = REFERENCE["ppi_py"]
    m = int(ref["m"])
    labeled = np.array(ref["labeled"])
    y_full = np.zeros(m)
    y_full[labeled] = ref["y_labeled"]
    selected = np.zeros(m, dtype=bool)
    selected[labeled] = True
    sample = stratified_sample(np.zeros(m, dtype=np.intp), y_full, selected)
    return {"ref": ref, "sample": sample, "f": np.array(ref["f"]), "labeled": labeled}


def _ppi_var(interval: list[float], alpha: float) -> float:
    half = (interval[1] - interval[0]) / 2.0
    return float((half / stats.norm.ppf(1 - alpha / 2)) ** 2)


def test_ht_and_hajek_equal_classical_mean(global_mean: dict[str, object]) -> None:
    ref, sample = global_mean["ref"], global_mean["sample"]
    n, m = sample.n, int(ref["m"])
    classical_mid = float(np.mean(ref["classical_ci"]))
    ht = horvitz_thompson(sample)
    assert ht.estimate[0] == pytest.approx(classical_mid, abs=1e-12)
    assert hajek(sample).estimate[0] == pytest.approx(classical_mid, abs=1e-12)
    # ppi_py: var = std_ddof0^2 / n (no finite-population correction); ours: (1 - n/m) S^2 / n.
    ppi_var = _ppi_var(ref["classical_ci"], ref["alpha"])
    assert ht.variance[0] == pytest.approx((1 - n / m) * n / (n - 1) * ppi_var, rel=1e-9)


def test_ppi_matches_ppi_py(global_mean: dict[str, object]) -> None:
    ref, sample, f = global_mean["ref"], global_mean["sample"], global_mean["f"]
    n, m = sample.n, int(ref["m"])
    fit = ppi(sample, f)
    assert fit.estimate[0] == pytest.approx(ref["ppi_estimate"], abs=1e-12)
    # ppi_py adds the imputed term var0(f)/m (unlabeled mean treated as random); the pool mean is
    # a known constant here, so only the rectifier term remains, with the fpc.
    rectifier = _ppi_var(ref["ppi_ci"], ref["alpha"]) - np.var(f) / m
    assert fit.variance[0] == pytest.approx((1 - n / m) * n / (n - 1) * rectifier, rel=1e-9)


def test_ppi_plus_plus_matches_ppi_py(global_mean: dict[str, object]) -> None:
    ref, sample, f = global_mean["ref"], global_mean["sample"], global_mean["f"]
    labeled = global_mean["labeled"]
    n, m = sample.n, int(ref["m"])
    lam_ref = ref["ppipp_lambda"]
    at_ref = ppi(sample, f, coefficient=lam_ref)
    assert at_ref.estimate[0] == pytest.approx(ref["ppipp_estimate"], abs=1e-12)
    # Our tuned factor is the finite-pool optimum cov / S^2_U(f); ppi_py divides by
    # (1 + n/N) var(f over labeled and unlabeled) because its unlabeled mean is random.
    both = np.concatenate([f[labeled], f])
    expected = lam_ref * (1 + n / m) * np.var(both, ddof=1) / np.var(f, ddof=1)
    assert power_tuned_coefficient(sample, f)[0] == pytest.approx(expected, rel=1e-9)
    tuned = ppi_plus_plus(sample, f)
    assert 0 < tuned.params["coefficient"][0] < 1
    assert abs(tuned.estimate[0] - ref["ppipp_estimate"]) < 0.01


def test_eblup_matches_samplics() -> None:
    ref = REFERENCE["samplics"]
    x = np.array(ref["x"])
    d = x.shape[0]
    model = AreaModel(
        y=np.array(ref["y"]),
        psi=np.array(ref["psi"]),
        x=np.column_stack([np.ones(d), x]),
        z=np.zeros((d, 0)),
        column_level=np.zeros(0, dtype=np.intp),
        level_names=(),
    )
    fit = eblup(model)
    assert fit.converged
    assert fit.sigma2[0] == pytest.approx(ref["sigma2"], rel=1e-7)
    np.testing.assert_allclose(fit.beta, ref["beta"], rtol=1e-7)
    np.testing.assert_allclose(fit.estimate, ref["estimate"], rtol=1e-8)
    np.testing.assert_allclose(fit.mse, ref["mse"], rtol=1e-6)
