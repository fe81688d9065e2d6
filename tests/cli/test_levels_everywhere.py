"""--levels orders a text profile column in every subcommand with --z (profile, plan, next,
study), and every column-list option says it is comma-separated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from slicewise.cli import build_parser, main

ORDER = ["easy", "medium", "hard"]


def levels_table(path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 300
    level = rng.choice(ORDER, n)
    y = (rng.random(n) < np.select([level == "easy", level == "medium"], [0.8, 0.5], 0.2)).astype(
        float
    )
    frame = pd.DataFrame(
        {
            "difficulty": level,
            "judge": y + rng.normal(0, 0.5, n),
            "correct": np.where(rng.random(n) < 0.3, y, np.nan),
            "truth": y,
        }
    )
    frame.to_csv(path, index=False)
    return path


def test_plan_takes_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = levels_table(tmp_path / "items.csv")
    out = tmp_path / "plan.csv"
    argv = ["plan", str(items), "--z", "difficulty", "--levels", ",".join(ORDER)]
    assert main([*argv, "--signals", "judge", "--label", "correct", "--out", str(out)]) == 0
    assert pd.read_csv(out)["z"].tolist() == ORDER  # in the given order, not alphabetical
    assert "slicewise: error" not in capsys.readouterr().err


def test_next_takes_levels(tmp_path: Path) -> None:
    items = levels_table(tmp_path / "items.csv")
    out = tmp_path / "next.csv"
    argv = ["next", str(items), "--z", "difficulty", "--levels", ",".join(ORDER), "--seed", "0"]
    argv += ["--signals", "judge", "--label", "correct", "--batch", "20", "--out", str(out)]
    assert main(argv) == 0
    written = pd.read_csv(out)
    assert written["difficulty"].tolist() == pd.read_csv(items)["difficulty"].tolist()
    assert written["selected"].sum() > 0


def test_study_takes_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = levels_table(tmp_path / "items.csv")
    argv = ["study", str(items), "--z", "difficulty", "--levels", ",".join(ORDER)]
    argv += ["--label", "truth", "--signals", "judge", "--methods", "naive,lace"]
    argv += ["--budgets", "60", "--reps", "3", "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    bad = ["study", str(items), "--z", "difficulty", "--levels", "easy,hard"]
    assert main([*bad, "--label", "truth", "--budgets", "60", "--reps", "2"]) == 2
    assert "not among the levels easy,hard: ['medium']" in capsys.readouterr().err


def test_every_column_list_says_comma_separated() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    checked = 0
    for name, sub in commands.items():
        for action in sub._actions:
            if {"--z", "--signals", "--domain", "--levels"} & set(action.option_strings):
                assert "comma-separated" in (action.help or ""), (name, action.option_strings)
                checked += 1
    assert checked >= 14
    with_z = {n for n, s in commands.items() if any("--z" in a.option_strings for a in s._actions)}
    with_levels = {
        n for n, s in commands.items() if any("--levels" in a.option_strings for a in s._actions)
    }
    assert with_z == with_levels == {"profile", "study", "plan", "next"}
