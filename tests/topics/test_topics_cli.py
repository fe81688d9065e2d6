"""The command line: slicewise topics, profile --topics, demo --topics."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from _topic_data import planted

from slicewise.cli import main


def test_topics_command_writes_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = tmp_path / "items.csv"
    planted(seed=20).to_csv(items, index=False)
    out = tmp_path / "topics.csv"
    assert main(["topics", str(items), "--text", "prompt", "--out", str(out)]) == 0
    written = pd.read_csv(out)
    assert written["topic"].nunique() == 4
    assert "4 topics (tfidf), items per topic:" in capsys.readouterr().out


def test_profile_over_topics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frame = planted(seed=21)
    frame["judge"] = frame["gold"] + 0.1
    frame.loc[frame.index % 4 != 0, "gold"] = float("nan")
    items = tmp_path / "items.csv"
    frame.to_csv(items, index=False)
    args = ["profile", str(items), "--topics", "prompt", "--label", "gold", "--signals", "judge"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "note: topic budget: 100 labels." in out
    assert "profile over topic (categorical)" in out
    assert main([*args, "--z", "truth"]) == 2
    assert "give --z or --topics, not both" in capsys.readouterr().err
    assert main(["profile", str(items), "--label", "gold"]) == 2
    assert "needs --z COLUMN(S) or --topics" in capsys.readouterr().err


def test_topics_command_bad_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = tmp_path / "items.csv"
    planted(seed=22).to_csv(items, index=False)
    assert main(["topics", str(items), "--text", "nope", "--out", str(tmp_path / "t.csv")]) == 2
    assert "names column 'nope'" in capsys.readouterr().err
