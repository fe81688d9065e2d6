"""Pools held in a Spark DataFrame: every pass runs on the executors.

A pass of :mod:`slicewise.sources.scan` is mapped over each partition's Arrow record batches with
``mapInArrow``; each partition returns one small pickled state (sums over the grid, the few
labeled rows), and the driver merges them. Nothing of pool size reaches the driver. The sums of
the logistic models' predictions on a text profile column are one Spark SQL aggregate instead
(:mod:`.learned_sql`). ``pyspark`` is imported only when a Spark pool is given.

**The executors' Python.** The passes run slicewise's own code in Spark's Python workers, which
need slicewise and its dependencies (numpy, pandas, pyarrow, scipy, scikit-learn) on the
driver's Python version. Before the first pass (:func:`prepare_executors`): in local mode, when
neither ``PYSPARK_PYTHON`` nor ``spark.pyspark.python`` names the workers' interpreter, they
use the driver's (Spark's default, ``python3`` on the PATH, is usually not the virtualenv that
has slicewise); otherwise the package's own files are shipped to the executors
(``SparkContext.addPyFile`` of a zip of the installed package), so only the dependencies must
be there. Where a worker still cannot import something, the pass fails with an
:class:`ImportError` that says what the executors need, instead of Spark's
``PythonException``.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
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
        prepare_executors(self.frame)
        projected = self.frame.select(*pass_.columns)
        try:
            rows = projected.mapInArrow(_partition_state(pass_), "state binary").collect()
        except Exception as error:
            missing = _missing_module(error)
            if missing is None:
                raise
            raise ImportError(_executors_message(self.frame, missing)) from None
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


def prepare_executors(frame: Any) -> None:
    """Make slicewise importable in the Spark workers of ``frame``'s session (module notes).

    Local mode without ``PYSPARK_PYTHON`` or ``spark.pyspark.python``: the workers run the
    driver's interpreter. Otherwise a zip of the installed package is added to the context's
    Python path once. Spark Connect sessions (no SparkContext on the driver) are left as they
    are: their executors need slicewise installed.
    """
    try:
        context = frame.sparkSession.sparkContext
    except Exception:  # Spark Connect: no SparkContext here
        return
    chosen = os.environ.get("PYSPARK_PYTHON") or context.getConf().get("spark.pyspark.python")
    if str(context.master).startswith("local") and not chosen:
        context.pythonExec = sys.executable
        return
    shipped = Path(_package_zip()).name
    if shipped not in getattr(context, "_python_includes", []):
        context.addPyFile(_package_zip())


def _package_zip() -> str:
    """A zip of the installed slicewise package (its .py files and data), made once per
    process in a temporary folder."""
    folder = Path(tempfile.gettempdir()) / f"slicewise-spark-{os.getpid()}"
    target = folder / "slicewise.zip"
    if target.is_file():
        return str(target)
    folder.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parents[1]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path("slicewise") / path.relative_to(root))
    return str(target)


def _missing_module(error: BaseException) -> str | None:
    """The module a Python worker could not import, from Spark's error text, or None."""
    text = str(error)
    marker = "No module named "
    if marker not in text:
        return None
    return text.split(marker, 1)[1].split()[0].strip("'\"")


def _executors_message(frame: Any, missing: str) -> str:
    try:
        context = frame.sparkSession.sparkContext
        where = f"master {context.master!r}, worker Python {context.pythonExec!r}"
    except Exception:  # Spark Connect
        where = "a Spark Connect session"
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return (
        f"The Spark executors' Python cannot import {missing!r} ({where}). slicewise runs its "
        f"passes in the executors' Python workers, which need Python {version} (the driver's) "
        "with numpy, pandas, pyarrow, scipy and scikit-learn; slicewise itself is shipped to "
        "them. Set PYSPARK_PYTHON (or spark.pyspark.python) to an interpreter that has these "
        f"packages on every executor (here the driver's is {sys.executable!r}), or ship an "
        "environment with spark.archives (a packed virtualenv or conda environment)."
    )


def open_spark(pool: object) -> SparkSource:
    """Wrap a Spark DataFrame."""
    return SparkSource(frame=pool)
