"""``sw.profile`` on a pool source: gold labels joined by key, and out-of-core pools.

:func:`profile_source` takes the arguments of :func:`slicewise.api.profile`. A DataFrame (or a
CSV / JSON Lines file) with ``gold=`` is joined in memory by
:func:`slicewise.io.join.add_grades` and profiled as usual. A Parquet folder or glob, a DuckDB
relation or query, or a Spark DataFrame is scanned out of core (so is a single Parquet file when
the method's pool side is a sum and no ``id`` is given; otherwise it is read into memory as
before): a statistics pass, the exact percentiles of a continuous Z, and one pass of kernel sums;
the labeled rows are the only rows held in memory. ``auto``, ``lace_shrunk`` and
``lace_learned`` read the signals' sums at the nuisance scales they try, and their learned
predictions (fitted on the labeled rows within folds) and the smoothing's synthetic covariate
are applied to the pool in one more pass, or two when the smoothing needs its covariate before
the fold models are fitted; on a continuous profile the kernel sums wait for the first method
that reads them, so the learned predictions are summed in the same pass as the signals
(:mod:`.fused_pass`)
(:meth:`~slicewise.sources.context.StreamedContext.learned_sums`; on a text profile column of
a DuckDB or Spark pool the pass is one SQL aggregate, :mod:`.learned_sql`). The labeled rows are put in
the canonical order of the in-memory table, so folds drawn on them are the same whatever the
order of the scan.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray, Kind, Target
from .._validation import check_choice, column_list
from ..io.join import add_grades
from ..methods.base import LabeledSet
from ..results import ProfileResult
from .duckdb import is_duckdb_source, is_parquet_path, open_duckdb
from .gold import read_gold
from .pool_scan import PoolScan
from .spark import is_spark_source, open_spark

FUNC = "profile"
#: Methods whose pool side is a sum over the pool, computed by the scan.
STREAMED_METHODS = (
    "naive",
    "lace",
    "global_cv",
    "per_signal_cv",
    "lace_shrunk",
    "lace_learned",
    "auto",
)


def _in_memory(table: object, method: str, id: str | None) -> bool:
    """Whether the pool is read into memory (a frame, a CSV file, a Parquet file for a method
    whose pool side is not a sum) rather than scanned."""
    if is_spark_source(table) or is_duckdb_source(table):
        return False
    if isinstance(table, str | os.PathLike):
        if not is_parquet_path(table):
            return True
        if Path(table).is_file():
            return method not in STREAMED_METHODS or id is not None or not _has_duckdb()
        return False
    return True


def _has_duckdb() -> bool:
    """Whether duckdb imports: without it a single Parquet file is read whole by pyarrow (a
    required dependency), so that it works, and a corrupt file is reported as such."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        return False
    return True


def profile_source(
    table: Any,
    *,
    z: str | Sequence[str],
    signals: str | Sequence[str] | None = None,
    label: str,
    kind: Kind | None = None,
    method: str = "auto",
    grid: Any = None,
    bandwidth: Any = None,
    nuisance_scale: float = 1.0,
    ridge: float = 0.3,
    primary: str | None = None,
    coef: FloatArray | Callable[[Any], Any] | None = None,
    C: float = 1.0,
    strata_count: int = 5,
    ppci_multiplier: float = 1.0,
    ppi_bandwidth_scale: float = 1.0,
    shrinkage: float | None = None,
    learner: str = "logistic",
    folds: int = 5,
    smooth: str = "auto",
    objective: str = "slice",
    uncertainty: str | Sequence[str] | None = None,
    level: float = 0.95,
    target: Target = "pool",
    id: str | None = None,
    missing: str = "impute",
    inclusion: str | None = None,
    rng: int | np.random.Generator | None = None,
    gold: pd.DataFrame | str | os.PathLike[str] | None = None,
    on: str | Sequence[str] | None = None,
    progress: bool = False,
) -> ProfileResult | pd.DataFrame:
    """:func:`slicewise.api.profile` on a pool source (see the module notes).

    Returns the result of an out-of-core pool, or the table (gold labels joined) that
    :func:`slicewise.api.profile` profiles in memory: this layer does not call the entry point.
    """
    from ..methods.options import MethodOptions
    from ..methods.run import Problem, run

    if on is not None and gold is None:
        raise ValueError(
            f"The 'on' parameter of {FUNC} joins a `gold` table to the pool; pass gold= too "
            f"(got on={on!r} without gold)."
        )
    if _in_memory(table, method, id):
        from ..data.files import read_table

        frame = read_table(table) if isinstance(table, str | os.PathLike) else table
        if gold is not None:
            keys = column_list(on, name="on", func=FUNC) if on is not None else None
            if not keys:
                read_gold(gold, on=on, label=label)  # raises the message about `on`
            grades = read_table(gold) if isinstance(gold, str | os.PathLike) else gold
            frame = add_grades(frame, grades, on=keys or [], label=label)
        return frame

    method = check_choice(method, tuple(_registered()), name="method", func=FUNC)
    if uncertainty is not None:
        raise ValueError(
            f"The 'uncertainty' parameter of {FUNC} needs the pool in memory (its products with "
            "the signals are made from the table's columns); an out-of-core pool does not take "
            "it for now. Add the products as signal columns of the pool, or read it into a "
            "pandas DataFrame."
        )
    if method not in STREAMED_METHODS:
        raise ValueError(
            f"Method {method!r} needs the whole pool in memory, which an out-of-core pool (a "
            "Parquet file, folder or glob, a DuckDB relation or query, a Spark DataFrame) does "
            f"not give for now; pass method= one of {list(STREAMED_METHODS)}, or read the pool "
            "into a pandas DataFrame."
        )
    if smooth in ("fh", "pp-s"):
        raise ValueError(
            f"The 'smooth' parameter of {FUNC} is {smooth!r}, which needs the pool in memory; use "
            "smooth='auto' or 'none' with an out-of-core pool."
        )
    if inclusion is not None:
        raise ValueError(
            f"The 'inclusion' parameter of {FUNC} (design weights) needs the pool in memory for "
            "now; read the pool into a pandas DataFrame."
        )
    if id is not None:
        raise ValueError(
            f"The 'id' parameter of {FUNC} is checked in memory only; with an out-of-core pool "
            "join gold labels by key with gold= and on= (keys are checked there)."
        )
    target = check_choice(target, ("pool", "population"), name="target", func=FUNC)
    from .._validation import check_level

    level = check_level(level, func=FUNC)
    options = MethodOptions.from_arguments(locals(), func=FUNC)
    source = open_spark(table) if is_spark_source(table) else open_duckdb(table, progress=progress)
    scan = PoolScan.start(source, z=z, signals=signals, label=label, kind=kind, gold=gold, on=on)
    ctx = scan.context(
        grid=grid, bandwidth=bandwidth, primary=primary, method=method, options=options
    )
    labeled = LabeledSet(index=np.arange(ctx.table.n_pool), y=np.asarray(ctx.table.label))
    problem = Problem(ctx, labeled, notes=tuple(scan.notes(method)))
    # the user called profile, which called this function, which calls run
    return run(problem, method, options, level=level, target=target, stacklevel=4)


def _registered() -> tuple[str, ...]:
    from ..methods.registry import METHODS

    return tuple(METHODS)
