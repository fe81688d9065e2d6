"""Pools held in a Spark DataFrame: every pass runs on the executors.

A pass of :mod:`slicewise.sources.scan` is mapped over each partition's Arrow record batches with
``mapInArrow``; each partition returns one small pickled state (sums over the grid, the few
labeled rows), and the driver merges them. Nothing of pool size reaches the driver. ``pyspark`` is
imported only when a Spark pool is given.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .scan import Pass


def is_spark_source(pool: object) -> bool:
    """A ``pyspark.sql.DataFrame`` (classic or Spark Connect), without importing pyspark."""
    if "pyspark" not in sys.modules:
        return False
    return any(
        cls.__module__.startswith("pyspark.sql") and cls.__name__ == "DataFrame"
        for cls in type(pool).__mro__
    )


def _partition_state(pass_: Pass[Any]) -> Any:
    """The function mapped over one partition's batches: yields at most one pickled state."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        state: Any = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            part = pass_.partial(batch)
            state = part if state is None else pass_.merge(state, part)
        if state is not None:
            payload = pa.array([pickle.dumps(state)], type=pa.binary())
            yield pa.RecordBatch.from_arrays([payload], names=["state"])

    return run


@dataclass
class SparkSource:
    """A pool in a Spark DataFrame."""

    frame: Any
    description: str = "(Spark DataFrame)"

    @property
    def columns(self) -> list[str]:
        """Column names of the pool."""
        return list(self.frame.columns)

    def arrow_schema(self) -> Any:
        """The pool's columns as an Arrow schema (no row is read)."""
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.frame.schema)

    def run(self, pass_: Pass[Any]) -> Any:
        """Map the pass over every partition on the executors, merge on the driver."""
        projected = self.frame.select(*pass_.columns)
        rows = projected.mapInArrow(_partition_state(pass_), "state binary").collect()
        state: Any = None
        for row in rows:
            part = pickle.loads(row["state"])
            state = part if state is None else pass_.merge(state, part)
        if state is None:
            raise ValueError(f"The pool {self.description} has no rows.")
        return state


def open_spark(pool: object) -> SparkSource:
    """Wrap a Spark DataFrame."""
    return SparkSource(frame=pool)
