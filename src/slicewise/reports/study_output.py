"""Files written by ``slicewise study`` and ``slicewise simulate``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from ..studies.summary import StudyResult


def write_study_outputs(
    result: StudyResult, out_dir: str | Path, *, command: str | None = None
) -> list[Path]:
    """Write the tidy per-split records, per-cell summary, aggregate, paper-style tables and plot.

    Files: ``records.csv``, ``summary.csv``, ``aggregate.csv``, ``table.md`` (with the command
    that produced it when given), ``table.tex`` and, with matplotlib, ``re.png``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in (
        ("records.csv", result.records()),
        ("summary.csv", result.summary()),
        ("aggregate.csv", result.aggregate()),
    ):
        path = out / name
        frame.to_csv(path, index=False)
        written.append(path)
    header = f"Command: `{command}`\n\n" if command else ""
    md = out / "table.md"
    md.write_text(header + result.table(fmt="markdown") + "\n")
    tex = out / "table.tex"
    tex.write_text(result.table(fmt="latex") + "\n")
    written += [md, tex]
    written += _plot(result, out)
    return written


def write_gain_outputs(frame: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Write the gain-formula check table (``gain.csv``) and plot (``gain.png``)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "gain.csv"
    frame.to_csv(path, index=False)
    written = [path]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return written
    import matplotlib.pyplot as plt

    from .plot import new_axes
    from .study_plots import plot_gain_check

    fig, axes = new_axes(width=7.0)
    plot_gain_check(frame, ax=axes[0])
    fig.tight_layout()
    png = out / "gain.png"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [*written, png]


def _plot(result: StudyResult, out: Path) -> list[Path]:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return []
    import matplotlib.pyplot as plt

    from .plot import new_axes

    fig, axes = new_axes(width=7.0)
    result.plot_re(ax=axes[0])
    fig.tight_layout()
    png = out / "re.png"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return [png]
