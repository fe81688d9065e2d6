"""Topics of a pool on disk: the text streamed through DuckDB, never held whole.

Two scans of the text column, as Arrow record batches of
:data:`~slicewise.sources.duckdb.BATCH_ROWS` rows:

1. every text is checked (:func:`~slicewise.topics.text.text_values`, rows numbered in scan
   order) and the texts at ``sample_size`` positions drawn at random (without replacement) are
   kept;
2. the topics are fitted on that sample (vocabulary, SVD, centroids, names:
   :func:`~slicewise.topics.model.fit_topic_model`) and every batch is assigned (not needed
   when the sample is the whole pool: the fit gives every text its topic).

Memory: the sample's texts and vectors, one batch of texts, and one topic code per item (one
byte each up to 127 topics). The codes come back in the scan's order (DuckDB keeps the files'
order), aligned with a profile of the same pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from .api import FUNC, fit_sample, topic_series
from .options import TopicOptions
from .text import check_text_name, text_values


def _batches(source: Any, column: str) -> Iterator[list[object]]:
    from ..sources.duckdb import BATCH_ROWS
    from ..sources.duckdb_sql import quote

    query = source.relation.project(quote(column))
    to_reader = getattr(query, "to_arrow_reader", None) or query.fetch_record_batch
    for batch in to_reader(BATCH_ROWS):
        if batch.num_rows:
            yield batch.column(0).to_pylist()


def stream_topics(
    pool: object,
    text: str,
    options: TopicOptions,
    rng: np.random.Generator,
    *,
    progress: bool = False,
) -> pd.Series:
    """:func:`slicewise.topics` of a Parquet path, DuckDB relation or (connection, query)."""
    from ..sources.duckdb import open_duckdb, progress_bar
    from .model import fit_topic_model

    source = open_duckdb(pool)
    column = check_text_name(text, source.columns, func=FUNC)
    count: Any = source.relation.aggregate("count(*)").fetchall()
    n = int(count[0][0])
    if n < 2:
        raise ValueError(f"{FUNC} needs at least two texts to form topics. Got {n}.")
    sample = fit_sample(n, options.sample_size, rng)
    wanted = np.arange(n) if sample is None else sample
    kept: list[str] = []
    start = 0
    bar = progress_bar(progress, n, "checking the texts of the pool")
    for values in _batches(source, column):
        texts = text_values(values, column=column, func=FUNC, offset=start)
        lo, hi = np.searchsorted(wanted, [start, start + len(texts)])
        kept.extend(texts[i - start] for i in wanted[lo:hi])
        start += len(texts)
        if bar is not None:
            bar.update(len(texts))
    if bar is not None:
        bar.close()
    model = fit_topic_model(kept, options, pool_size=n)
    codes = np.zeros(n, dtype=np.int8 if len(model.names) < 128 else np.int16)
    if sample is None:  # every text was fitted: its code is known
        codes[:] = model.fit_codes
        return topic_series(codes, pd.RangeIndex(n), model, n, model.fit_blank, sampled=n)
    blank = 0
    start = 0
    bar = progress_bar(progress, n, "assigning topics")
    for values in _batches(source, column):
        texts = [str(v) for v in values]
        found, missing = model.assign(texts)
        codes[start : start + len(texts)] = found
        blank += missing
        start += len(texts)
        if bar is not None:
            bar.update(len(texts))
    if bar is not None:
        bar.close()
    return topic_series(codes, pd.RangeIndex(n), model, n, blank, sampled=len(kept))
