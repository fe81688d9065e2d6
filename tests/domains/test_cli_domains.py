"""slicewise sample / domains / validate write what the Python API returns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main


def full_table(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 3000
    task = rng.integers(0, 12, n)
    y = (rng.random(n) < (0.3 + 0.04 * task)).astype(float)
    frame = pd.DataFrame({"task": task, "judge": 0.6 * y + rng.normal(0, 0.5, n), "y": y})
    frame.to_csv(path, index=False)
    return frame


def test_sample_then_domains_matches_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full_table(tmp_path / "full.csv")
    items = tmp_path / "items.csv"
    assert (
        main(
            [
                "sample",
                str(tmp_path / "full.csv"),
                "--strata",
                "task",
                "--fraction",
                "0.1",
                "--label",
                "y",
                "--seed",
                "1",
                "--out",
                str(items),
            ]
        )
        == 0
    )
    drawn = pd.read_csv(items)
    assert int(drawn["y"].notna().sum()) == 300
    assert set(drawn.columns) >= {"pi", "stratum"}
    # proportional allocation: every stratum's inclusion probability is n_h / N_h
    per = drawn.groupby("task").agg(
        n=("y", lambda v: v.notna().sum()), N=("y", "size"), pi=("pi", "first")
    )
    np.testing.assert_allclose(per["pi"], per["n"] / per["N"])
    out = tmp_path / "out"
    assert (
        main(
            [
                "domains",
                str(items),
                "--domain",
                "task",
                "--label",
                "y",
                "--signals",
                "judge",
                "--strata",
                "task",
                "--srs",
                "--method",
                "pp-s",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    expected = sw.domains(
        drawn,
        domain="task",
        label="y",
        signals=["judge"],
        strata="task",
        inclusion=None,
        method="pp-s",
    )
    written = pd.read_csv(out / "domains.csv")
    np.testing.assert_allclose(written["estimate"], expected.estimate, rtol=1e-10)
    np.testing.assert_allclose(written["upper"], expected.ci().high, rtol=1e-10)
    assert "pp-s estimates of 12 domains" in capsys.readouterr().out


def test_validate_reports_a_positive_error_even_when_dbcv_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = full_table(tmp_path / "full.csv")
    sampled = sw.sample(frame, strata="task", fraction=0.1, rng=1).apply(frame, label="y")
    sampled.to_csv(tmp_path / "items.csv", index=False)
    drawn = pd.read_csv(tmp_path / "items.csv")  # 25 labels a domain: DB-CV is noisy here
    with pytest.warns(UserWarning, match="was not positive"):
        res = sw.validate(
            drawn,
            domain="task",
            label="y",
            signals=["judge"],
            strata="stratum",
            inclusion=None,
            rng=2,
        )
    best = res.candidates.index(res.selected)
    assert res.dbcv_mse[best] <= 0
    assert res.reported_rmse == pytest.approx(np.sqrt(res.design_mse[best]))
    assert res.reported_rmse > 0
    assert (
        main(
            [
                "validate",
                str(tmp_path / "items.csv"),
                "--domain",
                "task",
                "--label",
                "y",
                "--signals",
                "judge",
                "--strata",
                "stratum",
                "--srs",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert f"selected {res.selected}; reported RMSE {res.reported_rmse:.4f}" in captured.out
    assert captured.err.count("was not positive") == 0  # printed once, as a note
    assert captured.out.count("was not positive") == 1


def test_domains_cli_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full_table(tmp_path / "full.csv")
    status = main(
        [
            "domains",
            str(tmp_path / "full.csv"),
            "--domain",
            "task",
            "--label",
            "y",
            "--inclusion",
            "nope",
        ]
    )
    assert status == 2
    assert "nope" in capsys.readouterr().err
