"""research/stamp.py: every generated table carries the command and commit that made it."""

from __future__ import annotations

import sys
from pathlib import Path

from research.stamp import MARK, main, stamp, stamp_tables


def test_tables_are_stamped_once_and_restamped_in_place(tmp_path: Path) -> None:
    (tmp_path / "table.md").write_text("Command: `make it`\n\n| a |\n|---|\n| 1 |\n")
    (tmp_path / "table.tex").write_text("\\begin{tabular}{l}\n\\end{tabular}\n")
    (tmp_path / "summary.csv").write_text("a\n1\n")
    stamp_tables(tmp_path, "make it", commit="abc1234")
    stamp_tables(tmp_path, "make it", commit="def5678")
    md = (tmp_path / "table.md").read_text()
    assert md.startswith(stamp("make it", commit="def5678"))
    assert md.count(MARK) == 1
    assert "abc1234" not in md
    assert "Command: `make it`" not in md  # the generator's own line is replaced by the stamp
    assert md.endswith("| a |\n|---|\n| 1 |\n")
    tex = (tmp_path / "table.tex").read_text()
    assert tex.count(MARK) == 1
    assert tex.startswith("% " + MARK)
    assert tex.endswith("\\begin{tabular}{l}\n\\end{tabular}\n")
    listing = (tmp_path / "STAMP.md").read_text()
    assert "def5678" in listing
    assert "`summary.csv`" in listing


def test_wrapper_saves_the_printed_tables_with_the_stamp(tmp_path: Path) -> None:
    log = tmp_path / "out.md"
    command = [sys.executable, "-c", "print('| a |')"]
    assert main(["--log", str(log), "--", *command]) == 0
    text = log.read_text()
    assert text.startswith(MARK)
    assert "Commit: `" in text
    assert text.endswith("| a |\n")
    assert main(["--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
