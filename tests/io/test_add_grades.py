"""`slicewise.io.add_grades` (the `slicewise join` command): gold grades onto an item table.

Expected values are the grades themselves, placed by hand; every rule of the docstring has a
test that breaks it and checks the message names the column or parameter, the rule and the count.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from slicewise.cli import main
from slicewise.io import add_grades


def long_items() -> pd.DataFrame:
    """Two models x three questions, question ids as integers (as CSV reads them)."""
    return pd.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b"],
            "qid": [1, 2, 3, 1, 2, 3],
            "acc": [1.0, 0.0, 1.0, 0.0, 0.0, 1.0],
        }
    )


def test_grades_land_on_their_rows_and_the_rest_is_unlabeled() -> None:
    items = long_items()
    # ids as text (as Parquet or a hand-written file gives them), rows in another order
    grades = pd.DataFrame({"qid": ["3", "1", "2"], "model": ["b", "a", "a"], "human": [0, 1, 0.5]})
    out = add_grades(items, grades, on=["model", "qid"])
    assert list(out.columns) == ["model", "qid", "acc", "human"]
    np.testing.assert_array_equal(out["human"].to_numpy(), [1.0, 0.5, np.nan, np.nan, np.nan, 0.0])
    pd.testing.assert_frame_equal(out.drop(columns="human"), items)
    assert "human" not in items.columns  # the input is not modified


def test_label_column_is_chosen_by_name_when_grades_have_more_columns() -> None:
    grades = pd.DataFrame({"model": ["a"], "qid": [2], "rater": ["r1"], "grade": [True]})
    out = add_grades(long_items(), grades, on=["model", "qid"], label="grade")
    np.testing.assert_array_equal(
        out["grade"].to_numpy(), [np.nan, 1.0, np.nan, np.nan, np.nan, np.nan]
    )
    assert "rater" not in out.columns
    with pytest.raises(ValueError, match=r"2 columns besides the key.*'rater', 'grade'.*`label`"):
        add_grades(long_items(), grades, on=["model", "qid"])


@pytest.mark.parametrize(
    ("grades", "on", "pattern"),
    [
        (
            pd.DataFrame({"model": ["a", "c", "c"], "qid": [1, 1, 9], "y": [1, 0, 1]}),
            ["model", "qid"],
            r"`grades` has 2 of 3 keys that match no row of `items` \('c\|1', 'c\|9'\)",
        ),
        (
            pd.DataFrame({"model": ["a", "a"], "qid": [1, 1], "y": [1, 0]}),
            ["model", "qid"],
            r"`grades` has 1 duplicate keys \(first: 'a\|1'\)",
        ),
        (
            pd.DataFrame({"qid": [1], "y": [1]}),
            "qid",
            r"`items` has 3 duplicate keys.*add the column",
        ),
        (
            pd.DataFrame({"model": ["a", None], "qid": [1, 2], "y": [1, 0]}),
            ["model", "qid"],
            r"`grades` has 1 missing keys in column\(s\) 'model', 'qid'",
        ),
        (
            pd.DataFrame({"model": ["a"], "question": [1], "y": [1]}),
            ["model", "qid"],
            r"`grades` has no key \(`on`\) column 'qid'",
        ),
        (
            pd.DataFrame({"model": ["a", "a"], "qid": [1, 2], "y": [1.5, -1]}),
            ["model", "qid"],
            r"label column 'y' has 2 values outside \[0, 1\]",
        ),
        (
            pd.DataFrame({"model": ["a"], "qid": [1], "y": ["pass"]}),
            ["model", "qid"],
            r"label column 'y' has 1 non-numeric values \(e.g. 'pass'\)",
        ),
        (
            pd.DataFrame({"model": ["a"], "qid": [1], "acc": [1]}),
            ["model", "qid"],
            r"`items` already has a column 'acc' \(`label`\)",
        ),
    ],
)
def test_bad_grades_are_named(grades: pd.DataFrame, on: list[str] | str, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        add_grades(long_items(), grades, on=on)


def test_cli_join_writes_the_table_and_reports_errors_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items_path, grades_path, out = (
        tmp_path / "runs.parquet",
        tmp_path / "g.csv",
        tmp_path / "i.jsonl",
    )
    long_items().assign(qid=lambda f: f["qid"].astype(str)).to_parquet(items_path)
    pd.DataFrame({"model": ["b", "a"], "qid": [2, 3], "human": [1, 0]}).to_csv(grades_path)
    # the CSV's unnamed index column makes the label ambiguous: --label resolves it
    argv = ["join", str(items_path), str(grades_path), "--on", "model,qid", "--out", str(out)]
    assert main(argv) == 2
    assert "name the label column" in capsys.readouterr().err
    assert main([*argv, "--label", "human"]) == 0
    assert "wrote" in capsys.readouterr().out
    written = pd.read_json(out, lines=True)
    np.testing.assert_array_equal(
        written["human"].to_numpy(), [np.nan, np.nan, 0, np.nan, 1, np.nan]
    )
