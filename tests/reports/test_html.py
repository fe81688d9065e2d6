"""The HTML report: one self-contained file, with every part a reader needs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _report_data import frame

import slicewise as sw
from slicewise.cli import main
from slicewise.reports.html import esc, external_references


class Refs(HTMLParser):
    """Every tag and URL-bearing attribute of a document."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in {"src", "href", "xlink:href", "srcset", "action", "poster", "data"}:
                self.urls.append((tag, name, value or ""))


def assert_self_contained(document: str) -> Refs:
    parser = Refs()
    parser.feed(document)
    outside = [u for u in parser.urls if not u[2].startswith(("#", "data:"))]
    assert outside == [], f"references outside the file: {outside}"
    assert "script" not in parser.tags or all(
        'src="' not in m for m in re.findall(r"<script[^>]*>", document)
    )
    assert "link" not in parser.tags  # no external stylesheet
    assert not re.search(r"@import|url\(\s*['\"]?(https?:|file:|//)", document, flags=re.I)
    assert not re.search(r"(src|href)\s*=\s*['\"]?\s*(https?:|file:|//)", document, flags=re.I)
    assert external_references(document) == []
    return parser


@pytest.mark.parametrize("which", ["ordinal", "categorical", "continuous"])
def test_profile_report_is_self_contained_and_complete(
    results: dict[str, Any], which: str, tmp_path: Path
) -> None:
    res = results[which]
    path = tmp_path / "report.html"
    document = res.to_html(path, label="correct", context={"command": "slicewise profile x"})
    assert path.read_text(encoding="utf-8") == document
    parser = assert_self_contained(document)
    assert "svg" in parser.tags  # the figure is inline
    assert '<meta name="viewport"' in document
    assert "@media" in document
    assert "<title>How &#x27;correct&#x27; varies with" in document
    for part in (
        "What the method chose and why",
        "Warnings",
        "Per slice",
        "n labeled (eff)",
        "R^2",
        "gain",
        "gold labels only",  # the gold-only overlay in the figure's legend
        "Data",
        "How to reproduce",
        "slicewise version",
        "slicewise profile x",
    ):
        assert part in document, part
    for note in res.notes:
        assert esc(note) in document
    assert len(document.encode()) < 300_000


def test_domain_models_and_study_reports_are_self_contained(tmp_path: Path) -> None:
    data = frame()
    data["pi"] = 0.25
    dom = sw.domains(data, domain="subject", label="correct", signals=["judge"], method="ppi")
    assert_self_contained(dom.to_html(tmp_path / "d.html", label="correct"))
    base = frame(1)
    other = base.assign(
        model="b", judge=base["judge"][::-1].to_numpy(), correct=base["correct"][::-1].to_numpy()
    )
    both = pd.concat([base.assign(model="a"), other], ignore_index=True)
    both["item"] = list(range(len(base))) * 2
    models = sw.profile_models(
        both,
        z="level",
        kind="ordinal",
        signals=["judge"],
        label="correct",
        model="model",
        id="item",
    )
    document = models.to_html(tmp_path / "m.html", label="correct")
    assert_self_contained(document)
    assert "Model a" in document
    full = frame().assign(correct=lambda f: f["full"])
    study = sw.study(
        full,
        z="level",
        kind="ordinal",
        signals=["judge"],
        label="correct",
        methods=["naive", "lace"],
        budgets=[60, 120],
        reps=4,
        rng=0,
    )
    document = study.to_html(tmp_path / "s.html")
    assert_self_contained(document)
    assert "Per method and budget" in document


def test_cli_report_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = tmp_path / "items.csv"
    frame().to_csv(items, index=False)
    report = tmp_path / "out" / "report.html"
    argv = ["profile", str(items), "--z", "level", "--kind", "ordinal", "--signals", "judge"]
    argv += ["--label", "correct", "--report", str(report)]
    assert main(argv) == 0
    assert f"wrote {report}" in capsys.readouterr().out
    document = report.read_text(encoding="utf-8")
    assert_self_contained(document)
    assert "slicewise profile" in document
    assert "--report" in document  # the command that made it
    assert "items.csv" in document
