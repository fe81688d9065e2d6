"""How results show themselves: one table model rendered as text and HTML, and the renderers
registered by result type.

As statsmodels' ``Summary``, every result builds one :class:`Table` (a title, a few lines above
the table, formatted cells, a few lines below) that :meth:`Table.as_text` and
:meth:`Table.as_html` both render: ``repr(res)`` in a terminal and ``res._repr_html_()`` in
Jupyter show the same content. Results never import the reports package: their ``__repr__``,
``_repr_html_``, ``summary()``, ``to_html()`` and ``plot()`` call the generic functions here
(:func:`table`, :func:`text`, :func:`html`, :func:`plot`), which dispatch on the result's type
(:func:`functools.singledispatch`); :mod:`slicewise.reports.register` registers the
implementations. The package's ``__init__`` (the top layer) installs the loader that imports
them on first use (:func:`set_loader`), so imports point down the layers and ``import
slicewise`` stays light.
"""

from __future__ import annotations

import functools
import html as html_text
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: Rows of the table a ``repr`` shows (the first and last halves; the rest are counted).
REPR_ROWS = 16
#: Lines below the table a ``repr`` shows (notes are cut at the first sentence).
REPR_FOOTER = 4


@dataclass(frozen=True)
class Table:
    """A result as a table: the model that text and HTML both render.

    Attributes
    ----------
    title : str
        One line: what was estimated.
    header : tuple of str
        Lines above the table (design, method, level).
    columns : tuple of str
    rows : tuple of tuple of str
        Formatted cells, one tuple per row.
    footer : tuple of str
        Lines below the table (what was chosen, notes, how to see more).
    """

    title: str
    header: tuple[str, ...]
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    footer: tuple[str, ...] = ()

    def shown_rows(self, max_rows: int | None) -> tuple[list[tuple[str, ...]], int]:
        """The rows to show (head and tail when there are more than ``max_rows``) and how many
        were left out."""
        rows = list(self.rows)
        if max_rows is None or len(rows) <= max_rows:
            return rows, 0
        head = (max_rows + 1) // 2
        tail = max_rows - head
        return rows[:head] + rows[len(rows) - tail :], len(rows) - max_rows

    def as_text(self, max_rows: int | None = REPR_ROWS, max_footer: int | None = None) -> str:
        """Plain text: title, header lines, the aligned table, footer lines."""
        rows, hidden = self.shown_rows(max_rows)
        cells = [self.columns, *rows]
        widths = [max(len(row[j]) for row in cells) for j in range(len(self.columns))]
        lines = [self.title, *self.header]
        if self.columns:
            for k, row in enumerate(cells):
                lines.append("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
                if hidden and k == (len(rows) + 1) // 2:
                    lines.append(f"... ({hidden} more rows)")
        footer = list(self.footer)
        if max_footer is not None and len(footer) > max_footer:
            footer = [*footer[: max_footer - 1], f"... and {len(footer) - max_footer + 1} more"]
        return "\n".join([*lines, *footer])

    def as_html(self, max_rows: int | None = 60) -> str:
        """An HTML fragment (a captioned table with the header and footer around it) for
        notebooks; every text is escaped."""
        e = html_text.escape
        rows, hidden = self.shown_rows(max_rows)
        head = "".join(f"<th>{e(c)}</th>" for c in self.columns)
        body = []
        for k, row in enumerate(rows):
            if hidden and k == (len(rows) + 1) // 2:
                body.append(
                    f'<tr><td colspan="{len(self.columns)}">... ({hidden} more rows)</td></tr>'
                )
            body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>")
        parts = [
            '<div class="slicewise-result">',
            f"<p><strong>{e(self.title)}</strong></p>",
            *(f'<p style="margin:0">{e(line)}</p>' for line in self.header),
        ]
        if self.columns:
            parts.append(
                '<table style="border-collapse:collapse;text-align:right">'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            )
        parts.extend(f'<p style="margin:0">{e(line)}</p>' for line in self.footer)
        parts.append("</div>")
        return "\n".join(parts)


def cells(values: Sequence[object], digits: int = 3) -> tuple[str, ...]:
    """Format one row: floats to ``digits`` decimals ('nan' and 'inf' as words), the rest as
    text."""
    out = []
    for value in values:
        if isinstance(value, float) or type(value).__name__.startswith("float"):
            number = float(value)  # type: ignore[arg-type]
            out.append(
                f"{number:.{digits}f}"
                if number == number and abs(number) != float("inf")
                else str(number)
            )
        else:
            out.append(str(value))
    return tuple(out)


_LOADER: list[Callable[[], object]] = []
_LOADED: list[bool] = []


def set_loader(loader: Callable[[], object]) -> None:
    """Install the function that registers the renderers (called once, on first use)."""
    _LOADER[:] = [loader]


def _dispatch(generic: Any, result: object, *args: Any, **kwargs: Any) -> Any:
    """Load the renderers once, then call ``generic``'s implementation for ``result``'s type."""
    if not _LOADED and _LOADER:
        _LOADED.append(True)
        _LOADER[0]()
    impl = generic.dispatch(type(result))
    if impl is generic.registry[object]:
        raise TypeError(
            f"slicewise has no {generic.__name__} renderer for {type(result).__name__}."
        )
    return impl(result, *args, **kwargs)


@functools.singledispatch
def table(result: object) -> Table:
    """The result's :class:`Table` (registered per result type by the reports)."""
    return _dispatch(table, result)  # type: ignore[no-any-return]


@functools.singledispatch
def text(result: object) -> str:
    """The result's full text report (``summary()`` / ``str()``)."""
    return _dispatch(text, result)  # type: ignore[no-any-return]


@functools.singledispatch
def html(result: object, path: Any = None, **options: Any) -> str:
    """The result's self-contained HTML report, written to ``path`` when given."""
    return _dispatch(html, result, path, **options)  # type: ignore[no-any-return]


@functools.singledispatch
def plot(result: object, **options: Any) -> Any:
    """Draw the result (matplotlib, imported by the renderer)."""
    return _dispatch(plot, result, **options)


class Displayed:
    """``repr`` (at most :data:`REPR_ROWS` rows and :data:`REPR_FOOTER` footer lines, under 40
    lines) and ``_repr_html_`` from the result's :class:`Table`. Dataclasses that mix it in
    pass ``repr=False``."""

    def __repr__(self) -> str:
        return table(self).as_text(max_rows=REPR_ROWS, max_footer=REPR_FOOTER)

    def _repr_html_(self) -> str:
        return table(self).as_html()
