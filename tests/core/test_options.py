"""Options declared once (slicewise.methods.options): validation, public defaults, CLI flags."""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import fields

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main
from slicewise.methods.options import CLI_OPTIONS, DEFAULTS, MethodOptions, flag_of

#: Every public estimating function that takes tuning options.
PUBLIC = [
    sw.profile,
    sw.select,
    sw.profile_models,
    sw.gap,
    sw.rank_models,
    sw.deployment_score,
    sw.cascade,
    sw.study,
]

#: One value that breaks each declared constraint, and the rule the message must state.
BAD = {
    "ridge": (-1.0, "a finite float >= 0"),
    "nuisance_scale": (0.5, "a float >= 1 (b >= h) or inf"),
    "C": (0.0, "a finite float > 0"),
    "ppci_multiplier": (math.nan, "a finite float > 0"),
    "strata_count": (1, "an integer >= 2"),
    "ppi_bandwidth_scale": ("wide", "a finite float > 0"),
    "shrinkage": (-2.0, "a float >= 0 (inf pools the coefficient) or None"),
    "learner": ("forest", "one of 'logistic', 'boosting'"),
    "folds": (1, "an integer >= 2"),
    "smooth": ("always", "one of 'auto', 'fh', 'pp-s', 'none'"),
    "objective": ("average", "one of 'slice', 'ensemble'"),
    "rng": ("seed", "None, an int seed, a numpy SeedSequence or a numpy Generator"),
    "coef": ("beta", "an array (G, K) or a function of the grid point or None"),
    "uncertainty": (
        ["conf", "conf"],
        "a column name or a non-empty list of distinct column names or None",
    ),
}


def test_every_declared_option_has_a_bad_value_here() -> None:
    assert set(BAD) == {f.name for f in fields(MethodOptions)}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_names_parameter_function_rule_and_value(name: str) -> None:
    value, rule = BAD[name]
    with pytest.raises(sw.InvalidParameterError) as caught:
        MethodOptions(**{name: value}, func="profile")
    message = str(caught.value)
    assert message.startswith(f"The '{name}' parameter of profile must be {rule}. Got ")
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, TypeError)


def test_public_functions_raise_the_declared_error() -> None:
    frame = pd.DataFrame({"g": [0, 1] * 20, "s": np.arange(40.0), "y": [0.0, 1.0] * 20})
    with pytest.raises(sw.InvalidParameterError, match=r"'ridge' parameter of profile"):
        sw.profile(frame, z="g", signals="s", label="y", ridge=-1.0)
    with pytest.raises(sw.InvalidParameterError, match=r"'smooth' parameter of profile_models"):
        sw.profile_models(frame, z="g", signals="s", label=["y"], smooth="always")


def test_values_are_normalised() -> None:
    options = MethodOptions(ridge=1, strata_count=np.int64(3), shrinkage=math.inf, rng=4)
    assert isinstance(options.ridge, float)
    assert options.ridge == 1.0
    assert type(options.strata_count) is int
    assert options.strata_count == 3
    assert options.shrinkage == math.inf
    assert isinstance(options.rng, np.random.Generator)
    # None means the fixed seed: two default option sets draw the same numbers
    assert MethodOptions().rng.random() == MethodOptions().rng.random()  # type: ignore[union-attr]


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__name__)
def test_public_defaults_are_the_declared_ones(function: object) -> None:
    """A public keyword that names a declared option has the declared default."""
    parameters = inspect.signature(function).parameters  # type: ignore[arg-type]
    declared = {f.name: getattr(DEFAULTS, f.name) for f in fields(MethodOptions)}
    checked = 0
    for name, parameter in parameters.items():
        if name in declared and name not in ("rng", "coef", "folds"):
            assert parameter.default == declared[name], (function, name)
            checked += 1
    assert checked >= 2


def test_select_keeps_its_own_folds_apart_from_the_cross_fitting_folds() -> None:
    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, 600)
    y = (rng.random(600) < 0.3 + 0.2 * g).astype(float)
    frame = pd.DataFrame({"g": g, "s": y + rng.normal(0, 0.5, 600), "y": y})
    frame.loc[200:, "y"] = np.nan
    chosen = sw.select(
        frame, z="g", signals="s", label="y", kind="ordinal", method="lace", folds=4, rng=1
    )
    assert chosen.scores.shape[1] == 4
    assert "folds" not in chosen.result.params or chosen.result.params["folds"] == DEFAULTS.folds


def test_profile_models_takes_the_smoothing_and_learner_options() -> None:
    rng = np.random.default_rng(2)
    g = rng.choice(list("abcdefgh"), 2000)
    base = {k: v for k, v in zip("abcdefgh", np.linspace(0.3, 0.8, 8), strict=True)}
    truth = np.array([base[v] for v in g])
    ya = (rng.random(2000) < truth).astype(float)
    frame = pd.DataFrame({"g": g, "s": ya + rng.normal(0, 0.6, 2000), "a": ya})
    frame.loc[60:, "a"] = np.nan
    kwargs = {"z": "g", "signals": "s", "kind": "categorical", "method": "lace"}
    for smooth in ("none", "fh"):
        many = sw.profile_models(frame, label=["a"], smooth=smooth, **kwargs)
        one = sw.profile(frame, label="a", smooth=smooth, **kwargs)
        np.testing.assert_allclose(many.profiles[0].estimate, one.estimate, rtol=0, atol=1e-12)
    smoothed = sw.profile_models(frame, label=["a"], smooth="fh", **kwargs).profiles[0]
    direct = sw.profile_models(frame, label=["a"], smooth="none", **kwargs).profiles[0]
    assert not np.allclose(smoothed.estimate, direct.estimate)


def test_cli_flags_come_from_the_declarations(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["profile", "--help"])
    text = re.sub(r"\s+", " ", capsys.readouterr().out)
    for name in CLI_OPTIONS:
        assert flag_of(name) in text, name
        spec = {f.name: f for f in fields(MethodOptions)}[name]
        assert spec.metadata["help"] in text, name
    assert "(default 0.3)" in text
    assert "--ridge X ridge penalty" in text


def test_cli_passes_only_the_options_given(tmp_path: object, capsys: object) -> None:
    rng = np.random.default_rng(3)
    g = rng.integers(0, 3, 400)
    y = (rng.random(400) < 0.4 + 0.2 * g).astype(float)
    frame = pd.DataFrame({"g": g, "s": y + rng.normal(0, 0.5, 400), "y": y})
    frame.loc[150:, "y"] = np.nan
    path = f"{tmp_path}/items.csv"
    frame.to_csv(path, index=False)
    out = f"{tmp_path}/out"
    argv = ["profile", path, "--z", "g", "--signals", "s", "--label", "y", "--kind", "ordinal"]
    assert main([*argv, "--method", "lace", "--ridge", "3", "--out", out]) == 0
    written = pd.read_csv(f"{out}/profile.csv")
    expected = sw.profile(
        frame, z="g", signals="s", label="y", kind="ordinal", method="lace", ridge=3.0
    )
    np.testing.assert_allclose(written["estimate"], expected.estimate, rtol=1e-6)
    default = sw.profile(frame, z="g", signals="s", label="y", kind="ordinal", method="lace")
    assert not np.allclose(expected.estimate, default.estimate)
