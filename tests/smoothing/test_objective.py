"""The two objectives of smoothing (issue 29): the papers' estimators under ``'ensemble'``, with
the robust empirical-Bayes interval beside them, and the limited translation of ``'slice'``."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special

import slicewise as sw
from slicewise.cli import main
from slicewise.inference.robust_eb import robust_critical
from slicewise.smoothing.area import fit_area_model
from slicewise.smoothing.linear_mixed import AreaModel
from slicewise.smoothing.objective import OBJECTIVES, PRECISE_LABELS, TRANSLATION, borrow


def _worst_non_coverage(m2: float, chi: float) -> float:
    """sup E r(b, chi) over distributions of b with E b^2 = m2, by a linear program on a grid
    of b (an independent computation of AKP's rho)."""
    b = np.linspace(0.0, 60.0, 6001)
    r = special.ndtr(-chi - b) + special.ndtr(-chi + b)
    out = optimize.linprog(
        -r, A_eq=np.vstack([np.ones_like(b), b**2]), b_eq=[1.0, m2], bounds=(0, None)
    )
    assert out.status == 0
    return float(-out.fun)


@pytest.mark.parametrize("m2", [0.05, 0.3, 1.0, 4.0])
def test_robust_critical_value_agrees_with_a_linear_program(m2: float) -> None:
    level = 0.95
    want = optimize.brentq(lambda c: _worst_non_coverage(m2, c) - (1 - level), 1.9, 40.0)
    got = float(robust_critical(np.array([m2]), level)[0])
    assert abs(got - want) <= 2e-3 * want, (got, want)
    assert float(robust_critical(np.array([0.0]), level)[0]) == pytest.approx(1.959964, abs=1e-6)


def test_robust_interval_covers_on_average_whatever_the_prior() -> None:
    """Departures from a three-point prior (most slices on the regression, a few far from it):
    the parametric empirical-Bayes interval theta +/- z sqrt(w) se (the posterior one under a
    normal prior) undercovers on average; the robust one covers at least at its level."""
    rng = np.random.default_rng(0)
    d, se, reps = 400, 1.0, 200
    sigma2 = 0.5  # the second moment of the departures, known here
    # departures: 0 with probability 0.9, +/- sqrt(sigma2 / 0.1) otherwise
    w = sigma2 / (sigma2 + se**2)
    m2 = (1 - w) / w
    half_robust = float(robust_critical(np.array([m2]), 0.95)[0]) * w * se
    half_param = 1.959964 * np.sqrt(w) * se
    robust, param = [], []
    for _ in range(reps):
        far = rng.random(d) < 0.1
        theta = np.where(far, rng.choice([-1.0, 1.0], d) * np.sqrt(sigma2 / 0.1), 0.0)
        direct = theta + rng.normal(0, se, d)
        shrunk = w * direct  # the regression is 0
        robust.append(np.mean(np.abs(shrunk - theta) <= half_robust))
        param.append(np.mean(np.abs(shrunk - theta) <= half_param))
    assert np.mean(robust) >= 0.95, np.mean(robust)
    assert np.mean(param) < 0.93, np.mean(param)


def _area_model(rng: np.random.Generator, d: int = 30) -> tuple[AreaModel, np.ndarray]:
    x = np.column_stack([np.ones(d), rng.normal(size=d)])
    psi = rng.uniform(0.002, 0.02, d)
    theta = x @ np.array([0.5, 0.05]) + rng.normal(0, 0.05, d)
    y = theta + rng.normal(0, np.sqrt(psi))
    model = AreaModel(
        y=y, psi=psi, x=x, z=np.zeros((d, 0)), column_level=np.zeros(0, np.intp), level_names=()
    )
    return model, theta


def test_a_departing_slice_moves_at_most_c_standard_errors_and_stays_covered() -> None:
    """One slice departs by 0.4 from a regression the others follow exactly. Over draws of the
    direct estimates, the ensemble objective pulls it toward the others (bias of several
    standard errors, its model interval misses it); the slice objective's bias stays within
    c se, its MSE within (1 + c^2) of the direct one, and its interval covers it at least as
    often as the direct interval (seeded, 300 draws: slice bias -0.33 se, RMSE 1.15 se, coverage
    0.967 against the direct 0.910; ensemble bias -1.65 se, RMSE 2.07 se, coverage 0.533)."""
    rng = np.random.default_rng(5)
    d, se, reps = 20, 0.05, 300
    theta = np.full(d, 0.5)
    theta[0] = 0.9
    x = np.ones((d, 1))
    errors = {o: [] for o in OBJECTIVES}
    covered = {o: [] for o in OBJECTIVES}
    direct_cover = []
    for _ in range(reps):
        direct = theta + rng.normal(0, se, d)
        model = AreaModel(
            y=direct,
            psi=np.full(d, se**2),
            x=x,
            z=np.zeros((d, 0)),
            column_level=np.zeros(0, np.intp),
            level_names=(),
        )
        fit = fit_area_model(model, "fh")
        for objective in OBJECTIVES:
            out = borrow(
                direct,
                np.full(d, se),
                fit.estimate,
                fit.se,
                fit.weight,
                np.full(d, 50.0),
                1.96,
                objective,  # type: ignore[arg-type]
            )
            half = 1.96 * out.se + out.bias_bound
            errors[objective].append(out.estimate[0] - theta[0])
            covered[objective].append(abs(out.estimate[0] - theta[0]) <= half[0])
        direct_cover.append(abs(direct[0] - theta[0]) <= 1.96 * se)
    slice_err = np.array(errors["slice"])
    assert abs(slice_err.mean()) <= TRANSLATION * se + 3 * slice_err.std() / np.sqrt(reps)
    assert np.mean(slice_err**2) <= (1 + TRANSLATION**2) * se**2 * 1.2
    assert np.mean(covered["slice"]) >= np.mean(direct_cover)
    ens_err = np.array(errors["ensemble"])
    assert ens_err.mean() < -1.5 * se  # pulled toward the others
    assert np.mean(covered["ensemble"]) < np.mean(direct_cover) - 0.2, np.mean(covered["ensemble"])


def test_ensemble_objective_reports_the_papers_estimators() -> None:
    """sw.domains(method=m, objective='ensemble') is the area-level model's estimate and standard
    error for every domain (names mean what the papers mean): Fay-Herriot EBLUP for 'fh', the
    Bayesian posterior for 'pp-s'; the slice objective moves precise domains less."""
    rng = np.random.default_rng(2)
    n_dom = 12
    dom = np.repeat(np.arange(n_dom), 200)
    p = 1 / (1 + np.exp(-rng.normal(0, 0.6, n_dom)))[dom]
    y = (rng.random(dom.size) < p).astype(float)
    frame = pd.DataFrame({"dom": dom, "s": p + rng.normal(0, 0.3, dom.size), "y": y})
    labeled = sw.sample(frame, strata="dom", fraction=0.15, rng=1).apply(frame, label="y")
    common = {"domain": "dom", "label": "y", "signals": ["s"], "strata": "stratum"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("fh", "pp-s"):
            ens = sw.domains(labeled, method=method, objective="ensemble", **common)
            own = sw.domains(labeled, method=method, **common)
            np.testing.assert_allclose(ens.estimate, ens.params["smoothed_estimate"], atol=1e-12)
            np.testing.assert_allclose(ens.se, ens.params["smoothed_se"], atol=1e-12)
            np.testing.assert_allclose(ens.bias_bound, 0.0)
            assert ens.params["objective"] == "ensemble"
            np.testing.assert_allclose(own.params["smoothed_estimate"], ens.estimate, atol=1e-12)
            shift = own.estimate - own.direct_estimate
            precise = own.n_labeled >= PRECISE_LABELS
            assert np.all(np.abs(shift[precise]) <= TRANSLATION * own.se[precise] + 1e-12)
            low, high = ens.ci(robust=True)
            assert np.all(high - low > 0)
            with pytest.raises(ValueError, match=r"'robust' parameter .*objective='slice'"):
                own.ci(robust=True)


#: The public functions of issue 29 that take the objective.
TAKING = [
    sw.profile,
    sw.domains,
    sw.validate,
    sw.gap,
    sw.profile_models,
    sw.rank_models,
    sw.deployment_score,
    sw.study,
]


@pytest.mark.parametrize("function", TAKING, ids=lambda f: f.__name__)
def test_every_entry_point_takes_the_objective(function: object) -> None:
    parameter = inspect.signature(function).parameters["objective"]  # type: ignore[arg-type]
    assert parameter.default == "slice"


def test_a_bad_objective_is_named_with_its_choices() -> None:
    frame = pd.DataFrame({"g": [0, 1] * 20, "s": np.arange(40.0), "y": [0.0, 1.0] * 20})
    with pytest.raises(
        sw.InvalidParameterError,
        match=r"'objective' parameter of profile .*"
        r"'slice', 'ensemble'. Got 'average'",
    ):
        sw.profile(frame, z="g", signals="s", label="y", objective="average")
    with pytest.raises(sw.InvalidParameterError, match=r"'objective' parameter of domains"):
        sw.domains(frame, domain="g", label="y", inclusion=None, objective="average")


@pytest.mark.parametrize("command", ["profile", "domains", "validate", "study"])
def test_the_command_line_takes_the_objective(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--objective" in capsys.readouterr().out


def test_notes_and_summary_say_which_promise_holds() -> None:
    rng = np.random.default_rng(4)
    g = rng.integers(0, 8, 1600)
    y = (rng.random(1600) < 0.3 + 0.05 * g).astype(float)
    frame = pd.DataFrame({"g": g, "s": y + rng.normal(0, 0.8, 1600), "y": y})
    frame.loc[160:, "y"] = np.nan
    kw = {"z": "g", "signals": "s", "label": "y", "kind": "categorical"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        own = sw.profile(frame, **kw)  # type: ignore[arg-type]
        ens = sw.profile(frame, objective="ensemble", **kw)  # type: ignore[arg-type]
    assert "each slice's interval covers that slice" in " ".join(own.notes)
    assert "cover on average over slices" in " ".join(ens.notes)
    assert "Promise" in own.summary()
    assert "objective='ensemble'" in ens.summary().replace("\n", " ")
