"""Every result prints well in a terminal and a notebook (issue 31, item 4): a short ``repr``
(under 40 lines, no arrays dumped) and ``_repr_html_``, both rendered from one table model
(:class:`slicewise._display.Table`), whose renderers the reports register by result type."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from _report_data import frame

import slicewise as sw
from slicewise import _display


@pytest.fixture(scope="module")
def every_result(results: dict[str, Any], many: dict[str, Any]) -> dict[str, Any]:
    data = frame()
    domains = data.assign(pi=0.25)
    out = {
        "ProfileResult": results["continuous"],  # 15 grid points
        "ProfileResult (categorical)": results["categorical"],
        "ModelProfiles": many["models"],
        "ModelRanking": many["ranking"],
        "DeploymentScore": many["deploy"]["a"],
        "PlanResult": many["plan"],
        "DomainResult": sw.domains(
            domains, domain="subject", label="correct", signals="judge", inclusion="pi"
        ),
        "StudyResult": sw.study(
            data, z="subject", label="full", signals=["judge"], methods=["naive", "lace"],
            budgets=[60], reps=2, rng=0,
        ),
        "ValidationResult": sw.validate(
            domains, domain="subject", label="correct", signals="judge", inclusion="pi", rng=0,
            candidates=["hajek", "greg"],
        ),
        "SelectionResult": sw.select(
            data, z="x", label="correct", signals=["judge"], method="lace", rng=0
        ),
    }  # fmt: skip
    return out


def test_every_result_type_has_a_short_repr_and_html(every_result: dict[str, Any]) -> None:
    for name, result in every_result.items():
        text = repr(result)
        assert len(text.splitlines()) < 40, (name, text)
        assert "array(" not in text, name  # the dataclass repr dumped every array
        assert text.startswith(type(result).__name__ + ":"), name
        page = result._repr_html_()
        assert "<table" in page, name
        assert "</table>" in page, name


def test_text_and_html_render_one_table_model(every_result: dict[str, Any]) -> None:
    """The same cells, title and footer in both renderings: they come from one Table."""
    for name, result in every_result.items():
        model = _display.table(result)
        page = result._repr_html_()
        assert html.escape(model.title) in page, name
        assert model.as_text(max_rows=None).splitlines()[0] == model.title
        for row in model.rows[:5]:
            for cell in row:
                assert f"<td>{html.escape(cell)}</td>" in page, (name, cell)
        shown = set(re.findall(r"<th>(.*?)</th>", page))
        assert shown == {html.escape(c) for c in model.columns}, name


def test_long_tables_are_cut_in_the_repr_not_in_to_frame(results: dict[str, Any]) -> None:
    res = sw.profile(results["frame"], z="x", grid=30, signals=["judge"], label="correct", rng=0)
    text = repr(res)
    assert f"({res.size - _display.REPR_ROWS} more rows)" in text
    assert len(res.to_frame()) == res.size


def test_unknown_types_say_so() -> None:
    with pytest.raises(TypeError, match="no table renderer for int"):
        _display.table(3)


def test_borrowed_means_the_same_in_the_table_and_the_notes() -> None:
    """The flag is ``smoothing.objective.Borrowing.borrowed``: a smoothed domain whose own direct estimate has
    shrinkage weight below BORROWED_WEIGHT (0.5). The note said 'below 0.9' (issue 31)."""
    import numpy as np
    import pandas as pd

    from slicewise.smoothing.objective import BORROWED_WEIGHT

    rng = np.random.default_rng(0)
    m = 2000
    d = rng.integers(0, 40, m)
    y = (rng.random(m) < 0.5 + 0.02 * (d % 5)).astype(float)
    judge = y + rng.normal(0, 0.5, m)
    labeled = rng.random(m) < 0.04  # about 2 labels per domain: some borrow, most not
    table = pd.DataFrame({"d": d, "s": judge, "y": np.where(labeled, y, np.nan), "pi": 0.04})
    res = sw.domains(table, domain="d", label="y", signals="s", inclusion="pi")
    frame = res.to_frame()
    assert frame["borrowed"].any()
    assert (frame.loc[frame["borrowed"], "shrinkage"] < BORROWED_WEIGHT).all()
    kept = frame["shrinkage"].notna() & ~frame["borrowed"]
    assert (frame.loc[kept, "shrinkage"] >= BORROWED_WEIGHT).all()
    text = " ".join(res.summary().split())
    assert f"{int(frame['borrowed'].sum())} of {len(frame)} domains take more than half" in text
    assert f"carries less than {BORROWED_WEIGHT:g} of the reported one" in text
