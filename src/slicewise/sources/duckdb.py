"""Pools read by DuckDB: Parquet files, folders and globs (hive partitions included), a DuckDB
relation, or a SQL query on a DuckDB connection.

Each pass of :mod:`slicewise.sources.scan` reads only the columns it needs, as a stream of Arrow
record batches of :data:`BATCH_ROWS` rows that DuckDB produces from the files; memory is bounded
by the batch size whatever the pool size. The kernel sums of a categorical profile (counts, sums
and cross-product sums of the standardised signals per level) are one SQL ``GROUP BY`` instead,
which DuckDB runs on all its threads: for a text profile column, the grouped aggregate of the
statistics pass (:class:`~.duckdb_sql.LevelSums`), otherwise :func:`~.duckdb_sql.category_sums`;
so are the sums of the logistic models' predictions on a text profile column
(:func:`~.duckdb_sql.learned_level_sums`); the SQL is in :mod:`slicewise.sources.duckdb_sql`.
``duckdb`` is imported when a source is opened.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._typing import FloatArray
from .duckdb_percentiles import sql_percentiles
from .duckdb_sql import (
    LevelSums,
    category_sums,
    learned_level_sums,
    quote,
    sql_stats,
    to_arrow,
)
from .kernel_passes import ColumnSumsPass, MomentsPass, ProfileMomentsPass
from .scan import Pass, StatsPass

#: Rows per Arrow record batch.
BATCH_ROWS = 1 << 17

GLOB_CHARS = ("*", "?", "[")


def is_duckdb_source(pool: object) -> bool:
    """A DuckDB relation, or a (DuckDB connection, SQL text) pair."""
    if "duckdb" in type(pool).__module__ and type(pool).__name__ == "DuckDBPyRelation":
        return True
    return (
        isinstance(pool, tuple)
        and len(pool) == 2
        and type(pool[0]).__name__ == "DuckDBPyConnection"
        and isinstance(pool[1], str)
    )


def is_parquet_path(pool: object) -> bool:
    """A Parquet file, a folder (of Parquet files, hive-partitioned or not) or a glob."""
    if not isinstance(pool, str | os.PathLike):
        return False
    text = os.fspath(pool)
    path = Path(text)
    if any(c in text for c in GLOB_CHARS) or path.is_dir():
        return True
    return path.suffix.lower() in (".parquet", ".pq")


@dataclass
class DuckDBSource:
    """A pool scanned by DuckDB. Build with :func:`open_duckdb`."""

    relation: Any
    description: str
    progress: bool = False
    total: int | None = None
    connection: Any = field(default=None, repr=False)
    level_sums: LevelSums | None = field(default=None, repr=False)

    @property
    def columns(self) -> list[str]:
        """Column names of the pool."""
        return list(self.relation.columns)

    def arrow_schema(self) -> Any:
        """The pool's columns as an Arrow schema (no row is read)."""
        return to_arrow(self.relation.limit(0)).schema

    def percentiles(
        self,
        column: str,
        q: Sequence[float],
        *,
        n: int,
        lo: float,
        hi: float,
        squares: ProfileMomentsPass | None = None,
    ) -> tuple[FloatArray, Any]:
        """``np.percentile`` of a numeric column at ``q``, and the state of ``squares`` (the
        squared standardised column's moments) in the same scan, by SQL aggregates
        (:func:`~.duckdb_percentiles.sql_percentiles`). At 1e8 rows (continuous ``auto``) the
        record-batch histogram and collection passes took 6.2 and 2.4 s wall."""
        bar = progress_bar(self.progress, self.total, f"percentiles of {self.description}")
        found = sql_percentiles(self.relation, quote, column, q, n=n, lo=lo, hi=hi, squares=squares)
        if bar is not None:
            bar.update(self.total or 0)
            bar.close()
        return found

    def run(self, pass_: Pass[Any]) -> Any:
        """Run a pass over the pool: map every record batch, merge the partial states (the
        categorical kernel sums: one SQL aggregate)."""
        if isinstance(pass_, StatsPass):
            bar = progress_bar(self.progress, self.total, f"{_stage(pass_)} {self.description}")
            found = sql_stats(self.relation, pass_, self.connection)  # the bar jumps to its end
            if bar is not None:
                bar.update(self.total or 0)
                bar.close()
            if found is not None:
                stats, self.level_sums = found
                return stats
        if isinstance(pass_, MomentsPass) and pass_.locality.kind == "categorical":
            sums = None if self.level_sums is None else self.level_sums.kernel_sums(pass_)
            if sums is not None:  # taken in the statistics scan
                return sums
            bar = progress_bar(self.progress, self.total, f"{_stage(pass_)} {self.description}")
            sums = category_sums(self.relation, pass_)  # one query: the bar jumps to its end
            if bar is not None:
                bar.update(self.total or 0)
                bar.close()
            if sums is not None:
                return sums
        if isinstance(pass_, ColumnSumsPass):
            bar = progress_bar(self.progress, self.total, f"{_stage(pass_)} {self.description}")
            found_sums = learned_level_sums(self.relation, pass_)  # one query
            if bar is not None:
                bar.update(self.total or 0)
                bar.close()
            if found_sums is not None:
                return found_sums
        query = self.relation.project(", ".join(quote(c) for c in pass_.columns))
        to_reader = getattr(query, "to_arrow_reader", None) or query.fetch_record_batch
        reader = to_reader(BATCH_ROWS)
        bar = progress_bar(self.progress, self.total, f"{_stage(pass_)} {self.description}")
        state: Any = None
        try:
            for rows, part in map_batches(pass_, reader):
                state = part if state is None else pass_.merge(state, part)
                if bar is not None:
                    bar.update(rows)
        finally:
            if bar is not None:
                bar.close()
        if state is None:
            raise ValueError(f"The pool {self.description} has no rows.")
        return state


#: Record batches mapped at once by :func:`map_batches` (one per core, at most two).
MAP_THREADS = max(1, min(2, os.cpu_count() or 1))


def map_batches(pass_: Pass[Any], reader: Any) -> Iterator[tuple[int, Any]]:
    """(rows, ``pass_.partial(batch)``) for every non-empty record batch of ``reader``, in the
    reader's order, mapped by :data:`MAP_THREADS` threads.

    A batch's map is numpy on 131,072 rows (kernel blocks, BLAS products, sorts), which
    releases the GIL, so two batches map on two cores. The partial states come back in the
    batches' order, so the caller merges them in the order one thread would; at most
    ``MAP_THREADS + 1`` batches are held at a time. At 1e7 rows (continuous Z, auto) the call
    took 11.2-13.1 s against 15.2-15.5 s with one thread; two profiles of the same pool differ
    by up to 2e-15 either way (DuckDB's own parallel scan and aggregates already made two
    one-thread runs differ by 2e-16). BLAS runs on one
    thread throughout (:func:`~slicewise._threads.one_blas_thread`, process-wide), so the
    threads do not each start BLAS threads of their own.
    """
    from .._threads import one_blas_thread

    with one_blas_thread(), ThreadPoolExecutor(MAP_THREADS) as executor:
        pending: deque[tuple[int, Future[Any]]] = deque()
        for batch in reader:
            if batch.num_rows == 0:
                continue
            pending.append((batch.num_rows, executor.submit(pass_.partial, batch)))
            if len(pending) > MAP_THREADS:
                rows, future = pending.popleft()
                yield rows, future.result()
        while pending:
            rows, future = pending.popleft()
            yield rows, future.result()


#: What each pass is, for the progress bar.
STAGES = {
    "StatsPass": "statistics of",
    "HistogramPass": "percentiles of",
    "CollectPass": "percentiles of",
    "MomentsPass": "kernel sums of",
    "ColumnSumsPass": "predictions over",
    "ProfileMomentsPass": "profile moments of",
}


def _stage(pass_: Pass[Any]) -> str:
    return STAGES.get(type(pass_).__name__, "scanning")


def progress_bar(enabled: bool, total: int | None, description: str) -> Any:
    """A tqdm bar over rows, or None when not ``enabled`` or the progress extra is missing."""
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # the progress extra is not installed: scan silently
        return None
    return tqdm(total=total, unit="rows", unit_scale=True, desc=description)


def _files(path: str) -> str | list[str]:
    if any(c in path for c in GLOB_CHARS):
        return path
    if Path(path).is_dir():
        return str(Path(path) / "**" / "*.parquet")
    if not Path(path).is_file():
        raise FileNotFoundError(f"Pool file '{path}' does not exist.")
    return path


def open_duckdb(pool: object, *, progress: bool = False) -> DuckDBSource:
    """Open a Parquet path (file, folder or glob), DuckDB relation or (connection, SQL) pair."""
    try:
        import duckdb
    except ImportError as error:  # pragma: no cover - the extra is part of the dev install
        raise ImportError(
            "Reading a Parquet folder, glob or DuckDB pool needs duckdb: pip install "
            "'slicewise[duckdb]'."
        ) from error
    connection: Any = None
    relation: Any
    if isinstance(pool, str | os.PathLike):
        text = os.fspath(pool)
        connection = duckdb.connect()
        files: Sequence[str] | str = _files(text)
        try:
            relation = connection.read_parquet(files, hive_partitioning=True)
        except duckdb.Error as error:
            raise ValueError(f"Cannot read the Parquet pool '{text}': {error}") from None
        description = f"'{text}'"
    elif isinstance(pool, tuple):
        connection, sql = pool
        relation = connection.sql(sql)
        if relation is None:
            raise ValueError(
                "The 'table' parameter of profile got a (connection, query) pair whose query "
                f"returns no rows to read: {sql!r}; pass a SELECT query."
            )
        description = "(DuckDB query)"
    else:
        relation = pool
        description = "(DuckDB relation)"
    source = DuckDBSource(
        relation=relation, description=description, progress=progress, connection=connection
    )
    if progress:
        count: Any = relation.aggregate("count(*)").fetchall()
        source.total = int(count[0][0])
    return source
