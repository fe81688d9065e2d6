"""Markdown reports and plots of the real-data studies (used by :mod:`research.study_real`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from slicewise.reports.markdown import markdown_table
from slicewise.reports.study_output import write_study_outputs
from slicewise.studies.summary import CellStudy, StudyResult

from . import realdata
from .sensitivity import sparse_summary
from .stamp import stamp, stamp_file

if TYPE_CHECKING:
    from .study_real import FamilyRun

#: Cells shown in a family's profile-panel figure.
PANEL_CELLS = 4


def subset_methods(result: StudyResult, methods: Sequence[str]) -> StudyResult:
    """The same study restricted to ``methods`` (naive must be first)."""
    cells = []
    for cell in result.cells:
        index = [cell.methods.index(m) for m in methods]
        cells.append(
            CellStudy(
                name=cell.name,
                methods=tuple(methods),
                budgets=cell.budgets,
                z=cell.z,
                truth=cell.truth,
                estimates=cell.estimates[index],
                variances=cell.variances[index],
                pool_n_eff=cell.pool_n_eff,
                target=cell.target,
                n_pool=cell.n_pool,
                params=cell.params,
            )
        )
    return StudyResult(cells=tuple(cells), level=result.level)


def plot_family_panels(result: StudyResult, path: Path, *, budget: int | None = None) -> Path:
    """Truth, naive and LACE on split 1 of the first cells of a family, at the smallest budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from slicewise.reports.study_plots import plot_panels

    cells = result.cells[:PANEL_CELLS]
    n = budget if budget is not None else result.budgets[0]
    cols = min(2, len(cells))
    rows = int(np.ceil(len(cells) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6.0 * cols, 3.6 * rows), squeeze=False)
    for ax, cell in zip(axes.ravel(), cells, strict=False):
        b = cell.budgets.index(n)
        curves = {"naive": cell.estimates[0, b, 0]}
        for name in ("lace", "global_cv"):
            if name in cell.methods:
                curves[name] = cell.estimates[cell.methods.index(name), b, 0]
        truth = cell.truth if cell.truth.ndim == 1 else cell.truth[0]
        plot_panels(cell.z, truth, curves, title=f"{cell.name} (n = {n}, split 1)", ax=ax)
    for ax in axes.ravel()[len(cells) :]:
        ax.set_visible(False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_family_outputs(
    result: StudyResult, family: realdata.Family, out: Path, command: str
) -> list[Path]:
    """The engine's outputs plus the profile panels of one family."""
    written = write_study_outputs(result, out, command=command)
    for table in (out / "table.md", out / "table.tex"):
        if table in written:
            stamp_file(table, command)
    records = out / "records.csv"
    if records in written:  # per-split MSEs: compressed, they are large for big studies
        pd.read_csv(records).to_csv(out / "records.csv.gz", index=False)
        records.unlink()
        written[written.index(records)] = out / "records.csv.gz"
    written.append(plot_family_panels(result, out / "panels.png"))
    if family.kind != "categorical":
        frame = sparse_summary(result, k=5)
        path = out / "sparse_summary.csv"
        frame.to_csv(path, index=False)
        written.append(path)
    return written


def _fmt(value: float, digits: int = 2) -> str:
    return "-" if not np.isfinite(value) else f"{value:.{digits}f}"


def cells_table(data: realdata.RealData, runs: Sequence[FamilyRun]) -> str:
    """One row per cell: family, M, K, Z, kind, G, primary signal."""
    rows = []
    for run in runs:
        for spec, cell in zip(run.family.cells, run.result.cells, strict=True):
            rows.append(
                {
                    "cell": cell.name,
                    "family": run.family.name,
                    "M": cell.n_pool,
                    "K": len(spec.signals),
                    "Z": spec.z if isinstance(spec.z, str) else ",".join(spec.z),
                    "kind": run.family.kind,
                    "G": cell.z.size,
                    "primary": spec.primary or "-",
                }
            )
    return markdown_table(pd.DataFrame(rows))


def per_cell_tables(result: StudyResult) -> str:
    """Per budget: cells x methods RE; bold where the 95% MC interval lies below 1."""
    summary = result.summary()
    methods = [m for m in result.methods if m != "naive"]
    blocks = []
    for budget in result.budgets:
        rows = []
        part = summary[summary["budget"] == budget]
        for cell in result.cells:
            row: dict[str, Any] = {"cell": cell.name}
            for method in methods:
                hit = part[(part["cell"] == cell.name) & (part["method"] == method)].iloc[0]
                text = _fmt(float(hit["re"]))
                row[method] = f"**{text}**" if hit["re_high"] < 1 else text
            rows.append(row)
        blocks.append(f"n = {budget}:\n\n" + markdown_table(pd.DataFrame(rows)))
    return "\n\n".join(blocks)


def below_naive(result: StudyResult) -> pd.DataFrame:
    """Cells, methods and budgets whose RE interval lies entirely below 1."""
    summary = result.summary()
    hits = summary[(summary["method"] != "naive") & (summary["re_high"] < 1)]
    return hits[["cell", "method", "budget", "re", "re_low", "re_high"]].reset_index(drop=True)


def below_naive_text(result: StudyResult) -> str:
    """Counts per method and the list of cells below naive beyond the MC interval."""
    hits = below_naive(result)
    total = len(result.cells) * len(result.budgets)
    if hits.empty:
        return "No method falls below naive beyond its 95% Monte-Carlo interval in any cell."
    lines = []
    for method in [m for m in result.methods if m in set(hits["method"])]:
        rows = hits[hits["method"] == method]
        per_cell = rows.groupby("cell", sort=False)["budget"].apply(
            lambda b: ", ".join(str(v) for v in b)
        )
        items = "; ".join(f"{cell} (n = {budgets})" for cell, budgets in per_cell.items())
        lines.append(f"- **{method}**: {len(rows)}/{total} cell-budgets: {items}")
    return "\n".join(lines)


def bias_coverage(result: StudyResult) -> str:
    """Per method and budget: mean RMS bias over cells and interval coverage (mean, min)."""
    summary = result.summary()
    rows = []
    for method in result.methods:
        row: dict[str, Any] = {"method": method}
        for budget in result.budgets:
            part = summary[(summary["method"] == method) & (summary["budget"] == budget)]
            bias = float(part["bias_rms"].mean())
            cover = part["coverage"].to_numpy(dtype=float)
            cov_text = (
                "-"
                if not np.isfinite(cover).any()
                else f"{np.nanmean(cover):.3f} (min {np.nanmin(cover):.3f})"
            )
            row[f"n={budget} RMS bias"] = _fmt(bias, 4)
            row[f"n={budget} coverage"] = cov_text
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def sparsity(result: StudyResult, family: realdata.Family) -> str:
    """Expected labels in the sparsest neighbourhoods at each budget (no gold outcomes used)."""
    cell = result.cells[0]
    sizes = sorted({len(c.signals) for c in family.cells})
    k = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
    if family.kind == "categorical":
        order = np.argsort(cell.pool_n_eff, kind="stable")
        rows = []
        for g in order:
            size = float(cell.pool_n_eff[g])
            row: dict[str, Any] = {"group": cell.z[g], "pool items": round(size)}
            for n in result.budgets:
                row[f"E[labels], n={n}"] = f"{n * size / cell.n_pool:.1f}"
            rows.append(row)
        return (
            f"Pool size of every group of `{family.cells[0].name}` and the expected number of "
            f"labels it receives (K = {k} signals per local coefficient):\n\n"
            + markdown_table(pd.DataFrame(rows))
        )
    rows = []
    for c in result.cells:
        low = float(np.min(c.pool_n_eff))
        row = {"cell": c.name, "min pool n_eff": f"{low:.0f}"}
        for n in result.budgets:
            row[f"E[labeled n_eff], n={n}"] = f"{n * low / c.n_pool:.1f}"
        rows.append(row)
    return (
        "Pool effective sample size at the sparsest grid point and the labeled effective size it "
        f"implies (n x n_eff / M), K = {k}:\n\n" + markdown_table(pd.DataFrame(rows))
    )


def pointwise_table(result: StudyResult, methods: Sequence[str] = ("lace", "global_cv")) -> str:
    """Per grid point (sparsest first): geometric mean over cells of the pointwise RE.

    Pointwise RE(z) = mean over splits of the naive squared error at z / the method's. Points
    where either mean is zero or not finite in a cell (e.g. a constant group) are left out of
    that point's mean.
    """
    first = result.cells[0]
    order = np.argsort(first.pool_n_eff, kind="stable")
    rows = []
    for g in order:
        row: dict[str, Any] = {"z": first.z[g], "pool n_eff": f"{first.pool_n_eff[g]:.0f}"}
        for method in methods:
            if method not in result.methods:
                continue
            m = result.methods.index(method)
            for b, budget in enumerate(result.budgets):
                logs = []
                for cell in result.cells:
                    truth = cell.truth if cell.truth.ndim == 1 else cell.truth[0]
                    err = (cell.estimates[:, b, :, g] - truth[g]) ** 2
                    ok = np.isfinite(err[0]) & np.isfinite(err[m])
                    if ok.sum() < 2:
                        continue
                    a, c = err[0, ok].mean(), err[m, ok].mean()
                    if a > 0 and c > 0:
                        logs.append(np.log(a / c))
                row[f"{method} n={budget}"] = _fmt(float(np.exp(np.mean(logs)))) if logs else "-"
        rows.append(row)
    return markdown_table(pd.DataFrame(rows))


def sparse_text(result: StudyResult) -> str:
    """Sparse-region summary (five lowest-n_eff grid points) of an ordered family."""
    frame = sparse_summary(result, k=5)
    frame = frame[frame["method"] != "naive"]
    rows = [
        {
            "method": r["method"],
            "n": r["budget"],
            "median RE": _fmt(r["median_re"]),
            "min RE": _fmt(r["min_re"]),
            "geo-mean RE [95% CI]": f"{r['geo_re']:.2f} [{r['geo_low']:.2f}, {r['geo_high']:.2f}]",
            "cells RE < 1": f"{r['below_one']}/{r['cells']}",
            "below beyond CI": f"{r['below_ci']}/{r['cells']}",
        }
        for r in frame.to_dict("records")
    ]
    return markdown_table(pd.DataFrame(rows))


def code_versions(runs: Sequence[FamilyRun]) -> str:
    """Which commit produced each method's numbers ('+': with uncommitted changes)."""

    def grouped(run: FamilyRun) -> dict[str, list[str]]:
        by_version: dict[str, list[str]] = {}
        for method in run.result.methods:
            by_version.setdefault(run.versions.get(method, "unknown"), []).append(method)
        return by_version

    versions = {v for run in runs for v in grouped(run)}
    if len(versions) == 1:
        return f"Code version (git commit) of every method: `{versions.pop()}`."
    lines = ["Code version (git commit; '+': with uncommitted changes) per family and method:", ""]
    for run in runs:
        parts = [f"`{v}`: {', '.join(m)}" for v, m in grouped(run).items()]
        lines.append(f"- {run.family.name}: " + "; ".join(parts))
    return "\n".join(lines)


def _rel(path: Path, start: Path) -> str:
    return os.path.relpath(path, start).replace(os.sep, "/")


def write_report(
    data: realdata.RealData,
    runs: Sequence[FamilyRun],
    path: Path,
    *,
    out: Path,
    command: str,
    commentary: str | None = None,
) -> Path:
    """Write the markdown report of a dataset's study."""
    base = path.parent
    reps = sorted({r.reps for r in runs})
    seconds = sum(r.seconds for r in runs)
    parts = [
        f"# Matched-split study: {data.name}",
        "",
        data.description,
        "",
        stamp(command),
        f"Matched splits per cell: {', '.join(map(str, reps))}; budgets "
        f"{', '.join(map(str, runs[0].result.budgets))}; target: the realized full-pool profile "
        "(pool target); RE = mean MSE(naive) / mean MSE(method) over the same splits, with 95% "
        "Monte-Carlo intervals from paired split-level influence values; aggregates are "
        "geometric means over cells, and 'Overall' treats the nested budgets of a cell jointly. "
        f"Wall time of the studies: {seconds / 60:.1f} min.",
        "",
        code_versions(runs),
        "",
        "## Data decisions",
        "",
        *[f"- {note}" for note in data.notes],
        "",
        "## Cells",
        "",
        cells_table(data, runs),
        "",
    ]
    if commentary:
        parts += ["## Commentary", "", commentary.strip(), ""]
    if len(runs) > 1:
        common = [m for m in runs[0].result.methods if all(m in r.result.methods for r in runs)]
        combined = StudyResult.concat([subset_methods(r.result, common) for r in runs])
        parts += [
            f"## All {len(combined.cells)} cells (methods feasible on every family)",
            "",
            combined.table(),
            "",
        ]
    for run in runs:
        family, result = run.family, run.result
        folder = out / family.name
        parts += [
            f"## Family `{family.name}`: Z = {family.description}",
            "",
            f"{len(result.cells)} cell(s), {run.reps} matched splits each; "
            f"wall time {run.seconds / 60:.1f} min. Files: `{_rel(folder, base)}/`.",
            "",
            "### Geometric-mean RE [95% MC CI]",
            "",
            result.table(),
            "",
            f"![RE by budget]({_rel(folder / 're.png', base)})",
            "",
            "### Per-cell RE (bold: below naive beyond the 95% MC interval)",
            "",
            per_cell_tables(result),
            "",
            "### Where methods fall below naive (RE interval entirely below 1)",
            "",
            below_naive_text(result),
            "",
            "### Bias and coverage (mean over cells; coverage of nominal 95% intervals)",
            "",
            bias_coverage(result),
            "",
            "### Sparsity",
            "",
            sparsity(result, family),
            "",
        ]
        if family.kind == "categorical":
            parts += [
                "### Pointwise RE by group (geometric mean over cells; smallest groups first)",
                "",
                pointwise_table(result),
                "",
            ]
        if family.kind != "categorical":
            parts += [
                "### Sparse region (five grid points with the lowest pool n_eff)",
                "",
                sparse_text(result),
                "",
            ]
        parts += [
            "### Profile panels (truth, naive, LACE, global CV; one split)",
            "",
            f"![profile panels]({_rel(folder / 'panels.png', base)})",
            "",
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts))
    return path
