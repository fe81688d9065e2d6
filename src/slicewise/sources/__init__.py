"""Pools that need not fit in memory: Parquet files, folders and globs and DuckDB relations or
queries (scanned by DuckDB as Arrow record batches), and Spark DataFrames (reduced on the
executors), with gold labels joined from a separate table by key.

Every pool-side quantity of the linear methods is a sum over the pool, so a few passes over the
pool (:mod:`slicewise.sources.scan`) give the kernel sums that the in-memory context would
compute, while the labeled items (at most a few hundred thousand) are held in memory
(:mod:`slicewise.sources.context`). ``duckdb`` and ``pyspark`` are imported only when such a pool
is given.
"""

from __future__ import annotations

from .duckdb import is_duckdb_source, is_parquet_path
from .spark import is_spark_source

__all__ = ["is_pool_source", "is_scanned_only"]


def is_pool_source(pool: object) -> bool:
    """Whether ``pool`` is a Parquet path, a DuckDB relation or query, or a Spark DataFrame."""
    return is_parquet_path(pool) or is_duckdb_source(pool) or is_spark_source(pool)


def is_scanned_only(pool: object) -> bool:
    """Whether ``pool`` is always scanned out of core (not a single file, which a method that
    needs the pool in memory reads whole)."""
    import os
    from pathlib import Path

    if isinstance(pool, str | os.PathLike) and Path(pool).is_file():
        return False
    return is_pool_source(pool)
