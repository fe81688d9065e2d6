"""Readable text summaries of results, in the spirit of statsmodels' ``summary()``.

What was estimated, by which method and why (in plain words, read from the result's ``params``),
one table row per slice, and every warning. The estimators' own notes are kept, verbatim, under
"Details"; :func:`explain_choice` and :func:`plain_warnings` say the same in a user's words.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..smoothing.objective import BORROWED_WEIGHT, PRECISE_LABELS, PROMISES, TRANSLATION

if TYPE_CHECKING:
    from ..domains.results import DomainResult
    from ..models.profiles import ModelProfiles
    from ..results import ProfileResult
    from ..studies.summary import StudyResult

#: Slices with fewer effective gold labels than this are called sparse.
SPARSE_LABELS = 10.0
WIDTH = 78

#: The smoothing models of :mod:`slicewise.smoothing.area`, in the plain words of the summary.
SMOOTHING_WORDS = {
    "fh": "Fay-Herriot smoothing at the estimated spread between slices, smooth='fh'",
    "pp-s": "Bayesian Fay-Herriot smoothing, smooth='pp-s'",
}
TARGET_WORDS = {
    "pool": "the mean label over the items of this pool in each slice",
    "population": "the expected label E[Y | Z = z] in the population the pool was drawn from",
}


class SummaryText(str):
    """A summary's text; indexing by a key (``summary()["method"]``) reads the result's
    ``to_dict()``, for code written when ``summary()`` returned that dict."""

    data: Mapping[str, Any]

    def __new__(cls, text: str, data: Mapping[str, Any]) -> SummaryText:
        self = super().__new__(cls, text)
        self.data = data
        return self

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self.data[key]
        return str.__getitem__(self, key)


def _fmt(value: Any, digits: int = 3) -> str:
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, float | np.floating):
        return "" if not math.isfinite(float(value)) else f"{float(value):.{digits}f}"
    return str(value)


def method_description(method: str) -> str:
    """The registry's one-line description of a method of either entry point ('' when
    unknown)."""
    from ..methods.registry import REGISTRY

    spec = REGISTRY.get(method)
    return spec.description if spec is not None else ""


def explain_choice(result: ProfileResult) -> list[str]:
    """What the method did and why, in plain words (one sentence per item)."""
    params = result.params
    out: list[str] = []
    chosen = params.get("chosen")
    if result.method == "auto" and isinstance(chosen, str):
        from ..methods.candidates import candidate_words

        ratios = params.get("cv_variance_ratio")
        ratio = ratios.get(chosen) if isinstance(ratios, Mapping) else None
        if chosen == "naive":
            out.append(
                "The default method (auto) kept the gold-only estimate: no way of using the "
                "cheap signals lowered the variance in cross-validation, so they are not used."
            )
        else:
            sentence = f"The default method (auto) combined the gold labels with {candidate_words(chosen)}."
            if isinstance(ratio, float) and ratio > 0:
                sentence += (
                    f" In cross-validation its variance was {ratio:.2f} times that of the "
                    f"gold-only estimate, worth about {1.0 / ratio:.1f} times as many gold labels."
                )
            out.append(sentence)
            out.append(
                "The signals are centered on the whole pool, so even a biased or badly "
                "calibrated signal cannot bias the estimate; it can only fail to help."
            )
    else:
        desc = method_description(result.method)
        out.append(f"Method {result.method}: {desc}" if desc else f"Method {result.method}.")
    if params.get("smoothing") == "fay_herriot":
        smoothed = int(np.sum(np.asarray(params.get("smoothed", []), dtype=bool)))
        words = SMOOTHING_WORDS.get(str(params.get("smoothing_model")), "smoothing")
        if params.get("objective") == "ensemble":
            out.append(
                f"All {smoothed} slices were pulled toward a model fitted across all slices "
                f"({words}), with the model's intervals: least total error, coverage on average "
                "over slices, not slice by slice."
            )
        else:
            out.append(
                f"{smoothed} of {result.size} slices were pulled toward a model fitted across all "
                f"slices ({words}), those with at least {PRECISE_LABELS:g} labels by at most "
                f"{TRANSLATION:g} of their standard errors; every moved slice's interval is "
                "widened so that it still contains the slice's own interval."
            )
    return out


def promise(params: Mapping[str, Any]) -> str:
    """What the intervals promise, in plain words (the objective of the result's smoothing)."""
    smoothed = params.get("smoothing") == "fay_herriot" or "robust_se" in params
    if smoothed and params.get("objective") == "ensemble":
        return PROMISES["ensemble"]
    return PROMISES["slice"]


def plain_warnings(result: ProfileResult) -> list[str]:
    """Warnings a reader should see before trusting individual slices."""
    out: list[str] = []
    names = [_label(v) for v in result.z]
    sparse = [n for n, k in zip(names, result.n_labeled_eff, strict=True) if k < SPARSE_LABELS]
    if sparse:
        out.append(
            f"{len(sparse)} of {result.size} slices have fewer than {SPARSE_LABELS:.0f} effective "
            f"gold labels ({_list(sparse)}); their intervals are wide and rest on few labels."
        )
    no_se = [n for n, s in zip(names, result.se, strict=True) if not math.isfinite(float(s))]
    if no_se:
        out.append(f"No standard error at {_list(no_se)} (too few labels there).")
    if result.borrowed.any():
        count = int(result.borrowed.sum())
        out.append(
            f"{count} of {result.size} slices take more than half of their estimate from "
            "elsewhere (marked 'borrowed'): from a coefficient pooled across the axis, or, for a "
            "smoothed slice, from the other slices (its own direct estimate has shrinkage weight "
            f"below {BORROWED_WEIGHT:g})."
        )
    if result.n_labeled == result.n_pool:
        out.append("Every item is labeled: the estimate is the labeled mean itself.")
    return out


def _label(value: object) -> str:
    if isinstance(value, np.ndarray):
        return ", ".join(_label(v) for v in value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _list(items: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def profile_table(result: ProfileResult) -> pd.DataFrame:
    """The per-slice table shown in summaries and reports (readable column names)."""
    interval = result.ci()
    frame = result.z_frame()
    if list(frame.columns) == ["z"]:
        frame.columns = [", ".join(result.z_names) or "z"]
    frame["estimate"] = result.estimate
    frame["lower"] = interval.low
    frame["upper"] = interval.high
    frame["se"] = result.se
    frame["gold-only"] = result.naive_estimate
    frame["n labeled (eff)"] = result.n_labeled_eff
    frame["R^2"] = result.r2
    frame["gain"] = result.realized_gain
    if result.borrowed.any():
        frame["borrowed"] = result.borrowed
    return frame


#: What the per-domain table's less obvious columns mean (text and HTML reports).
DOMAIN_COLUMNS = (
    "direct: the domain's design-based estimate from its own labels; own weight: the share of "
    "the reported estimate that is that direct estimate (1: not smoothed; the rest is borrowed "
    f"from the other domains through the smoothing model; below {BORROWED_WEIGHT:g} the domain "
    "is marked borrowed)."
)

#: What the per-slice table's less obvious columns mean (text and HTML reports).
SLICE_COLUMNS = (
    "gain = (gold-only se / se)^2: how many gold labels each label is worth at the reported "
    "intervals (below 1 the gold-only interval is the shorter one); R^2: the signals' local fit, "
    "whose asymptotic gain 1 / (1 - (1 - f) R^2) ignores the small-sample factors and floors "
    "that the reported se carries (res.gain)."
)


def _frame_text(frame: pd.DataFrame) -> str:
    shown = frame.copy()
    for col in shown.columns:
        digits = 1 if col.startswith("n ") else 3
        if shown[col].dtype.kind in "fb":
            shown[col] = [_fmt(v, digits) for v in shown[col]]
        else:
            shown[col] = [_label(v) for v in shown[col]]
    return shown.to_string(index=False)


def _block(title: str, lines: Sequence[str]) -> list[str]:
    if not lines:
        return []
    out = [title]
    for line in lines:
        out.append(_wrap("  * ", line))
    return out


def _wrap(prefix: str, text: str) -> str:
    import textwrap

    return textwrap.fill(text, WIDTH, initial_indent=prefix, subsequent_indent=" " * len(prefix))


def _header(title: str, rows: Sequence[tuple[str, str]]) -> list[str]:
    rule = "=" * WIDTH
    out = [rule, title.center(WIDTH).rstrip(), rule]
    key_width = max(len(k) for k, _ in rows)
    for key, value in rows:
        out.append(_wrap(f"{key.ljust(key_width)} : ", value))
    out.append("-" * WIDTH)
    return out


def profile_overview(result: ProfileResult) -> list[tuple[str, str]]:
    """(key, value) lines describing what was estimated."""
    share = result.n_labeled / result.n_pool if result.n_pool else float("nan")
    return [
        ("Estimated", TARGET_WORDS.get(result.target, result.target)),
        ("Profile axis", f"{', '.join(result.z_names)} ({result.kind}), {result.size} slices"),
        ("Gold labels", f"{result.n_labeled} of {result.n_pool} items ({share:.1%})"),
        ("Method", result.method),
        ("Intervals", f"{round(result.level * 100)}% pointwise"),
        ("Promise", promise(result.params)),
    ]


def profile_summary(result: ProfileResult) -> SummaryText:
    """The text of :meth:`ProfileResult.summary`."""
    lines = _header("Profile estimate", profile_overview(result))
    lines += _block("Why this method:", explain_choice(result))
    lines.append("-" * WIDTH)
    lines.append(_frame_text(profile_table(result)))
    lines += textwrap.wrap(SLICE_COLUMNS, WIDTH)
    lines.append("-" * WIDTH)
    lines += _block("Warnings:", plain_warnings(result))
    lines += _block("Details (estimator notes):", list(result.notes))
    return SummaryText("\n".join(lines), result.to_dict())


def domain_table(result: DomainResult) -> pd.DataFrame:
    """Per-domain table shown in summaries and reports."""
    interval = result.ci()
    frame = pd.DataFrame(result._domain_columns())
    frame["estimate"] = result.estimate
    frame["lower"] = interval.low
    frame["upper"] = interval.high
    frame["se"] = result.se
    frame["direct"] = result.direct_estimate
    frame["n labeled"] = result.n_labeled
    frame["n pool"] = result.n_pool
    frame["own weight"] = result.shrinkage
    if result.borrowed.any():
        frame["borrowed"] = result.borrowed
    return frame


def domain_warnings(result: DomainResult) -> list[str]:
    """Plain-word warnings of a domain result."""
    out: list[str] = []
    names = [_label(v) for v in result.domain]
    empty = [n for n, k in zip(names, result.n_labeled, strict=True) if not k > 0]
    if empty:
        out.append(f"No labeled items in {_list(empty)}: no direct estimate there.")
    sparse = [n for n, k in zip(names, result.n_labeled, strict=True) if 0 < k < SPARSE_LABELS]
    if sparse:
        out.append(
            f"{len(sparse)} domains have fewer than {SPARSE_LABELS:.0f} labeled items "
            f"({_list(sparse)}); their intervals are wide."
        )
    if result.borrowed.any():
        out.append(
            f"{int(result.borrowed.sum())} of {result.size} domains take more than half of "
            "their estimate from the other domains (marked 'borrowed': their own direct estimate "
            f"carries less than {BORROWED_WEIGHT:g} of the reported one, column 'own weight')."
        )
    return out


def domain_summary(result: DomainResult) -> SummaryText:
    """The text of :meth:`DomainResult.summary`."""
    rows = [
        ("Estimated", "the mean label in each domain of the pool"),
        ("Domains", f"{', '.join(result.domain_names)}: {result.size}"),
        (
            "Gold labels",
            f"{int(np.nansum(result.n_labeled))} of {int(np.nansum(result.n_pool))} items",
        ),
        ("Method", method_description(result.method) or result.method),
        ("Intervals", f"{round(result.level * 100)}%"),
        ("Promise", promise(result.params)),
    ]
    lines = _header("Domain estimates", rows)
    lines.append(_frame_text(domain_table(result)))
    lines += textwrap.wrap(DOMAIN_COLUMNS, WIDTH)
    lines.append("-" * WIDTH)
    lines += _block("Warnings:", domain_warnings(result))
    lines += _block("Details (estimator notes):", list(result.notes))
    return SummaryText("\n".join(lines), result.to_dict())


def models_summary(result: ModelProfiles) -> SummaryText:
    """The text of :meth:`ModelProfiles.summary`."""
    first = result.profiles[0]
    rows = [
        ("Estimated", TARGET_WORDS.get(first.target, first.target) + ", for each model"),
        ("Models", ", ".join(result.models)),
        ("Profile axis", f"{', '.join(first.z_names)} ({first.kind}), {first.size} slices"),
        (
            "Gold labels",
            "; ".join(
                f"{m}: {p.n_labeled} of {p.n_pool}"
                for m, p in zip(result.models, result.profiles, strict=True)
            ),
        ),
        ("Method", first.method),
        ("Intervals", f"{round(first.level * 100)}% pointwise"),
    ]
    lines = _header("Profiles of several models", rows)
    for model, prof in zip(result.models, result.profiles, strict=True):
        lines.append(f"{model}:")
        lines += _block("  Why this method:", explain_choice(prof))
        lines.append(_frame_text(profile_table(prof)))
        lines += _block("  Warnings:", plain_warnings(prof))
        lines.append("-" * WIDTH)
    notes = list(dict.fromkeys(n for p in result.profiles for n in p.notes))
    lines += _block("Details (estimator notes):", notes)
    return SummaryText("\n".join(lines), result.to_dict())


def study_summary(result: StudyResult) -> str:
    """The text of ``str(study_result)``: relative efficiency per method and budget."""
    cells = ", ".join(c.name for c in result.cells)
    rows = [
        ("Estimated", "how much each method gains over the gold-only estimate on matched splits"),
        ("Cells", cells),
        ("Methods", ", ".join(result.methods)),
        ("Label budgets", ", ".join(str(b) for b in result.budgets)),
        ("Intervals", f"{round(result.level * 100)}% (coverage is checked at this level)"),
    ]
    lines = _header("Relative-efficiency study", rows)
    lines.append(
        _wrap(
            "",
            "RE > 1: the method's mean squared error is that many times smaller than the "
            "gold-only estimate's at the same number of labels.",
        )
    )
    lines.append("-" * WIDTH)
    lines.append(_frame_text(result.summary()))
    return "\n".join(lines)
