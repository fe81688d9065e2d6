"""Every documented bad input of the multi-model functions raises a ValueError that names it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from models_sim import mask_rows, shared_difficulty_pool, to_long

import slicewise as sw


@pytest.fixture(scope="module")
def wide() -> pd.DataFrame:
    rng = np.random.default_rng(41)
    return mask_rows(shared_difficulty_pool(rng, m=600, n_models=2), ["y0", "y1"], np.arange(200))


@pytest.fixture(scope="module")
def long(wide: pd.DataFrame) -> pd.DataFrame:
    return to_long(wide, 2)


LABELS = {"a": "y0", "b": "y1"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"label": LABELS, "models": ["a", "zz"]}, "names model\\(s\\) 'zz' that are not in"),
        ({"label": LABELS, "models": ["a", "a"]}, "lists model\\(s\\) 'a' more than once"),
        ({"label": "y0"}, "no 'model' column was given"),
        ({"label": ["y0", "y0"]}, "lists column\\(s\\) 'y0' more than once"),
        ({"label": LABELS, "signals": {"a": ["s0"]}}, "one entry per model. Missing: 'b'"),
        ({"label": LABELS, "signals": {"a": ["s0"], "b": ["s1"], "c": []}}, "not a model: 'c'"),
        ({"label": {"a": "y0", "b": "nope"}}, "Model 'b': The 'label' parameter"),
        ({"label": LABELS, "primary": {"zz": "s0"}}, "names model\\(s\\) \\['zz'\\]"),
        ({"label": LABELS, "signals": ["s0"], "primary": "s1"}, "must name one of model 'a'"),
        ({"label": LABELS, "z": "missing_col"}, "names column\\(s\\) 'missing_col'"),
    ],
)
def test_profile_models_wide_errors(wide: pd.DataFrame, kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"z": "g", "kind": "categorical", **kwargs}
    with pytest.raises(ValueError, match=match):
        sw.profile_models(wide, **args, method="lace")


def test_profile_models_long_errors(long: pd.DataFrame) -> None:
    base = {"z": "g", "label": "y", "model": "model", "kind": "categorical"}
    with pytest.raises(ValueError, match="must be one column name for a long table"):
        sw.profile_models(long, **{**base, "label": ["y"]}, method="lace")
    dup = pd.concat([long, long.iloc[:3]], ignore_index=True)
    with pytest.raises(
        ValueError, match="3 \\(model, id\\) pairs appear on more than one row \\(6 rows"
    ):
        sw.profile_models(dup, id="id", **base, method="lace")
    moved = long.copy()
    moved.loc[0, "g"] = "logic" if moved.loc[0, "g"] != "logic" else "physics"
    with pytest.raises(ValueError, match="differs between models' rows of the same item for 1"):
        sw.profile_models(moved, id="id", **base, method="lace")
    with pytest.raises(ValueError, match="rows are matched across models by their order"):
        sw.profile_models(long.iloc[:-1], **base, method="lace")
    with pytest.raises(ValueError, match="has different `z` values than 'm0' row by row"):
        sw.profile_models(moved, **base, method="lace")
    missing_model = long.copy()
    missing_model.loc[5, "model"] = None
    with pytest.raises(ValueError, match="Model column 'model' has 1 missing values"):
        sw.profile_models(missing_model, **base, method="lace")
    bad_label = long.copy()
    bad_label.loc[long.index[long["model"] == "m1"][0], "y"] = 2.0
    with pytest.raises(ValueError, match="Model 'm1': Label column 'y' has 1 values outside"):
        sw.profile_models(bad_label, **base, method="lace")
    no_id = long.copy()
    no_id.loc[3, "id"] = None
    with pytest.raises(ValueError, match="Id column 'id' has 1 missing values"):
        sw.profile_models(no_id, id="id", **base, method="lace")
    with pytest.raises(ValueError, match="The 'method' parameter of profile_models must be one of"):
        sw.profile_models(long, method="magic", **base)


def test_gap_errors(wide: pd.DataFrame, long: pd.DataFrame) -> None:
    base = {"z": "g", "label": LABELS, "kind": "categorical"}
    with pytest.raises(ValueError, match="name the same model \\('a'\\)"):
        sw.gap(wide, model_a="a", model_b="a", **base, method="lace")
    with pytest.raises(
        ValueError, match="'model_a/model_b' parameter of gap names model\\(s\\) 'c'"
    ):
        sw.gap(wide, model_a="a", model_b="c", **base, method="lace")
    disjoint = wide.copy()
    disjoint.loc[:99, "y1"] = np.nan
    disjoint.loc[100:, "y0"] = np.nan
    with pytest.raises(ValueError, match="have no item labeled for both"):
        sw.gap(disjoint, model_a="a", model_b="b", **base, method="lace")
    with pytest.raises(ValueError, match="pairs the model-specific signal columns"):
        sw.gap(
            wide,
            model_a="a",
            model_b="b",
            signals={"a": ["s0", "s1"], "b": ["diff"]},
            paired_signals="difference",
            **base,
            method="lace",
        )
    with pytest.raises(ValueError, match="'paired_signals' parameter of gap must be one of"):
        sw.gap(wide, model_a="a", model_b="b", paired_signals="sum", **base, method="lace")  # type: ignore
    with pytest.raises(TypeError, match="'model_b' parameter of gap must be a model name"):
        sw.gap(wide, model_a="a", model_b=3, **base, method="lace")  # type: ignore[arg-type]
    # mismatched ids: the two models share no item
    shifted = long.copy()
    shifted.loc[shifted["model"] == "m1", "id"] = "other" + shifted["id"]
    with pytest.raises(ValueError, match="have no item labeled for both among the 0 items"):
        sw.gap(
            shifted,
            z="g",
            label="y",
            model="model",
            id="id",
            model_a="m0",
            model_b="m1",
            method="lace",
        )


def test_rank_models_errors(wide: pd.DataFrame) -> None:
    base = {"z": "g", "label": LABELS, "kind": "categorical"}
    with pytest.raises(ValueError, match=r"must name at least two models to rank\. Got \['a'\]"):
        sw.rank_models(wide, models=["a"], **base)
    with pytest.raises(ValueError, match="'method' parameter of rank_models must be one of"):
        sw.rank_models(wide, method="plugin_multi", **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'correction' parameter of rank_models must be one of"):
        sw.rank_models(wide, correction="holm", **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'n_draws' parameter of rank_models must be an integer"):
        sw.rank_models(wide, n_draws=10, **base)


@pytest.fixture(scope="module")
def groups() -> pd.DataFrame:
    rng = np.random.default_rng(42)
    g = rng.choice(["a", "b", "c"], 500)
    y = np.where(rng.random(500) < 0.3, rng.integers(0, 2, 500), np.nan)
    return pd.DataFrame({"g": g, "s": rng.normal(size=500), "y": y})


@pytest.mark.parametrize(
    ("deploy", "match"),
    [
        ({"a": 1.0, "b": -0.5}, "must be >= 0; 1 are negative \\(e.g. \\[\\('b', -0.5\\)\\]"),
        ({"a": 0.0, "b": 0.0}, "must sum to a positive number. Got a sum of 0.0"),
        ({"a": 1.0, "zz": 1.0}, "names level\\(s\\) \\['zz'\\] that do not occur"),
        ({"a": np.nan}, "must be finite numbers; 1 are not"),
        (lambda z: z, "is a function, which applies to continuous Z only"),
        ([], "must be a non-empty list of levels"),
    ],
)
def test_deploy_weight_errors(groups: pd.DataFrame, deploy: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sw.deployment_score(groups, z="g", signals="s", label="y", deploy=deploy)


def test_deploy_other_errors(groups: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="level\\(s\\) \\['c'\\] that are not on the grid"):
        sw.deployment_score(
            groups, z="g", signals="s", label="y", deploy={"a": 1, "c": 1}, grid=["a", "b"]
        )
    with pytest.raises(ValueError, match="'method' parameter of deployment_score must be one of"):
        sw.deployment_score(
            groups,
            z="g",
            signals="s",
            label="y",
            deploy={"a": 1},
            method="ppci",  # type: ignore[arg-type]
        )
    rng = np.random.default_rng(43)
    cont = pd.DataFrame({"z": rng.uniform(0, 1, 400), "s": rng.normal(size=400)})
    cont["y"] = np.where(np.arange(400) < 100, (rng.random(400) < 0.5).astype(float), np.nan)
    base = {"z": "z", "signals": "s", "label": "y"}
    with pytest.raises(ValueError, match="is a mapping of level weights, which applies to"):
        sw.deployment_score(cont, deploy={"a": 1.0}, **base)
    with pytest.raises(ValueError, match="must be finite and >= 0 on every pool item; 400 values"):
        sw.deployment_score(cont, deploy=lambda z: -z - 1, **base)
    with pytest.raises(ValueError, match="must return one value per pool item \\(400\\)"):
        sw.deployment_score(cont, deploy=lambda z: z[:10], **base)
    with pytest.raises(ValueError, match="must have shape \\(N,\\) or \\(N, 1\\)"):
        sw.deployment_score(cont, deploy=np.ones((5, 2)), **base)
    with pytest.raises(ValueError, match="zero on every pool item"):
        sw.deployment_score(cont, deploy=lambda z: 0 * z, **base)
    unlabeled = (np.arange(400) >= 100).astype(float)  # the labels sit on the first 100 rows
    with pytest.raises(ValueError, match="zero on every labeled item"):
        sw.deployment_score(cont, deploy=lambda z: unlabeled, **base)
    with pytest.raises(ValueError, match="'ratio_bandwidth' parameter of deployment_score"):
        sw.deployment_score(cont, deploy=np.array([0.5, 0.6]), ratio_bandwidth=-1.0, **base)
    with pytest.raises(ValueError, match="sample of deployment_score has 1 missing"):
        sw.deployment_score(cont, deploy=np.array([0.5, np.nan]), **base)


@pytest.fixture(scope="module")
def cascaded() -> pd.DataFrame:
    rng = np.random.default_rng(44)
    y = (rng.random(600) < 0.5).astype(float)
    frame = pd.DataFrame(
        {
            "g": rng.choice(["a", "b"], 600),
            "cheap": y + rng.normal(size=600),
            "judge": np.where(np.arange(600) < 300, y + rng.normal(0, 0.3, 600), np.nan),
            "judge2": np.where(np.arange(600) < 300, rng.normal(size=600), np.nan),
            "y": np.where(np.arange(600) < 100, y, np.nan),
        }
    )
    return frame


def test_cascade_errors(cascaded: pd.DataFrame) -> None:
    base = {"z": "g", "signals": "cheap", "label": "y"}
    not_nested = cascaded.copy()
    not_nested.loc[[5, 7], "judge"] = np.nan
    with pytest.raises(
        ValueError, match=r"missing on 2 gold-labeled rows \(e\.g\. rows \[5, 7\]\)"
    ):
        sw.cascade(not_nested, rater="judge", **base)
    with pytest.raises(ValueError, match="names column\\(s\\) \\['gpt'\\] that are not in"):
        sw.cascade(cascaded, rater="gpt", **base)
    partial = cascaded.copy()
    partial.loc[200, "judge2"] = np.nan
    with pytest.raises(ValueError, match="1 rows have some but not all of the rater columns"):
        sw.cascade(partial, rater=["judge", "judge2"], **base)
    text = cascaded.astype({"judge": object})
    text.loc[3, "judge"] = "good"
    with pytest.raises(ValueError, match="Rater column 'judge' has 1 non-numeric values"):
        sw.cascade(text, rater="judge", **base)
    with pytest.raises(ValueError, match="Rater column\\(s\\) \\['cheap'\\] are also used"):
        sw.cascade(cascaded, rater="cheap", **base)
    with pytest.raises(ValueError, match="must give b as 2 finite numbers per grid point"):
        sw.cascade(cascaded, rater="judge", coef=(np.ones(3), np.ones(1)), **base)
    with pytest.raises(ValueError, match="must be a pair \\(b, c\\)"):
        sw.cascade(cascaded, rater="judge", coef=np.ones(2), **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'cost_label' parameter of cascade_break_even"):
        sw.cascade_break_even(r2_y_xs=0.5, r2_y_s=0.2, cost_rater=1.0, cost_label=-2.0)
    with pytest.raises(ValueError, match="must be finite"):
        sw.cascade_break_even(r2_y_xs=np.nan, r2_y_s=0.2, cost_rater=1.0, cost_label=2.0)
