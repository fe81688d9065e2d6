"""Unicode names in PNG plots (issue 31): drawn where a font has them, written as code points
(with a line that says so) where none has, never as empty boxes with a "Glyph missing" warning."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.exceptions import SlicewiseWarning

pytest.importorskip("matplotlib")

LEVELS = ("Schwierigkeit – ü", "Ελληνικά", "日本語の質問", "plain")


def _result() -> sw.ProfileResult:
    rng = np.random.default_rng(3)
    n = 800
    g = rng.choice(LEVELS, size=n)
    y = rng.binomial(1, 0.6, size=n).astype(float)
    judge = np.clip(y + rng.normal(0, 0.5, size=n), 0, 1)
    y[rng.random(n) > 0.4] = np.nan
    frame = pd.DataFrame({"Themenbereich – Größe": g, "judge": judge, "gold": y})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SlicewiseWarning)
        return sw.profile(
            frame, z="Themenbereich – Größe", kind="categorical", label="gold", signals="judge"
        )


def _drawn_texts(fig: object) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text)]  # type: ignore[attr-defined]


def test_unicode_names_draw_without_missing_glyphs() -> None:
    from slicewise.reports.fonts import installed

    res = _result()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing")
        ax = res.plot()
        buffer = io.BytesIO()
        ax.figure.savefig(buffer, format="png")  # draws every text: warns on a missing glyph
    texts = " ".join(_drawn_texts(ax.figure))
    _, covered = installed()
    # the Latin and Greek names are kept as they are (DejaVu Sans has them)
    assert "Schwierigkeit – ü" in texts
    assert "Ελληνικά" in texts
    if all(ord(c) in covered for c in "日本語の質問"):
        assert "日本語の質問" in texts
    else:  # no CJK font installed: code points, and the figure says so
        assert "U+65E5" in texts
        assert any("code points" in t for t in _drawn_texts(ax.figure))


def test_drawable_keeps_what_a_font_has_and_spells_out_the_rest() -> None:
    from slicewise.reports.fonts import drawable, installed

    _, covered = installed()
    assert drawable("abc – ü") == "abc – ü"
    missing = next(c for c in map(chr, range(0x4E00, 0xA000)) if ord(c) not in covered)
    assert drawable(f"x{missing}y") == f"xU+{ord(missing):04X}y"
