"""Command-line conveniences: ordered text levels (--levels) and comma-separated --signals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import build_parser, main


def levels_table(path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 300
    level = rng.choice(["easy", "medium", "hard"], n)
    p = np.select([level == "easy", level == "medium"], [0.8, 0.5], 0.2)
    y = (rng.random(n) < p).astype(float)
    frame = pd.DataFrame(
        {
            "difficulty": level,
            "judge": y + rng.normal(0, 0.5, n),
            "correct": np.where(rng.random(n) < 0.3, y, np.nan),
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_levels_order_a_text_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = levels_table(tmp_path / "items.csv")
    argv = ["profile", str(items), "--z", "difficulty", "--levels", "easy,medium,hard"]
    argv += ["--signals", "judge", "--label", "correct", "--method", "lace"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(ordinal)" in out
    rows = [line.split()[0] for line in out.splitlines()[2:5]]
    assert rows == ["easy", "medium", "hard"]
    frame = pd.read_csv(items)
    frame["difficulty"] = pd.Categorical(
        frame["difficulty"], categories=["easy", "medium", "hard"], ordered=True
    )
    expected = sw.profile(frame, z="difficulty", signals="judge", label="correct", method="lace")
    assert expected.kind == "ordinal"
    assert f"{expected.estimate[0]:.3f}" in out


def test_levels_must_cover_the_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = levels_table(tmp_path / "items.csv")
    argv = ["profile", str(items), "--z", "difficulty", "--levels", "easy,hard"]
    assert main([*argv, "--signals", "judge", "--label", "correct"]) == 2
    assert "not among the levels easy,hard: ['medium']" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["profile", "study", "domains"])
def test_signals_help_says_comma_separated(command: str) -> None:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    (action,) = [a for a in sub._actions if "--signals" in a.option_strings]
    assert "comma-separated" in (action.help or "")
