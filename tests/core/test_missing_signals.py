"""Missing signal values: imputed with the pool mean plus a missingness indicator (default), with a
note, and still unbiased; or rejected with missing='error' (issue 11, item 4)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main


def verdicts(m: int = 1500, n_missing: int = 63, seed: int = 7) -> pd.DataFrame:
    """A judge's pairwise verdicts (0, 0.5, 1) with ``n_missing`` unparseable ones (NaN)."""
    rng = np.random.default_rng(seed)
    app = rng.integers(0, 4, m)
    y = (rng.random(m) < np.array([0.35, 0.5, 0.6, 0.75])[app]).astype(float)
    agree = rng.random(m) < 0.8
    verdict = np.where(agree, y, 1.0 - y)
    verdict[rng.random(m) < 0.15] = 0.5
    verdict[rng.choice(m, n_missing, replace=False)] = np.nan
    label = y.copy()
    label[rng.permutation(m)[300:]] = np.nan
    return pd.DataFrame({"app": app, "verdict": verdict, "length": rng.normal(size=m), "y": label})


def test_default_imputes_and_the_notes_say_which_column_and_how_many() -> None:
    frame = verdicts()
    res = sw.profile(frame, z="app", signals=["verdict", "length"], label="y", kind="ordinal")
    note = next(n for n in res.notes if "missing values" in n)
    assert "Signal column 'verdict' has 63 missing values (of 1500 items)" in note
    assert "pool mean" in note
    assert "'verdict_missing'" in note
    assert not any("Signal column 'length'" in n for n in res.notes)
    assert np.all(np.isfinite(res.estimate))
    assert np.all(np.isfinite(res.se))


def test_table_holds_the_pool_mean_and_the_indicator() -> None:
    frame = verdicts()
    table = sw.make_table(frame, z="app", signals=["verdict", "length"], label="y")
    assert table.signal_names == ("verdict", "length", "verdict_missing")
    absent = frame["verdict"].isna().to_numpy()
    np.testing.assert_array_equal(table.signals[:, 2], absent.astype(float))
    mean = frame["verdict"].mean()
    np.testing.assert_allclose(table.signals[absent, 0], mean, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(table.signals[~absent, 0], frame["verdict"][~absent])
    np.testing.assert_array_equal(table.signals[:, 1], frame["length"])


def test_missing_error_names_the_column_and_the_count() -> None:
    frame = verdicts()
    with pytest.raises(
        ValueError, match=r"Signal column 'verdict' has 63 missing values \(of 1500"
    ):
        sw.profile(frame, z="app", signals=["verdict"], label="y", missing="error")
    with pytest.raises(ValueError, match=r"'missing' parameter of profile must be one of 'impute'"):
        sw.profile(frame, z="app", signals=["verdict"], label="y", missing="drop")  # type: ignore[arg-type]


def test_a_signal_never_observed_is_an_error() -> None:
    frame = verdicts()
    frame["verdict"] = np.nan
    with pytest.raises(ValueError, match=r"'verdict' has no observed value \(all 1500"):
        sw.profile(frame, z="app", signals=["verdict"], label="y")


def test_exact_unbiasedness_with_imputed_signal_by_enumeration() -> None:
    """Fixed coefficient on (signal, indicator): the mean over all C(8, 5) labeled sets is the
    pool mean of each group, to round-off, with the signal missing mostly where Y = 1."""
    group = np.array(["a"] * 4 + ["b"] * 4)
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    s = np.array([0.9, 0.1, np.nan, np.nan, 0.2, -0.1, np.nan, 0.3])
    truth = np.array([y[:4].mean(), y[4:].mean()])
    coef = np.array([[0.7, 0.5], [0.4, -0.3]])
    estimates = []
    for subset in itertools.combinations(range(8), 5):
        labels = np.full(8, np.nan)
        labels[list(subset)] = y[list(subset)]
        data = pd.DataFrame({"g": group, "s": s, "y": labels})
        res = sw.profile(
            data, z="g", signals="s", label="y", kind="categorical", method="lace_oracle", coef=coef
        )
        estimates.append(res.estimate)
    np.testing.assert_allclose(np.mean(estimates, axis=0), truth, atol=1e-12)
    assert np.all(np.std(estimates, axis=0) > 0.01)


def test_monte_carlo_unbiased_when_missingness_depends_on_the_label() -> None:
    """Fixed pool, 300 seeded SRS label draws; the judge fails to answer 25% of the items with
    Y = 1 and 3% of the others. LACE on the imputed signal plus indicator has mean error zero at
    every level (z-test), and the indicator helps: its RMSE is below the gold-only mean's."""
    rng = np.random.default_rng(2025)
    m, n, draws = 1500, 200, 300
    level = rng.integers(0, 3, m)
    y = (rng.random(m) < np.array([0.3, 0.5, 0.7])[level]).astype(float)
    judge = y + rng.normal(0, 0.6, m)
    absent = rng.random(m) < np.where(y == 1, 0.25, 0.03)
    judge[absent] = np.nan
    truth = np.array([y[level == g].mean() for g in range(3)])
    errors, naive_errors = [], []
    for _ in range(draws):
        labels = np.full(m, np.nan)
        index = rng.choice(m, n, replace=False)
        labels[index] = y[index]
        frame = pd.DataFrame({"level": level, "judge": judge, "y": labels})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sw.LabelSelectionWarning)  # about 1 in 100 draws
            res = sw.profile(
                frame, z="level", signals="judge", label="y", kind="categorical", method="lace"
            )
        errors.append(res.estimate - truth)
        naive_errors.append(res.naive_estimate - truth)
    err, naive = np.array(errors), np.array(naive_errors)
    z_bias = err.mean(axis=0) / (err.std(axis=0, ddof=1) / np.sqrt(draws))
    assert np.all(np.abs(z_bias) < 3.0), z_bias
    rmse, naive_rmse = np.sqrt((err**2).mean(axis=0)), np.sqrt((naive**2).mean(axis=0))
    assert np.all(rmse < 0.9 * naive_rmse), (rmse, naive_rmse)


def test_multi_model_and_select_impute_with_a_note() -> None:
    frame = verdicts()
    wide = pd.DataFrame(
        {
            "app": frame["app"],
            "a": frame["y"],
            "b": frame["y"],
            "sa": frame["verdict"],
            "sb": frame["length"],
        }
    )
    res = sw.profile_models(
        wide,
        z="app",
        label=["a", "b"],
        signals={"a": ["sa"], "b": ["sb"]},
        kind="ordinal",
        method="lace",
    )
    assert any("model 'a': Signal column 'sa' has 63 missing values" in n for n in res["a"].notes)
    assert not any("missing values" in n for n in res["b"].notes)
    with pytest.raises(ValueError, match=r"Model 'a': Signal column 'sa' has 63 missing values"):
        sw.profile_models(
            wide, z="app", label=["a", "b"], signals={"a": ["sa"], "b": ["sb"]}, missing="error"
        )
    chosen = sw.select(
        frame, z="app", signals=["verdict"], label="y", method="lace", kind="ordinal", rng=0
    )
    assert any("'verdict' has 63 missing values" in n for n in chosen.result.notes)
    with pytest.raises(ValueError, match=r"'verdict' has 63 missing values"):
        sw.select(frame, z="app", signals=["verdict"], label="y", method="lace", missing="error")


def test_gap_reports_the_imputation_of_each_model() -> None:
    frame = verdicts()
    wide = pd.DataFrame(
        {
            "app": frame["app"],
            "a": frame["y"],
            "b": 1.0 - frame["y"],
            "sa": frame["verdict"],
            "sb": frame["length"],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sw.gap(
            wide,
            z="app",
            label=["a", "b"],
            signals={"a": ["sa"], "b": ["sb"]},
            model_a="a",
            model_b="b",
            kind="ordinal",
            method="lace",
        )
    assert any("model 'a': Signal column 'sa' has 63 missing values" in n for n in res.notes)


def test_cli_missing_flag(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "items.csv"
    verdicts().to_csv(path, index=False)
    args = [
        "profile",
        str(path),
        "--z",
        "app",
        "--signals",
        "verdict",
        "--label",
        "y",
        "--kind",
        "ordinal",
        "--method",
        "lace",
    ]
    assert main(args) == 0
    assert "note: Signal column 'verdict' has 63 missing values" in capsys.readouterr().out
    assert main([*args, "--missing", "error"]) == 2
    err = capsys.readouterr().err
    assert "Signal column 'verdict' has 63 missing values (of 1500 items)" in err
