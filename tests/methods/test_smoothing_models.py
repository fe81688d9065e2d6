"""One smoothing step for profiles and domains: the same model under the same name, one
``borrowed`` rule, one interval rule (:mod:`slicewise.smoothing`)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.domains.fit import SMOOTHED, SMOOTHING_MODEL
from slicewise.methods.smoothed import SMOOTH_CHOICES
from slicewise.smoothing.area import MODELS, fit_area_model
from slicewise.smoothing.bayes import bayes_fit
from slicewise.smoothing.fay_herriot import eblup
from slicewise.smoothing.linear_mixed import AreaModel
from slicewise.smoothing.objective import BORROWED_WEIGHT, PRECISE_LABELS, TRANSLATION
from slicewise.smoothing.step import smooth


def _sparse_profile(seed: int) -> pd.DataFrame:
    """12 categories of very different sizes, 150 labels: the small ones get 1-5 labels."""
    rng = np.random.default_rng(seed)
    sizes = np.array([40, 60, 80, 100, 150, 200, 300, 400, 600, 800, 1000, 1270])
    g = np.repeat(np.arange(sizes.size), sizes)
    p = 1 / (1 + np.exp(-rng.normal(0, 0.8, sizes.size)))[g]
    y = (rng.random(g.size) < p).astype(float)
    s = p + 0.4 * (y - p) + rng.normal(0, 0.2, g.size)
    frame = pd.DataFrame({"d": g, "s": s, "y": y})
    frame.loc[rng.permutation(g.size)[150:], "y"] = np.nan
    return frame


def test_the_names_are_the_models_of_both_entry_points() -> None:
    assert MODELS == ("fh", "pp-s")
    assert SMOOTH_CHOICES == ("auto", "fh", "pp-s", "none")
    assert {SMOOTHING_MODEL[m] for m in SMOOTHED} == set(MODELS)
    assert SMOOTHING_MODEL["fh"] == "fh"
    assert SMOOTHING_MODEL["pp-s"] == "pp-s"
    assert "'auto', 'fh', 'pp-s', 'none'" in inspect.getdoc(sw.profile)  # type: ignore[operator]
    with pytest.raises(ValueError, match=r"'smooth' parameter .*'pp-s'.*Got 'bayes'"):
        sw.profile(_sparse_profile(0), z="d", signals=["s"], label="y", smooth="bayes")


def test_each_name_fits_its_model() -> None:
    rng = np.random.default_rng(3)
    d = 15
    x = np.column_stack([np.ones(d), rng.normal(size=d)])
    psi = rng.uniform(0.002, 0.02, d)
    y = x @ np.array([0.5, 0.05]) + rng.normal(0, 0.07, d) + rng.normal(0, np.sqrt(psi))
    model = AreaModel(
        y=y,
        psi=psi,
        x=x,
        z=np.zeros((d, 0)),
        column_level=np.zeros(0, dtype=np.intp),
        level_names=(),
    )
    fh, ref = fit_area_model(model, "fh"), eblup(model)
    np.testing.assert_array_equal(fh.estimate, ref.estimate)
    np.testing.assert_array_equal(fh.se, np.sqrt(ref.mse))
    ps, post = fit_area_model(model, "pp-s"), bayes_fit(model)
    np.testing.assert_array_equal(ps.estimate, post.estimate)
    np.testing.assert_array_equal(ps.se, post.sd)
    # the one smoothing step of profiles and domains fits the same two models
    for name, want in (("fh", fh), ("pp-s", ps)):
        for objective in ("slice", "ensemble"):
            got = smooth(
                y,
                np.sqrt(psi),
                psi,
                x,
                np.full(d, 50.0),
                model=name,  # type: ignore[arg-type]
                objective=objective,
                critical=1.96,  # type: ignore[arg-type]
            )
            assert got is not None
            np.testing.assert_allclose(got.smoothed, want.estimate, rtol=0, atol=1e-12)
            np.testing.assert_allclose(got.weight, want.weight, rtol=0, atol=1e-12)
    assert np.max(np.abs(fh.estimate - ps.estimate)) > 1e-4  # two different models


@pytest.mark.parametrize("model", ["fh", "pp-s"])
def test_profile_smoothing_by_name_limits_the_translation_and_keeps_the_borrowed_rule(
    model: str,
) -> None:
    frame = _sparse_profile(1)
    kw = {"z": "d", "signals": ["s"], "label": "y", "kind": "categorical", "method": "global_cv"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = sw.profile(frame, smooth="none", **kw)  # type: ignore[arg-type]
        res = sw.profile(frame, smooth=model, **kw)  # type: ignore[arg-type]
        ens = sw.profile(frame, smooth=model, objective="ensemble", **kw)  # type: ignore[arg-type]
    assert res.params["smoothing_model"] == model
    moved = np.asarray(res.params["smoothed"], dtype=bool)
    assert moved.any()
    precise = direct.n_labeled_eff >= PRECISE_LABELS
    assert precise.any()
    assert (~precise).any()
    # the slice objective: a precise slice moves by at most c of its standard errors, toward
    # the model's estimate (the ensemble objective's)
    shift = res.estimate - direct.estimate
    assert np.all(np.abs(shift[precise]) <= TRANSLATION * direct.se[precise] * (1 + 1e-9))
    toward = ens.estimate - direct.estimate
    assert np.all(shift * toward >= 0)
    assert np.all(np.abs(shift) <= np.abs(toward) + 1e-12)
    # a few-label slice takes the model's estimate
    sparse = ~precise & np.isfinite(direct.se)
    np.testing.assert_allclose(res.estimate[sparse], ens.estimate[sparse], rtol=0, atol=1e-12)
    # every moved slice's interval contains its direct interval
    low, high = res.ci()
    d_low, d_high = direct.ci()
    ok = np.isfinite(d_low)
    assert np.all(low[ok] <= d_low[ok] + 1e-12)
    assert np.all(high[ok] >= d_high[ok] - 1e-12)
    # borrowed: the slice's own estimate carries less than half of the reported one
    own = np.asarray(res.params["own_weight"], dtype=float)
    weight = np.asarray(res.params["shrinkage_weight"], dtype=float)
    np.testing.assert_allclose(own[sparse], weight[sparse], rtol=0, atol=1e-12)
    assert np.all(own[precise] >= weight[precise] - 1e-12)  # held back: more of its own
    no_se = moved & ~np.isfinite(direct.se)
    want = (np.isfinite(own) & (own < BORROWED_WEIGHT)) | no_se
    np.testing.assert_array_equal(res.borrowed, want | direct.borrowed)


def test_domains_use_the_same_borrowed_rule() -> None:
    rng = np.random.default_rng(2)
    n_dom = 30
    dom = np.repeat(np.arange(n_dom), 100)
    p = 1 / (1 + np.exp(-rng.normal(0, 1.0, n_dom)))[dom]
    y = (rng.random(dom.size) < p).astype(float)
    frame = pd.DataFrame({"dom": dom, "s": p + rng.normal(0, 0.5, dom.size), "y": y})
    labeled = sw.sample(frame, strata="dom", fraction=0.09, rng=1).apply(frame, label="y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sw.domains(
            labeled, domain="dom", label="y", signals=["s"], strata="stratum", method="pp-s"
        )
    moved = np.asarray(res.params["moved"], dtype=bool)
    assert moved.all()  # 9 labels per domain: every domain takes the model's estimate
    np.testing.assert_allclose(
        res.shrinkage, np.asarray(res.params["shrinkage_weight"]), rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(res.borrowed, res.shrinkage < BORROWED_WEIGHT)
    assert 0 < res.borrowed.sum() < n_dom  # the rule separates the domains here
    assert res.to_frame()["df"].eq(np.inf).all()  # one interval rule: no posterior quantiles
