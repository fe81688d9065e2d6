"""GitHub markdown tables of data frames (no optional dependency such as tabulate)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def markdown_table(frame: pd.DataFrame, digits: int | None = None) -> str:
    """A GitHub markdown table of ``frame``, one row per frame row (the index is not written).

    Parameters
    ----------
    frame : pandas.DataFrame
    digits : int, optional
        Decimals of float cells; ``None`` writes every cell with ``str``.

    Returns
    -------
    str
        Header, separator and body lines; a ``|`` inside a cell is escaped.

    Example
    -------
    >>> print(markdown_table(pd.DataFrame({"method": ["lace"], "re": [2.345]}), digits=2))
    | method | re |
    |---|---|
    | lace | 2.35 |
    """

    def cell(value: object) -> str:
        if digits is not None and isinstance(value, float | np.floating):
            return f"{value:.{digits}f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(str(c).replace("|", "\\|") for c in frame.columns) + " |"]
    lines.append("|" + "---|" * frame.shape[1])
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)
