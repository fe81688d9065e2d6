"""profile_models: each model equals sw.profile on its own rows; long and wide layouts agree."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from models_sim import mask_rows, shared_difficulty_pool, to_long

import slicewise as sw
from slicewise.exceptions import FullyLabeledWarning

FIELDS = ("estimate", "se", "naive_estimate", "naive_se", "n_labeled_eff", "r2", "gain")


def _labeled_wide(seed: int, n_models: int = 3, n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    wide = shared_difficulty_pool(rng, m=1800, n_models=n_models)
    keep = rng.permutation(len(wide))[:n]
    return mask_rows(wide, [f"y{k}" for k in range(n_models)], keep)


def _same(a: sw.ProfileResult, b: sw.ProfileResult, *, exact: bool = True) -> None:
    for name in FIELDS:
        if exact:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        else:
            np.testing.assert_allclose(
                getattr(a, name), getattr(b, name), rtol=1e-10, atol=1e-13, err_msg=name
            )
    assert list(a.z) == list(b.z)


@pytest.mark.parametrize("kind", ["categorical", "continuous"])
def test_each_model_equals_profile_on_its_own_table_per_model_signals(kind: str) -> None:
    wide = _labeled_wide(1)
    z = "g" if kind == "categorical" else "diff"
    signals = {f"m{k}": [f"s{k}"] + ([] if kind == "continuous" else ["diff"]) for k in range(3)}
    res = sw.profile_models(
        wide,
        z=z,
        label={f"m{k}": f"y{k}" for k in range(3)},
        signals=signals,
        kind=kind,
        method="lace",
    )
    assert res.models == ("m0", "m1", "m2")
    for k in range(3):
        own = sw.profile(
            wide, z=z, signals=signals[f"m{k}"], label=f"y{k}", kind=kind, method="lace"
        )
        _same(res[f"m{k}"], own, exact=False)  # profile canonicalises the item order


def test_per_item_signals_shared_across_models() -> None:
    wide = _labeled_wide(2)
    res = sw.profile_models(
        wide,
        z="g",
        label=["y0", "y1", "y2"],
        signals=["diff", "s0"],
        kind="categorical",
        method="lace",
    )
    assert res.models == ("y0", "y1", "y2")
    for k in range(3):
        own = sw.profile(
            wide, z="g", signals=["diff", "s0"], label=f"y{k}", kind="categorical", method="lace"
        )
        _same(res[f"y{k}"], own)
    # one model's profile moves with its own labels only
    assert not np.allclose(res["y0"].estimate, res["y1"].estimate)


def test_long_and_wide_layouts_agree_with_and_without_id() -> None:
    wide = _labeled_wide(3)
    long = to_long(wide, 3)
    wide_res = sw.profile_models(
        wide,
        z="g",
        label={f"m{k}": f"y{k}" for k in range(3)},
        signals={f"m{k}": [f"s{k}", "diff"] for k in range(3)},
        kind="categorical",
        method="lace",
    )
    renamed = long.rename(columns={"judge": "s"})
    by_order = sw.profile_models(
        renamed,
        z="g",
        label="y",
        signals=["s", "diff"],
        model="model",
        kind="categorical",
        method="lace",
    )
    shuffled = renamed.sample(frac=1.0, random_state=7)
    by_id = sw.profile_models(
        shuffled,
        z="g",
        label="y",
        signals=["s", "diff"],
        model="model",
        id="id",
        kind="categorical",
        models=["m0", "m1", "m2"],
        method="lace",
    )
    for name in wide_res.models:
        _same(wide_res[name], by_order[name])
        _same(wide_res[name], by_id[name], exact=False)  # permuted rows: summation order differs


def test_long_models_on_different_item_subsets_share_the_union_grid() -> None:
    rng = np.random.default_rng(4)
    wide = _labeled_wide(4, n_models=2, n=900)
    long = to_long(wide, 2)
    drop = (long["model"] == "m1").to_numpy() & (rng.random(len(long)) < 0.3)
    sub = long.loc[~drop]
    grid = np.linspace(-1.5, 1.5, 7)
    res = sw.profile_models(
        sub,
        z="diff",
        label="y",
        signals=["judge"],
        model="model",
        id="id",
        grid=grid,
        bandwidth=0.4,
        method="lace",
    )
    for name in ("m0", "m1"):
        own = sw.profile(
            sub.loc[sub["model"] == name],
            z="diff",
            signals=["judge"],
            label="y",
            grid=grid,
            bandwidth=0.4,
            method="lace",
        )
        _same(res[name], own, exact=False)  # profile canonicalises the item order
    # the default grid and bandwidth come from the union of items (all of m0's rows here)
    default = sw.profile_models(
        sub, z="diff", label="y", signals=["judge"], model="model", id="id", method="lace"
    )
    m0 = sw.profile(
        sub.loc[sub["model"] == "m0"], z="diff", signals=["judge"], label="y", method="lace"
    )
    np.testing.assert_array_equal(default["m1"].z.astype(float), m0.z.astype(float))
    assert default["m1"].params["bandwidth"] == m0.params["bandwidth"]


def test_tidy_frame_ci_and_result_access() -> None:
    wide = _labeled_wide(5)
    res = sw.profile_models(
        wide,
        z="g",
        label=["y0", "y1", "y2"],
        signals=["diff"],
        kind="categorical",
        level=0.9,
        method="lace",
    )
    frame = res.to_frame()
    assert frame.shape[0] == 3 * 4
    leading = ["model", "z", "estimate", "se", "df", "lower", "upper", "naive_estimate"]
    assert [c for c in frame.columns if c in leading] == leading
    assert {"naive_se", "n_labeled_eff", "r2", "gain", "realized_gain"} <= set(frame.columns)
    np.testing.assert_allclose(frame["df"].to_numpy(), res.df.ravel())
    assert frame["model"].tolist() == ["y0"] * 4 + ["y1"] * 4 + ["y2"] * 4
    assert res.estimate.shape == res.se.shape == (3, 4)
    low, high = res.ci()
    np.testing.assert_allclose(frame["lower"].to_numpy(), low.ravel())
    assert np.all(high - low > 0)
    wider = res.ci(0.99)
    assert np.all(wider.high - wider.low > high - low)
    assert list(res) == ["y0", "y1", "y2"]
    assert len(res) == 3
    with pytest.raises(KeyError, match="No model 'nope'"):
        res["nope"]
    assert set(res.to_dict()) == {"y0", "y1", "y2"}


def test_plot_draws_one_series_per_model() -> None:
    pytest.importorskip("matplotlib")
    wide = _labeled_wide(6)
    for z, kind in (("g", "categorical"), ("diff", "continuous")):
        res = sw.profile_models(
            wide, z=z, label=["y0", "y1"], signals=["s0"], kind=kind, method="lace"
        )
        ax = res.plot()
        assert len(ax.get_legend().get_texts()) == 2


def test_warnings_name_the_model() -> None:
    wide = shared_difficulty_pool(np.random.default_rng(8), m=400, n_models=2)
    with pytest.warns(FullyLabeledWarning) as record:
        res = sw.profile_models(wide, z="g", label=["y0", "y1"], signals=["diff"], method="lace")
    messages = [str(w.message) for w in record]
    assert any(m.startswith("model 'y0':") for m in messages)
    assert any(m.startswith("model 'y1':") for m in messages)
    assert any("model 'y0'" in n for n in res["y0"].notes)


def test_rng_spawns_one_stream_per_model_and_is_reproducible() -> None:
    wide = _labeled_wide(9, n_models=2)
    kwargs = {"z": "g", "label": ["y0", "y1"], "signals": ["diff", "s0"], "kind": "categorical"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = sw.profile_models(wide, method="plugin_multi", rng=3, **kwargs)
        b = sw.profile_models(wide, method="plugin_multi", rng=3, **kwargs)
    np.testing.assert_array_equal(a.estimate, b.estimate)
