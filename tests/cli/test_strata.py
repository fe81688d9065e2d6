"""``--strata`` names a stratum column in every subcommand; the number of equal-width strata of
``strat_ppi`` is ``slicewise profile --strata-count N`` (``--strata N`` still works there, with a
warning)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from slicewise.cli import build_parser, main


def items(path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 600
    z = rng.uniform(0, 1, n)
    y = (rng.random(n) < 0.3 + 0.4 * z).astype(float)
    frame = pd.DataFrame(
        {"z": z, "task": rng.integers(0, 4, n), "judge": y + rng.normal(0, 0.5, n), "y": y}
    )
    frame.loc[rng.random(n) > 0.3, "y"] = np.nan
    frame["pi"] = 0.3
    frame.to_csv(path, index=False)
    return path


def profile_argv(path: Path, *extra: str) -> list[str]:
    return [
        "profile",
        str(path),
        "--z",
        "z",
        "--label",
        "y",
        "--signals",
        "judge",
        "--method",
        "strat_ppi",
        *extra,
    ]


def test_strata_count_sets_the_strata_of_strat_ppi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = items(tmp_path / "items.csv")
    tables = {}
    for extra in ([], ["--strata-count", "5"], ["--strata-count", "3"], ["--strata", "3"]):
        assert main(profile_argv(path, *extra)) == 0
        captured = capsys.readouterr()
        tables[" ".join(extra)] = captured.out
        if extra[:1] == ["--strata"]:
            assert "now spelled --strata-count 3" in captured.err
        else:
            assert "--strata-count" not in captured.err
    assert tables[""] == tables["--strata-count 5"]  # 5 is the default
    assert tables["--strata-count 3"] == tables["--strata 3"]
    assert tables["--strata-count 3"] != tables[""]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--strata", "task"], "--strata names a stratum column in sample, domains and validate"),
        (["--strata", "3", "--strata-count", "4"], "give one of them, not both"),
    ],
)
def test_profile_refuses_a_stratum_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    path = items(tmp_path / "items.csv")
    assert main(profile_argv(path, *extra)) == 2
    assert message in capsys.readouterr().err


def test_strata_count_must_be_a_whole_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = items(tmp_path / "items.csv")
    with pytest.raises(SystemExit):
        main(profile_argv(path, "--strata-count", "task"))
    assert "--strata-count: expected a whole number, got 'task'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["sample", "domains", "validate"])
def test_a_number_for_a_stratum_column_points_to_strata_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = items(tmp_path / "items.csv")
    argv = [command, str(path), "--strata", "5", "--label", "y"]
    argv += ["--fraction", "0.1", "--out", str(tmp_path / "s.csv")] if command == "sample" else []
    argv += ["--domain", "task"] if command != "sample" else []
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--strata names the stratum column of the design; '5' is not a column" in err
    assert "slicewise profile --strata-count 5" in err


def test_every_strata_option_is_a_column_but_profiles_old_spelling() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name, sub in commands.items():
        for action in sub._actions:
            if "--strata" in action.option_strings:
                if name == "profile":
                    assert "old spelling of --strata-count" in (action.help or "")
                else:
                    assert action.metavar == "COL", name
                    assert "stratum column" in (action.help or ""), name
