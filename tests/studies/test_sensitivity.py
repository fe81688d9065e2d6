"""Sensitivity studies (research/sensitivity.py): stress grid identities, within-L CV against
sw.select, sparse region; the CLI keeps only the sparse region."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from research.sensitivity import (
    chosen_parameters,
    cv_fit,
    cv_study,
    sparse_region,
    sparse_summary,
    stress_grid,
)
from slicewise.cli import main
from slicewise.data.table import make_table
from slicewise.methods.base import LabeledSet
from slicewise.methods.options import MethodOptions
from slicewise.methods.run import build_context
from slicewise.studies.engine import CellSpec, study_cells

SIGNALS = ("s1", "s2", "s3")


def synthetic(seed: int, m: int = 400) -> pd.DataFrame:
    """Y ~ Bernoulli(0.2 + 0.6 z); s1 strongly and s2 weakly informative, s3 noise; z skewed."""
    rng = np.random.default_rng(seed)
    z = rng.beta(2.0, 5.0, m)
    y = (rng.random(m) < 0.2 + 0.6 * z).astype(float)
    s = y[:, None] * np.array([1.5, 0.5, 0.0]) * (1 + z[:, None]) + rng.normal(size=(m, 3))
    frame = pd.DataFrame(s, columns=list(SIGNALS))
    frame["z"] = z
    frame["y"] = y
    return frame


def cells(count: int = 2, **kwargs: object) -> list[CellSpec]:
    return [
        CellSpec(
            name=f"c{k}",
            table=synthetic(k),
            z="z",
            label="y",
            signals=SIGNALS,
            kind="continuous",
            primary="s1",
            **kwargs,  # type: ignore[arg-type]
        )
        for k in range(count)
    ]


# ---------------------------------------------------------------- stress grid


def test_stress_grid_default_equals_plain_study_on_the_same_splits() -> None:
    specs = cells()
    grid = stress_grid(
        specs, budgets=(40, 80), reps=12, rng=3, ridges=(0.03, 0.3), scales=(0.5, 1.0)
    )
    plain = study_cells(specs, methods=("naive", "lace"), budgets=(40, 80), reps=12, rng=3)
    default = grid.studies[(0.3, 1.0)]
    for a, b in zip(default.cells, plain.cells, strict=True):
        np.testing.assert_array_equal(a.estimates, b.estimates)
        np.testing.assert_array_equal(a.truth, b.truth)
    pd.testing.assert_frame_equal(default.summary(), plain.summary())
    lace = grid.frame().query("ridge == 0.3 and scale == 1.0")
    expected = plain.summary().query("method == 'lace'")
    np.testing.assert_allclose(lace["re"].to_numpy(), expected["re"].to_numpy(), rtol=0, atol=0)


def test_stress_grid_configuration_equals_a_study_at_that_bandwidth() -> None:
    """(lambda = 3, h = 0.5 h0): naive and target at the narrower h, the same splits."""
    specs = cells(1)
    items = make_table(specs[0].table, z="z", signals=list(SIGNALS), label="y")
    h0 = float(build_context(items).locality.bandwidth[0])
    grid = stress_grid(specs, budgets=(50,), reps=8, rng=9, ridges=(3.0,), scales=(0.5,))
    narrow = [
        CellSpec(
            name="c0",
            table=specs[0].table,
            z="z",
            label="y",
            signals=SIGNALS,
            kind="continuous",
            bandwidth=0.5 * h0,
        )
    ]
    plain = study_cells(narrow, methods=("naive", "lace"), budgets=(50,), reps=8, rng=9, ridge=3.0)
    a, b = grid.studies[(3.0, 0.5)].cells[0], plain.cells[0]
    np.testing.assert_allclose(a.estimates, b.estimates, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.truth, b.truth, rtol=1e-12)
    # the target really changes with h
    wide = grid.studies[(3.0, 0.5)].cells[0].truth
    base = study_cells(specs, methods=("naive",), budgets=(50,), reps=1, rng=9).cells[0].truth
    assert np.max(np.abs(wide - base)) > 1e-3


def test_stress_summary_matches_a_direct_computation() -> None:
    grid = stress_grid(cells(3), budgets=(30, 60), reps=10, rng=1)
    frame = grid.frame()
    assert len(frame) == 25 * 3 * 2
    minimum = grid.cell_minimum()
    summary = grid.summary().set_index("budget")
    for budget in (30, 60):
        part = frame[frame["budget"] == budget]
        per_cell = part.groupby("cell")["re"].min()
        row = summary.loc[budget]
        assert row["min"] == pytest.approx(per_cell.min())
        assert row["median"] == pytest.approx(per_cell.median())
        assert row["below_one"] == int((per_cell < 1).sum())
        assert row["below_ci"] == int((part.groupby("cell")["re_high"].min() < 1).sum())
        assert row["min_re_at_h0"] == pytest.approx(part[part["scale"] == 1.0]["re"].min())
        default = part[(part["ridge"] == 0.3) & (part["scale"] == 1.0)].set_index("cell")["re"]
        got = minimum[minimum["budget"] == budget].set_index("cell")["default_re"]
        pd.testing.assert_series_equal(got.sort_index(), default.sort_index(), check_names=False)
    geo = grid.grid(30)
    assert geo.shape == (5, 5)
    direct = np.exp(
        np.log(frame.query("budget == 30 and ridge == 1.0 and scale == 2.0")["re"]).mean()
    )
    assert geo.loc[1.0, 2.0] == pytest.approx(direct)


def test_narrow_bandwidth_and_weak_ridge_is_the_worst_corner() -> None:
    """Seeded check of the paper's qualitative finding: deterioration at h = 0.5 h0, small n,
    amplified by weak ridge (the grid's minimum sits at the narrowest bandwidth)."""
    grid = stress_grid(cells(3), budgets=(30,), reps=40, rng=11)
    minimum = grid.cell_minimum()
    assert (minimum["scale_at_min"] == 0.5).all()
    geo = grid.grid(30)
    assert geo.loc[0.03, 0.5] < geo.loc[0.3, 1.0]


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"ridges": (-1.0,)}, r"'ridges' parameter of stress_grid must be a non-empty list"),
        ({"scales": (0.0, 1.0)}, r"'scales' parameter of stress_grid .* floats > 0"),
        ({"scales": ()}, r"'scales' parameter of stress_grid must be a non-empty list"),
    ],
)
def test_stress_grid_argument_errors(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        stress_grid(cells(1), budgets=(30,), reps=2, **kwargs)  # type: ignore[arg-type]


def test_stress_grid_rejects_categorical_cells() -> None:
    frame = synthetic(0)
    frame["group"] = np.where(frame["z"] > 0.3, "hi", "lo")
    spec = CellSpec(name="cat", table=frame, z="group", label="y", signals=SIGNALS)
    with pytest.raises(ValueError, match=r"cell 'cat' is categorical"):
        stress_grid([spec], budgets=(30,), reps=2)


# ---------------------------------------------------------------- within-L CV


@pytest.mark.parametrize(
    "method",
    [
        "lace",
        "global_cv",
        "local_ppi",
        pytest.param("aug_plugin", marks=pytest.mark.slow),
        pytest.param("strat_ppi", marks=pytest.mark.slow),
    ],
)
def test_cv_fit_equals_select_on_the_masked_table(method: str) -> None:
    # sw.select puts the items in canonical order (by Z first): start from that order, so that
    # the same positions are labeled and the same folds drawn in both paths
    frame = synthetic(7).sort_values("z", kind="stable").reset_index(drop=True)
    items = make_table(frame, z="z", signals=list(SIGNALS), label="y", kind="continuous")
    ctx = build_context(items, primary="s1")
    index = np.sort(np.random.default_rng(1).permutation(len(frame))[:90])
    labeled = LabeledSet(index=index, y=frame["y"].to_numpy()[index])
    masked = frame.copy()
    masked.loc[~masked.index.isin(index), "y"] = np.nan
    fit, chosen = cv_fit(ctx, labeled, method, MethodOptions(), rng=np.random.default_rng(11))
    selected = sw.select(
        masked,
        z="z",
        signals=list(SIGNALS),
        label="y",
        method=method,
        kind="continuous",
        primary="s1",
        rng=np.random.default_rng(11),
    )
    assert chosen == pytest.approx(float(selected.chosen))
    np.testing.assert_allclose(fit.estimate, selected.result.estimate, rtol=1e-12, equal_nan=True)


def test_cv_study_matches_the_plain_splits_and_records_choices() -> None:
    specs = cells()
    methods = ("naive", "lace", "aug_plugin")
    cv = cv_study(specs, methods=methods, budgets=(30, 60), reps=4, rng=5)
    plain = study_cells(specs, methods=("naive",), budgets=(30, 60), reps=4, rng=5)
    for a, b in zip(cv.cells, plain.cells, strict=True):
        np.testing.assert_array_equal(a.estimates[0], b.estimates[0])  # same labeled sets
        assert np.isnan(a.params["chosen"]["naive"]).all()
        assert set(np.unique(a.params["chosen"]["lace"])) <= {0.03, 0.1, 0.3, 1.0, 3.0}
    chosen = chosen_parameters(cv)
    assert set(chosen["method"]) == {"lace", "aug_plugin"}
    shares = chosen.groupby(["method", "budget"])["share"].sum()
    np.testing.assert_allclose(shares.to_numpy(), 1.0)
    assert chosen["count"].sum() == 2 * 2 * 2 * 4  # methods x budgets x cells x reps


def test_cv_study_rejects_budgets_too_small_for_the_folds() -> None:
    with pytest.raises(ValueError, match=r"'budgets' parameter of cv_study must be >= 6"):
        cv_study(cells(1), budgets=(5, 30), reps=2)


@pytest.mark.slow
def test_cv_lace_stays_close_to_fixed_lace() -> None:
    """Seeded check of Table 28's finding: CV-tuned LACE keeps an RE above one and close to the
    fixed-ridge RE on the same splits."""
    specs = cells(3)
    cv = cv_study(specs, methods=("naive", "lace"), budgets=(60, 120), reps=30, rng=2)
    fixed = study_cells(specs, methods=("naive", "lace"), budgets=(60, 120), reps=30, rng=2)
    tuned = cv.aggregate().query("method == 'lace' and budget == 'overall'").iloc[0]
    plain = fixed.aggregate().query("method == 'lace' and budget == 'overall'").iloc[0]
    assert tuned["re_low"] > 1.0
    assert 0.8 < tuned["re"] / plain["re"] < 1.25


# ---------------------------------------------------------------- sparse region


def test_sparse_region_keeps_the_points_with_lowest_pool_effective_size() -> None:
    specs = cells(1)
    result = study_cells(specs, methods=("naive", "lace"), budgets=(60,), reps=6, rng=4)
    cell = result.cells[0]
    # pool n_eff by hand: Gaussian weights at the study's grid and bandwidth
    z = specs[0].table["z"].to_numpy()
    grid = np.asarray(cell.z, dtype=float)
    h = cell.params["bandwidth"][0]
    k = np.exp(-0.5 * ((z[:, None] - grid[None, :]) / h) ** 2)
    w = k / k.sum(axis=0)
    n_eff = 1.0 / (w**2).sum(axis=0)
    np.testing.assert_allclose(cell.pool_n_eff, n_eff, rtol=1e-10)
    lowest = np.sort(np.argsort(n_eff)[:5])
    sparse = sparse_region(result, k=5).cells[0]
    np.testing.assert_array_equal(np.asarray(sparse.z, dtype=float), grid[lowest])
    # skewed z (Beta(2, 5)): the sparse region is mostly the long upper tail of the grid
    assert (grid[lowest] > np.median(grid)).sum() >= 4
    # RE on the sparse region from the kept points only
    err = (cell.estimates[..., lowest] - cell.truth[lowest]) ** 2
    mse = err.mean(axis=-1)
    re = mse[0, 0].mean() / mse[1, 0].mean()
    row = sparse_summary(result, k=5).query("method == 'lace'").iloc[0]
    assert row["median_re"] == pytest.approx(re)
    assert row["below_one"] == int(re < 1)


# ---------------------------------------------------------------- command line


def test_study_command_reports_the_sparse_region_and_left_the_research_studies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    synthetic(3, m=300).to_csv(items, index=False)
    base = ["study", str(items), "--z", "z", "--signals", "s1,s2,s3", "--label", "y"]
    base += ["--budgets", "30,60", "--reps", "3", "--no-progress", "--methods", "naive,lace"]
    assert main([*base, "--sparse", "5", "--out", str(tmp_path / "study")]) == 0
    sparse = pd.read_csv(tmp_path / "study" / "sparse" / "summary.csv")
    assert set(sparse["method"]) == {"naive", "lace"}
    # the stress grid and per-split CV are research code now (research/sensitivity.py)
    for flag in ("--stress", "--cv"):
        with pytest.raises(SystemExit) as raised:
            main([*base, flag])
        assert raised.value.code == 2
        assert f"unrecognized arguments: {flag}" in capsys.readouterr().err
