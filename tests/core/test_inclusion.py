"""Known inclusion probabilities (issue 11 item 5, issue 12 item 1): design weights in the moments.

Labels drawn by Poisson sampling with probabilities that depend on the judge (hence on the label):
the design-weighted naive and LACE estimates are unbiased and their intervals cover, the
unweighted ones are biased; equal probabilities give back the unweighted answer exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet
from slicewise.methods.options import MethodOptions
from slicewise.methods.registry import METHODS
from slicewise.methods.run import build_context

SIGNALS = ["judge", "other"]


def _frame(seed: int = 0, m: int = 3000, n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.9 - 0.12 * level).astype(float)
    labeled = np.zeros(m, dtype=bool)
    labeled[rng.choice(m, n, replace=False)] = True
    return pd.DataFrame(
        {
            "level": level,
            "x": rng.random(m),
            "domain": np.array(["a", "b", "c"])[level % 3],
            "judge": y + rng.normal(0, 0.7, m),
            "other": rng.normal(size=m),
            "y": np.where(labeled, y, np.nan),
            "pi": n / m,
        }
    )


@pytest.mark.parametrize("method", ["naive", "lace", "global_cv", "per_signal_cv"])
@pytest.mark.parametrize(
    ("z", "kind"), [("level", "ordinal"), ("x", "continuous"), ("domain", "categorical")]
)
@pytest.mark.parametrize("target", ["pool", "population"])
def test_equal_probabilities_reproduce_the_unweighted_profile(
    method: str, z: str, kind: str, target: str
) -> None:
    frame = _frame()
    frame["pi"] = 0.37  # any constant: the design is self-weighting
    common = dict(
        z=z, signals=SIGNALS, label="y", kind=kind, method=method, primary="judge", target=target
    )
    plain = sw.profile(frame, **common)  # type: ignore[arg-type]
    weighted = sw.profile(frame, inclusion="pi", **common)  # type: ignore[arg-type]
    np.testing.assert_allclose(weighted.estimate, plain.estimate, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weighted.se, plain.se, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weighted.df, plain.df, rtol=0, atol=1e-9)
    assert weighted.params["balance"] == {"skipped": "inclusion probabilities given"}
    assert weighted.notes[-1].startswith("Balance check skipped")


def test_poisson_sampling_by_the_judge_weighted_unbiased_and_covers() -> None:
    rng = np.random.default_rng(2024)
    m = 3000
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.9 - 0.12 * level).astype(float)
    judge = y + rng.normal(0, 0.8, m)
    pi = np.where(judge > 0.5, 0.2, 0.06)  # labels the judge liked three times as often
    frame = pd.DataFrame({"level": level, "judge": judge, "y": y})
    ctx = build_context(make_table(frame, z="level", signals=["judge"], label="y", kind="ordinal"))
    options = MethodOptions()
    truth = np.array([y[level == g].mean() for g in range(1, 6)])
    draws = 300
    errors: dict[tuple[str, bool], list[np.ndarray]] = {}
    covered: dict[tuple[str, bool], list[np.ndarray]] = {}
    for _ in range(draws):
        index = np.flatnonzero(rng.random(m) < pi)
        for weighted in (True, False):
            labeled = LabeledSet(index=index, y=y[index], pi=pi[index] if weighted else None)
            for method in ("naive", "lace"):
                fit = METHODS[method].fit(ctx, labeled, options)
                half = stats.t.ppf(0.975, fit.df) * np.sqrt(fit.var_pool)
                errors.setdefault((method, weighted), []).append(fit.estimate - truth)
                covered.setdefault((method, weighted), []).append(
                    np.abs(fit.estimate - truth) <= half
                )
    for method in ("naive", "lace"):
        err = np.array(errors[(method, True)])
        z_bias = err.mean(axis=0) / (err.std(axis=0) / np.sqrt(draws))
        assert np.all(np.abs(z_bias) < 3.5), (method, z_bias)
        hits = int(np.sum(covered[(method, True)]))
        total = draws * truth.size
        # mean coverage of the 95% intervals over the grid: not below 0.93
        assert hits / total >= 0.93, (method, hits / total)
        assert stats.binomtest(hits, total, 0.95).pvalue > 0.001
        biased = np.array(errors[(method, False)])
        assert np.all(biased.mean(axis=0) / (biased.std(axis=0) / np.sqrt(draws)) > 10)
        # ignoring the design misses: lace's variance given the labeled set sees the labels'
        # imbalance in the judge and widens, but not enough to cover a bias of over 10 se
        assert np.mean(covered[(method, False)]) < 0.85


def test_profile_with_inclusion_matches_the_low_level_fit() -> None:
    rng = np.random.default_rng(5)
    frame = _frame(seed=5)
    pi = np.where(frame["judge"] > 0.5, 0.25, 0.05)
    labeled = rng.random(len(frame)) < pi
    y = (frame["judge"] + rng.normal(0, 0.5, len(frame)) > 0.5).astype(float)
    frame["y"] = np.where(labeled, y, np.nan)
    frame["pi"] = np.where(labeled, pi, np.nan)  # unlabeled rows need no probability
    res = sw.profile(
        frame, z="level", signals=SIGNALS, label="y", kind="ordinal", method="lace",
        inclusion="pi", target="population",
    )  # fmt: skip
    ctx = build_context(make_table(frame, z="level", signals=SIGNALS, label="y", kind="ordinal"))
    index = np.flatnonzero(labeled)
    fit = METHODS["lace"].fit(
        ctx, LabeledSet(index, y[index].to_numpy(), pi[index]), MethodOptions()
    )
    np.testing.assert_allclose(res.estimate, fit.estimate, atol=1e-14)
    np.testing.assert_allclose(res.se, np.sqrt(fit.var_population), atol=1e-14)
    plain = sw.profile(frame, z="level", signals=SIGNALS, label="y", kind="ordinal", method="lace")
    assert np.max(np.abs(plain.estimate - res.estimate)) > 0.01


def test_inclusion_from_a_file(tmp_path: pd.DataFrame) -> None:
    frame = _frame()
    path = tmp_path / "items.csv"  # type: ignore[operator]
    frame.to_csv(path, index=False)
    res = sw.profile(path, z="level", signals=SIGNALS, label="y", method="naive", inclusion="pi")
    plain = sw.profile(frame, z="level", signals=SIGNALS, label="y", method="naive")
    np.testing.assert_allclose(res.estimate, plain.estimate, atol=1e-12)


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ("missing", r"Inclusion-probability column 'pi' has 3 missing or non-finite values"),
        ("zero", r"Inclusion-probability column 'pi' has 2 values outside \(0, 1\].*0, 1.5"),
        ("text", r"Inclusion-probability column 'pi' has 1 non-numeric values"),
    ],
)
def test_bad_inclusion_probabilities_are_named(values: str, match: str) -> None:
    frame = _frame()
    labeled = np.flatnonzero(frame["y"].notna().to_numpy())
    column = frame["pi"].astype(object)
    if values == "missing":
        column.iloc[labeled[:3]] = np.nan
    elif values == "zero":
        column.iloc[labeled[0]] = 0.0
        column.iloc[labeled[1]] = 1.5
    else:
        column.iloc[labeled[0]] = "high"
    frame["pi"] = column
    with pytest.raises(ValueError, match=match):
        sw.profile(frame, z="level", signals=SIGNALS, label="y", method="naive", inclusion="pi")


def test_missing_inclusion_column_is_named() -> None:
    with pytest.raises(ValueError, match=r"'inclusion' parameter of profile names column\(s\)"):
        sw.profile(_frame(), z="level", signals=SIGNALS, label="y", method="naive", inclusion="p")


@pytest.mark.parametrize("method", ["aug_plugin", "scalar_pred_cv", "local_ppi", "lace_learned"])
def test_methods_without_design_weights_refuse_inclusion(method: str) -> None:
    with pytest.raises(ValueError, match=f"Method '{method}' of profile does not support known"):
        sw.profile(_frame(), z="level", signals=SIGNALS, label="y", method=method, inclusion="pi")


@pytest.mark.parametrize(("method", "model"), [("naive", "pp-s"), ("lace", "pp-s"), ("lace", "fh")])
def test_fay_herriot_smoothing_takes_equal_probabilities_as_unweighted(
    method: str, model: str
) -> None:
    # smooth='pp-s' or 'fh' gets the design-based direct variances and the design floor; with equal
    # probabilities the smoothed profile is the unweighted one
    frame = _frame(n=40)  # about 8 labels per level: every slice is smoothed
    frame["pi"] = 0.04
    common = dict(
        z="level", signals=SIGNALS, label="y", kind="ordinal", method=method, smooth=model
    )
    plain = sw.profile(frame, **common)  # type: ignore[arg-type]
    weighted = sw.profile(frame, inclusion="pi", **common)  # type: ignore[arg-type]
    # the posterior is a numerical integral over sigma_v: rounding-level differences in the
    # direct variances move it by about 1e-10
    np.testing.assert_allclose(weighted.estimate, plain.estimate, rtol=0, atol=1e-8)
    np.testing.assert_allclose(weighted.se, plain.se, rtol=0, atol=1e-8)
    assert any(weighted.params["smoothed"])


def test_methods_table_lists_design_weight_support() -> None:
    table = sw.methods().set_index("method")
    for method in ("lace", "auto", "lace_shrunk"):
        assert table.loc[method, "inclusion"], method
    assert not table.loc["aug_plugin", "inclusion"]
    assert not table.loc["lace_learned", "inclusion"]
