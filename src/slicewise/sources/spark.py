"""Pools held in a Spark DataFrame: every pass runs on the executors.

A pass of :mod:`slicewise.sources.scan` is mapped over each partition's Arrow record batches with
``mapInArrow``; each partition returns one small pickled state (sums over the grid, the few
labeled rows), and the driver merges them. Nothing of pool size reaches the driver. The sums of
the logistic models' predictions on a text profile column are one Spark SQL aggregate instead
(:mod:`.learned_sql`). ``pyspark`` is imported only when a Spark pool is given.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Iterator, Sequence
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
        """Map the pass over every partition on the executors, merge on the driver (the
        learned pass of a categorical profile: one Spark SQL aggregate, :mod:`.learned_sql`)."""
        from .kernel_passes import ColumnSumsPass

        if isinstance(pass_, ColumnSumsPass):
            found = self._learned_sums(pass_)
            if found is not None:
                return found
        projected = self.frame.select(*pass_.columns)
        rows = projected.mapInArrow(_partition_state(pass_), "state binary").collect()
        state: Any = None
        for row in rows:
            part = pickle.loads(row["state"])
            state = part if state is None else pass_.merge(state, part)
        if state is None:
            raise ValueError(f"The pool {self.description} has no rows.")
        return state

    def _learned_sums(self, pass_: Any) -> Any:
        """:func:`.learned_sql.learned_query` on a temporary view of the frame, or None when
        the pass cannot be written in SQL."""
        from .learned_sql import Dialect, learned_query, level_state

        name = f"slicewise_pool_{id(self):x}"
        dialect = Dialect(quote=_quote, text=_text, values=_values)
        sql = learned_query(pass_, dialect, name)
        if sql is None:
            return None
        session = self.frame.sparkSession
        self.frame.createOrReplaceTempView(name)
        try:
            rows = session.sql(sql).collect()
        finally:
            session.catalog.dropTempView(name)
        return level_state(pass_, [tuple(row) for row in rows])


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _text(value: str) -> str | None:
    """A Spark SQL text literal, or None for text with a quote or a backslash (whose escapes
    depend on the session's settings)."""
    return None if "'" in value or "\\" in value else f"'{value}'"


def _values(rows: str, names: Sequence[str]) -> str:
    return f"(VALUES {rows}) AS models({', '.join(names)})"


def open_spark(pool: object) -> SparkSource:
    """Wrap a Spark DataFrame."""
    return SparkSource(frame=pool)
