"""HTML reports of rankings, deployment scores, plans, gaps and cascades: one self-contained
file each, from Python and from ``--report`` on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _report_data import frame, three_models
from test_html import assert_self_contained

from slicewise.cli import main
from slicewise.reports.html import esc
from slicewise.reports.html_more import deploy_html, plan_html, ranking_html


def test_ranking_report(many: dict[str, Any], tmp_path: Path) -> None:
    result = many["ranking"]
    path = tmp_path / "r.html"
    document = ranking_html(result, path, label="correct", context={"command": "slicewise x"})
    assert path.read_text(encoding="utf-8") == document
    parser = assert_self_contained(document)
    assert "svg" in parser.tags
    for part in ("Clear differences", "Pairwise gaps", "Rank ranges per slice", "simultaneous"):
        assert part in document, part
    assert "<title>Which model is better where: 3 models by subject</title>" in document
    for a, b in result.pairs:
        assert f"{a} - {b}" in document
    for note in result.notes:
        assert esc(note) in document
    assert "slicewise x" in document


def test_deploy_report(many: dict[str, Any], tmp_path: Path) -> None:
    document = deploy_html(many["deploy"], deploy=many["mix"], label="correct")
    assert_self_contained(document)
    assert "<title>Expected mean correct under your deployment mix</title>" in document
    assert "algebra=0.5, biology=0.3, chemistry=0.1, drama=0.1" in document
    for name, score in many["deploy"].items():
        assert f"<td>{name}</td>" in document
        assert f"<td>{score.estimate:.3f}</td>" in document
    assert "Each level&#x27;s share of the score" in document


def test_plan_report(many: dict[str, Any], tmp_path: Path) -> None:
    plan = many["plan"]
    document = plan_html(plan, label="correct")
    assert_self_contained(document)
    assert f"{plan.total_more} in all" in document
    for value, more in zip(np.asarray(plan.z), plan.n_more, strict=True):
        if more > 0:
            assert f"{value}: +{int(more)}" in document
    assert "labels to add" in document


def test_gap_report_says_which_way(many: dict[str, Any]) -> None:
    document = many["gap"].to_html(label="correct")
    assert_self_contained(document)
    assert "<title>Gap a - b in &#x27;correct&#x27; across subject</title>" in document
    assert "(&gt; 0: a scores higher)" in document


def write_items(tmp_path: Path) -> Path:
    path = tmp_path / "long.csv"
    three_models().to_csv(path, index=False)
    return path


LONG = ["--z", "subject", "--signals", "judge", "--label", "correct", "--model-col", "model"]
LONG += ["--id", "item"]


@pytest.mark.parametrize(
    ("flags", "title"),
    [
        (["--rank"], "Which model is better where: 3 models by subject"),
        (["--deploy", "algebra=1,drama=1"], "Expected mean correct under your deployment mix"),
        (["--pair", "a,c"], "Gap a - c in &#x27;correct&#x27; across subject"),
    ],
)
def test_cli_report_for_many_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], title: str
) -> None:
    items = write_items(tmp_path)
    report = tmp_path / "out" / "report.html"
    argv = ["profile", str(items), *LONG, *flags, "--report", str(report)]
    assert main(argv) == 0
    assert f"wrote {report}" in capsys.readouterr().out
    document = report.read_text(encoding="utf-8")
    assert_self_contained(document)
    assert f"<title>{title}</title>" in document
    assert esc(" ".join(flags)) in document  # the command that made it
    assert "long.csv" in document


def test_cli_report_for_cascade_and_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = frame()
    rng = np.random.default_rng(3)
    rated = data["correct"].notna() | (rng.random(len(data)) < 0.3)
    data["strong"] = np.where(rated, data["full"] + rng.normal(0, 0.3, len(data)), np.nan)
    items = tmp_path / "items.csv"
    data.to_csv(items, index=False)
    cascade = tmp_path / "cascade.html"
    argv = ["profile", str(items), "--z", "level", "--kind", "ordinal", "--signals", "judge"]
    assert main([*argv, "--label", "correct", "--rater", "strong", "--report", str(cascade)]) == 0
    document = cascade.read_text(encoding="utf-8")
    assert_self_contained(document)
    assert "<title>How &#x27;correct&#x27; varies with level</title>" in document
    plan = tmp_path / "plan.html"
    argv = ["plan", str(items), "--z", "subject", "--signals", "judge", "--label", "correct"]
    assert main([*argv, "--report", str(plan)]) == 0
    assert f"wrote {plan}" in capsys.readouterr().out
    document = plan.read_text(encoding="utf-8")
    assert_self_contained(document)
    assert "<title>How many more gold labels, by subject</title>" in document
    assert "slicewise plan" in document
