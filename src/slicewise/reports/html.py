"""Self-contained HTML reports: one file, inline CSS and inline SVG figures, no network.

Each report says what was estimated, shows the profile with its bands and the gold-only overlay,
one table row per slice (labeled and effective counts, R^2, gain), what the method chose and why
in plain words, every warning and estimator note, a data summary and how to reproduce the result.
The page is responsive (viewport meta, fluid figures, tables that scroll sideways on a phone).
"""

from __future__ import annotations

import html
import io
import math
import os
import platform
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..domains.results import DomainResult
    from ..models.profiles import ModelProfiles
    from ..results import ProfileResult
    from ..studies.summary import StudyResult

PathLike = str | os.PathLike[str]

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --warn: #9a6700; --bg: #ffffff; }
* { box-sizing: border-box; }
body { margin: 0; padding: 1rem; color: var(--ink); background: var(--bg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 60rem; margin: 0 auto; }
h1 { font-size: 1.5rem; line-height: 1.25; margin: 0.5rem 0; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 0.5rem; border-bottom: 1px solid var(--line); }
p.lead { color: var(--muted); margin-top: 0; }
figure { margin: 1rem 0; }
figure svg { display: block; width: 100%; height: auto; max-width: 48rem; }
figcaption { color: var(--muted); font-size: 0.9rem; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: 0.9rem; font-variant-numeric: tabular-nums; }
th, td { padding: 0.25rem 0.6rem; border-bottom: 1px solid var(--line); text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; white-space: normal; min-width: 7rem; }
thead th { white-space: normal; vertical-align: bottom; }
table.kv th { text-align: left; color: var(--muted); font-weight: 600; }
table.kv td { text-align: left; white-space: normal; }
ul.warn li { color: var(--warn); }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 0.85rem; }
pre { background: #f6f8fa; padding: 0.75rem; overflow-x: auto; white-space: pre-wrap;
  word-break: break-all; }
footer { margin-top: 2rem; color: var(--muted); font-size: 0.8rem; }
@media (max-width: 36rem) { body { padding: 0.6rem; font-size: 15px; } h1 { font-size: 1.25rem; } }
"""


def esc(value: object) -> str:
    """HTML-escaped text."""
    return html.escape(str(value), quote=True)


def page(title: str, lead: str, sections: Sequence[str]) -> str:
    """A complete HTML document with the report's CSS inlined."""
    from .. import __version__

    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        f'<h1>{esc(title)}</h1>\n<p class="lead">{esc(lead)}</p>\n'
        + "\n".join(s for s in sections if s)
        + f"\n<footer>Made by slicewise {esc(__version__)}. This file is self-contained: it "
        "loads nothing from the network.</footer>\n</main>\n</body>\n</html>\n"
    )


def section(title: str, body: str) -> str:
    return f"<section>\n<h2>{esc(title)}</h2>\n{body}\n</section>"


def bullets(items: Sequence[str], *, warn: bool = False) -> str:
    if not items:
        return "<p>None.</p>"
    cls = ' class="warn"' if warn else ""
    return f"<ul{cls}>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>"


def key_values(rows: Sequence[tuple[str, object]]) -> str:
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows)
    return f'<div class="scroll"><table class="kv">{body}</table></div>'


def table(frame: pd.DataFrame) -> str:
    """A data frame as an HTML table (numbers to 3 decimals, counts to 1, flags as 'yes')."""
    head = "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for col, value in zip(frame.columns, record, strict=True):
            digits = 1 if str(col).startswith("n ") else 3
            cells.append(
                f"<td>{esc(text._fmt(value, digits) if _numeric(value) else text._label(value))}</td>"
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _numeric(value: object) -> bool:
    return isinstance(value, float | np.floating | bool | np.bool_)


def svg_figure(draw: Callable[[Axes], object], *, height: float = 3.6, width: float = 6.4) -> str:
    """Run ``draw(ax)`` on a new figure and return it as inline SVG ('' without matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        return ""
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "slicewise"}):
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
        try:
            draw(ax)
            buffer = io.StringIO()
            fig.savefig(
                buffer,
                format="svg",
                bbox_inches="tight",
                metadata={"Date": None, "Creator": None},
            )
        finally:
            plt.close(fig)
    svg = buffer.getvalue()
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    return svg


def figure(svg: str, caption: str) -> str:
    if not svg:
        return (
            "<p>(Figure skipped: matplotlib is not installed; pip install 'slicewise[plot]'.)</p>"
        )
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"


def reproduce(context: Mapping[str, object] | None, result_seed: object = None) -> str:
    """The 'How to reproduce' section: versions, seed, command."""
    from .. import __version__

    ctx = dict(context or {})
    rows: list[tuple[str, object]] = [("slicewise version", __version__)]
    rows.append(("Python", platform.python_version()))
    rows.append(("numpy / pandas", f"{np.__version__} / {pd.__version__}"))
    seed = ctx.pop("seed", result_seed)
    rows.append(
        ("Seed", "default (0: the same call gives the same result)" if seed is None else seed)
    )
    command = ctx.pop("command", None)
    for key, value in ctx.items():
        rows.append((key, value))
    body = key_values(rows)
    if command:
        body += f"<p>Command:</p><pre><code>{esc(command)}</code></pre>"
    else:
        body += (
            "<p>Made from Python; pass <code>context={'command': ...}</code> to "
            "<code>to_html</code> to record the call.</p>"
        )
    return section("How to reproduce", body)


def write(document: str, path: PathLike | None) -> str:
    if path is not None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(document, encoding="utf-8")
    return document


def _label_words(label: str | None) -> str:
    return f"'{label}'" if label else "the gold label"


def _ctx_rows(context: Mapping[str, object] | None) -> dict[str, object]:
    return dict(context or {})


def profile_html(
    result: ProfileResult,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of a profile (or of a gap between two models, which is a profile)."""
    from .html_worst import worst_section
    from .plot import plot_profile

    axis = ", ".join(result.z_names)
    words = _label_words(label)
    level = round(result.level * 100)
    if result.params.get("estimand") == "gap":
        a, b = result.params.get("model_a"), result.params.get("model_b")
        title = title or f"Gap {a} - {b} in {words} across {axis}"
        lead = (
            f"Estimated difference {a} - {b} in the mean of {words} (> 0: {a} scores higher), "
            f"with {level}% intervals, from {result.n_labeled} items graded for both models."
        )
    else:
        title = title or f"How {words} varies with {axis}"
        lead = (
            f"Estimated {text.TARGET_WORDS.get(result.target, result.target)}, with {level}% "
            f"intervals, from {result.n_labeled} gold labels on {result.n_pool} items and cheap "
            "signals observed on every item."
        )
    svg = svg_figure(
        lambda ax: plot_profile(result, ax=ax, naive=True, ylabel=label),
        height=_profile_height(result),
    )
    warnings = text.plain_warnings(result)
    ctx = _ctx_rows(context)
    sections = [
        section("At a glance", key_values(text.profile_overview(result))),
        figure(
            svg,
            f"Estimate ({result.method}) with its {round(result.level * 100)}% band, and the "
            "gold-only estimate (labels alone) for comparison.",
        ),
        section("What the method chose and why", bullets(text.explain_choice(result))),
        *_design_section(result),
        section("Warnings", bullets(warnings, warn=True)),
        section("Per slice", table(_slice_table(result)) + f"<p>{esc(text.SLICE_COLUMNS)}</p>"),
        worst_section(result),
        section("Data", key_values(_data_rows(result, label, ctx))),
        section("Notes from the estimator", bullets(list(result.notes))),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def _design_section(result: ProfileResult) -> list[str]:
    """The labeling design's saving against uniform labeling
    (:mod:`slicewise.planning.saving`), when the labels had unequal inclusion probabilities."""
    saving = result.params.get("design_saving")
    if not isinstance(saving, dict):
        return []
    level = round(float(saving["level"]) * 100)
    rows: list[tuple[str, object]] = [
        ("Gold labels of this design", f"{saving['labels']:.0f}"),
        ("Uniform labeling would need", f"about {saving['uniform_labels']:.0f}"),
        (
            "Labels saved",
            f"{saving['saved']:+.0%} ({level}% interval {saving['low']:+.0%} to "
            f"{saving['high']:+.0%})",
        ),
    ]
    return [
        section(
            "Labeling design against uniform labeling",
            key_values(rows)
            + "<p>At the worst-slice half-width reached here: the labels uniform labeling "
            "would need for it, estimated from the labeled items' residuals weighted by their "
            "inclusion probabilities.</p>",
        )
    ]


def _profile_height(result: ProfileResult) -> float:
    if result.kind == "categorical":
        return min(max(2.8, 0.3 * result.size + 1.2), 30.0)
    return 3.6


def _slice_table(result: ProfileResult) -> pd.DataFrame:
    frame = text.profile_table(result)
    position = list(frame.columns).index("n labeled (eff)") + 1
    frame.insert(position, "n pool (eff)", result.n_pool_eff)
    return frame


def _data_rows(
    result: ProfileResult, label: str | None, ctx: dict[str, object]
) -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = []
    for key in ("data", "label", "signals"):
        if key in ctx:
            rows.append((key.capitalize(), ctx.pop(key)))
    if label and "label" not in {k.lower() for k, _ in rows}:
        rows.append(("Label", label))
    share = result.n_labeled / result.n_pool if result.n_pool else math.nan
    rows += [
        ("Items in the pool", result.n_pool),
        ("Gold-labeled items", f"{result.n_labeled} ({share:.1%})"),
        ("Profile axis", f"{', '.join(result.z_names)} ({result.kind})"),
        ("Slices (grid points)", result.size),
    ]
    bandwidth = result.params.get("bandwidth")
    if bandwidth:
        values = ", ".join(f"{float(b):.3g}" for b in np.ravel(np.asarray(bandwidth, dtype=float)))
        rows.append(("Bandwidth", values))
    rows.append(("Effective gold labels per slice", _range(result.n_labeled_eff)))
    return rows


def _range(values: np.ndarray) -> str:
    finite = values[np.isfinite(values)]
    if not finite.size:
        return "none"
    return f"{finite.min():.1f} to {finite.max():.1f} (median {np.median(finite):.1f})"


def domain_html(
    result: DomainResult,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of domain estimates."""
    from .plot_domains import plot_domains

    names = ", ".join(result.domain_names)
    title = title or f"{_label_words(label).capitalize()} by {names}"
    lead = (
        f"Estimated the mean of {_label_words(label)} in each of {result.size} domains "
        f"({result.method}, {round(result.level * 100)}% intervals)."
    )
    svg = svg_figure(
        lambda ax: plot_domains(result, ax=ax, xlabel=label),
        height=min(max(2.8, 0.3 * result.size + 1.2), 30.0),
    )
    ctx = _ctx_rows(context)
    data = [(k.capitalize(), ctx.pop(k)) for k in ("data", "label", "signals") if k in ctx]
    data += [
        ("Items in the pool", int(np.nansum(result.n_pool))),
        ("Gold-labeled items", int(np.nansum(result.n_labeled))),
        ("Domains", result.size),
    ]
    sections = [
        figure(svg, f"{result.method} estimates with {round(result.level * 100)}% intervals."),
        section("Method", bullets([text.method_description(result.method) or result.method])),
        section("Promise", bullets([text.promise(result.params)])),
        section("Warnings", bullets(text.domain_warnings(result), warn=True)),
        section(
            "Per domain", table(text.domain_table(result)) + f"<p>{esc(text.DOMAIN_COLUMNS)}</p>"
        ),
        section("Data", key_values(data)),
        section("Notes from the estimator", bullets(list(result.notes))),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def models_html(
    result: ModelProfiles,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of several models' profiles."""
    from .plot_models import plot_model_profiles

    first = result.profiles[0]
    axis = ", ".join(first.z_names)
    title = title or f"How {_label_words(label)} varies with {axis}, per model"
    lead = (
        f"{len(result.models)} models on one grid of {first.size} slices, "
        f"{round(first.level * 100)}% pointwise intervals ({first.method})."
    )
    svg = svg_figure(
        lambda ax: plot_model_profiles(result, ax=ax),
        height=_profile_height(first),
    )
    ctx = _ctx_rows(context)
    sections = [figure(svg, "Each model's estimate with its band.")]
    for model, prof in zip(result.models, result.profiles, strict=True):
        body = (
            bullets(text.explain_choice(prof))
            + bullets(text.plain_warnings(prof), warn=True)
            + table(_slice_table(prof))
        )
        sections.append(section(f"Model {model}", body))
    notes = list(dict.fromkeys(n for p in result.profiles for n in p.notes))
    data = [(k.capitalize(), ctx.pop(k)) for k in ("data", "label", "signals") if k in ctx]
    data += [
        (f"{m}: gold labels", f"{p.n_labeled} of {p.n_pool}")
        for m, p in zip(result.models, result.profiles, strict=True)
    ]
    sections += [
        section("Data", key_values(data)),
        section("Notes from the estimator", bullets(notes)),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def study_html(
    result: StudyResult,
    path: PathLike | None = None,
    *,
    title: str | None = None,
    context: Mapping[str, object] | None = None,
) -> str:
    """The HTML report of a relative-efficiency study."""
    from .study_plots import plot_re

    title = title or "How much is a gold label worth here?"
    lead = (
        "Relative efficiency (RE) of each method against the gold-only estimate on matched label "
        "splits: RE = 2 means the gold-only estimate would need about twice the labels for the "
        "same mean squared error."
    )
    svg = svg_figure(lambda ax: plot_re(result, ax=ax))
    summary = result.summary().rename(
        columns={"re": "RE", "re_low": "RE low", "re_high": "RE high", "mean_mse": "mean MSE"}
    )
    ctx = _ctx_rows(context)
    warnings = []
    low = summary[summary["coverage"] < result.level - 0.05]
    for row in low.itertuples(index=False):
        warnings.append(
            f"{row.method} at {row.budget} labels ({row.cell}): interval coverage "
            f"{row.coverage:.2f}, below the nominal {result.level:.2f}."
        )
    sections = [
        figure(svg, "RE with its Monte-Carlo interval, by label budget."),
        section("Warnings", bullets(warnings, warn=True)),
        section("Per method and budget", table(summary)),
        reproduce(ctx),
    ]
    return write(page(title, lead, sections), path)


def external_references(document: str) -> list[str]:
    """Every reference in ``document`` that a browser would fetch from outside the file.

    Looks at ``src``, ``href``, ``xlink:href``, ``srcset``, ``action`` and ``poster``
    attributes, CSS ``url(...)`` and ``@import``; data URIs and ``#fragment`` links are
    internal.
    """
    found: list[str] = []
    for match in re.finditer(
        r"""(?:\s(?:src|href|xlink:href|srcset|action|poster)\s*=\s*["']?)([^"'\s>]+)""",
        document,
        flags=re.I,
    ):
        ref = match.group(1)
        if not ref.startswith(("#", "data:")):
            found.append(ref)
    for match in re.finditer(r"url\(\s*['\"]?([^)'\"]+)", document, flags=re.I):
        if not match.group(1).startswith(("#", "data:")):
            found.append(match.group(1))
    found += re.findall(r"@import\s+[^;]+", document, flags=re.I)
    return found
