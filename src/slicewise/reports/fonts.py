"""Text that the installed fonts can draw: unicode names in PNG plots.

Profile axes, levels, labels and models are named by the user, in any script. Matplotlib draws
each character with the first font of the text's family list that has it (font fallback); a
character that no installed font has is drawn as an empty box, with a "Glyph missing" warning.
:func:`readable` gives every text of a figure the fallback list of the installed fonts among
:data:`FALLBACK` (DejaVu Sans, shipped with matplotlib, covers Latin, Greek, Cyrillic, Arabic
and Hebrew; CJK needs one of the Noto CJK / WenQuanYi / Droid fonts, e.g. Debian's
``fonts-noto-cjk``) and writes a character that none of them has as its code point (U+65E5),
with a line under the figure that says so, instead of a box.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Any, TypeVar

#: Font families tried in order, where installed.
FALLBACK = (
    "DejaVu Sans",
    "Noto Sans",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "Arial Unicode MS",
)

F = TypeVar("F", bound=Callable[..., Any])


@functools.cache
def installed() -> tuple[tuple[str, ...], frozenset[int]]:
    """The installed families of :data:`FALLBACK` and the code points they cover together."""
    from matplotlib import font_manager, ft2font

    names: list[str] = []
    covered: set[int] = set()
    for name in FALLBACK:
        try:
            path = font_manager.findfont(
                font_manager.FontProperties(family=name), fallback_to_default=False
            )
        except ValueError:
            continue
        names.append(name)
        covered.update(ft2font.FT2Font(path).get_charmap())
    return tuple(names), frozenset(covered)


def drawable(text: str) -> str:
    """``text`` with every character no installed font draws written as its code point."""
    _, covered = installed()
    return "".join(
        c
        if ord(c) in covered or c.isspace() or unicodedata.category(c).startswith("C")
        else f"U+{ord(c):04X}"
        for c in text
    )


def readable(fig: Any) -> Any:
    """Give every text of ``fig`` the fallback fonts and write undrawable characters as code
    points (module notes); returns ``fig``."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter

    names, _ = installed()
    replaced = False
    for ax in fig.axes:  # tick labels are redrawn from their formatter: name levels through it
        for axis in (ax.xaxis, ax.yaxis):
            original = axis.get_major_formatter()
            if not isinstance(original, FixedFormatter | FuncFormatter):
                continue  # numbers
            labels = [str(original(v, i)) for i, v in enumerate(axis.get_majorticklocs())]
            if any(drawable(label) != label for label in labels):
                replaced = True
                axis.set_major_formatter(
                    FuncFormatter(lambda v, pos, f=original: drawable(str(f(v, pos))))
                )
        if names:
            ax.tick_params(labelfontfamily=list(names))
    for text in fig.findobj(Text):
        value = text.get_text()
        if value.isascii() or "$" in value:
            continue
        if names:
            text.set_fontfamily(list(names))
        clean = drawable(value)
        if clean != value:
            replaced = True
            text.set_text(clean)
    if replaced:
        fig.text(
            0.01,
            0.0,
            "Characters that no installed font draws are written as their code points (U+...).",
            fontsize=7,
            color="0.4",
            va="bottom",
        )
    return fig


def readable_plot(func: F) -> F:
    """Decorate a plot function returning an Axes (or an array of them): :func:`readable` on its
    figure."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        first = out.flat[0] if hasattr(out, "flat") else out[0] if isinstance(out, list) else out
        fig = getattr(first, "figure", None)
        if fig is not None:
            readable(fig)
        return out

    return wrapper  # type: ignore[return-value]
