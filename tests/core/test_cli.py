"""The command line writes what the Python API computes, and reports bad input clearly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main
from slicewise.datasets import DEMO_SIGNALS, load_demo


def make_items(path: Path) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    m = 400
    data = pd.DataFrame({"diff": rng.uniform(0, 1, m), "judge": rng.normal(size=m)})
    data["correct"] = (rng.random(m) < 0.8 - 0.5 * data["diff"]).astype(float)
    data["judge"] += data["correct"]
    data.loc[rng.permutation(m)[120:], "correct"] = np.nan
    data.to_csv(path, index=False)
    return data


def test_profile_command_writes_the_api_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    data = make_items(items)
    out = tmp_path / "out"
    status = main(
        [
            "profile",
            str(items),
            "--z",
            "diff",
            "--signals",
            "judge",
            "--label",
            "correct",
            "--grid",
            "8",
            "--ridge",
            "0.1",
            "--level",
            "0.9",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    expected = sw.profile(
        data, z="diff", signals=["judge"], label="correct", grid=8, ridge=0.1, level=0.9
    )
    written = pd.read_csv(out / "profile.csv")
    np.testing.assert_allclose(written["estimate"], expected.estimate, rtol=1e-12)
    np.testing.assert_allclose(written["lower"], expected.ci().low, rtol=1e-12)
    payload = json.loads((out / "profile.json").read_text())
    assert payload["method"] == "auto"
    assert payload["level"] == 0.9
    assert len(payload["rows"]) == 8
    assert (out / "profile.png").stat().st_size > 1000
    printed = capsys.readouterr().out
    assert "auto profile over diff (continuous)" in printed
    assert f"{expected.estimate[0]:.3f}" in printed


def test_profile_command_reports_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    make_items(items)
    status = main(
        [
            "profile",
            str(items),
            "--z",
            "diff",
            "--signals",
            "judge",
            "--label",
            "correct",
            "--ridge",
            "-2",
        ]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert "slicewise: error: The 'ridge' parameter of profile must be a finite float >= 0" in err


def test_methods_command_lists_registry(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["methods"]) == 0
    printed = capsys.readouterr().out
    for name in sw.methods()["method"]:
        assert name in printed


def test_demo_runs_on_shipped_data_and_auto_beats_naive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    frame = load_demo()
    truth = sw.profile(frame, z="log_instruction_len", label="truth", method="naive").estimate
    lace = sw.profile(
        frame, z="log_instruction_len", signals=DEMO_SIGNALS, label="gold", kind="continuous"
    )
    written = pd.read_csv(tmp_path / "length" / "profile.csv")
    np.testing.assert_allclose(written["estimate"], lace.estimate, rtol=1e-12)
    np.testing.assert_allclose(written["truth"], truth, rtol=1e-12)
    rmse_auto = np.sqrt(np.mean((lace.estimate - truth) ** 2))
    rmse_naive = np.sqrt(np.mean((lace.naive_estimate - truth) ** 2))
    assert rmse_auto < rmse_naive
    assert f"{rmse_auto:.4f}" in printed


def test_import_command_writes_the_reader_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from slicewise.io import read_inspect

    logs = Path(__file__).resolve().parents[1] / "data" / "logs" / "inspect"
    source = next(logs.glob("*.json"))
    out = tmp_path / "items.csv"
    assert main(["import", "inspect", str(source), "--out", str(out)]) == 0
    with pytest.warns(UserWarning, match="samples errored"):
        expected = read_inspect(source)
    written = pd.read_csv(out)
    assert len(written) == len(expected) == 20
    np.testing.assert_array_equal(written["match"].to_numpy(), expected["match"].to_numpy())
    captured = capsys.readouterr()
    assert "1 of 20 samples errored" in captured.err
    assert status_line(captured.out) == "wrote"


def status_line(text: str) -> str:
    return text.split()[0]
