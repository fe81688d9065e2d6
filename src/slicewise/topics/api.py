"""The public entry point :func:`topics`: slices of a pool from its text alone."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_rng
from .options import TOPIC_DEFAULTS, TopicOptions
from .text import check_text_name, text_values

FUNC = "topics"


def topics(
    table: pd.DataFrame | str | os.PathLike[str] | Any,
    text: str = "prompt",
    k: int | None = TOPIC_DEFAULTS.k,
    method: str = TOPIC_DEFAULTS.method,
    rng: int | np.random.Generator | None = None,
    *,
    budget: int | None = TOPIC_DEFAULTS.budget,
    min_labels: int = TOPIC_DEFAULTS.min_labels,
    sample_size: int = TOPIC_DEFAULTS.sample_size,
    progress: bool = False,
) -> pd.Series:
    """Topics of a pool's texts: a categorical profile axis found from the text alone.

    Parameters
    ----------
    table : DataFrame, path, or DuckDB relation
        One row per pool item. A CSV, JSON or JSON Lines path is read whole; a Parquet file,
        folder or glob, a DuckDB relation or a (connection, query) pair is streamed: the topics
        are fitted on a random sample and every text is assigned batch by batch
        (:mod:`slicewise.topics.stream`).
    text : str, default 'prompt'
        The text column. Every value must be a non-empty string.
    k : int, optional
        Number of topics before small ones are merged; default: chosen by the silhouette rule
        (Notes).
    method : {'tfidf', 'embedding'}, default 'tfidf'
        TF-IDF reduced by a truncated SVD, or WordLlama's static embeddings
        (``pip install 'slicewise[embed]'``; the model ships in the wheel, nothing is
        downloaded). TF-IDF won on the measured targets (``docs/results/topics.md``).
    rng : int or numpy Generator, optional
        Draws the fit sample when the pool holds more than ``sample_size`` texts. The fit itself
        is deterministic, so on a smaller pool the topics do not depend on it. None: a fixed
        seed.
    budget : int, optional
        Gold labels you plan to collect. Every topic is made large enough to expect
        ``min_labels`` of them under uniform random sampling (small topics are merged).
    min_labels : int, default 10
    sample_size : int, default 100,000
        Texts the vocabulary, the SVD and the topics are fitted on.
    progress : bool, default False
        A progress bar while a pool on disk is assigned.

    Returns
    -------
    pandas.Series
        Categorical, aligned with ``table.index`` (a pool on disk: 0..M-1 in scan order), named
        ``'topic'``; categories are the topics' names (their top c-TF-IDF terms), largest topic
        first. ``series.attrs['notes']`` says how k was chosen, what was merged and any
        fallback; ``series.attrs['topics']`` holds the method, k and the merging rule.

    Notes
    -----
    *Label-free by construction*: only the text column is read, never a label, so a profile
    over the topics keeps valid intervals after the discovery (the slices are fixed before any
    label is looked at).

    *Representation*: :mod:`slicewise.topics.embed`. *Topics*: Ward-started spherical k-means,
    deterministic given the fitted texts (:mod:`slicewise.topics.cluster`). *k* (when None): the
    k in 2..k_max whose merged topics have the largest mean cosine silhouette, the smallest
    within 0.005 of the largest. *Merging*: a topic must hold at least
    ceil(min_labels M / budget) of the M items (5% of them without a budget); while the smallest
    is below, it is merged into the topic of nearest centroid. *Names*: c-TF-IDF
    (:mod:`slicewise.topics.names`). Texts with no term of the fitted vocabulary (TF-IDF) are
    given the largest topic, and the notes say how many.

    Examples
    --------
    >>> import slicewise as sw
    >>> items = sw.load_demo(instructions=True)
    >>> topic = sw.topics(items, text="instruction", budget=80)
    >>> topic.index.equals(items.index), topic.dtype.name
    (True, 'category')
    """
    options = TopicOptions(
        k=k,
        method=method,
        budget=budget,
        min_labels=min_labels,
        sample_size=sample_size,
        func=FUNC,
    )
    generator = check_rng(rng, func=FUNC, reproducible=True)
    from ..sources import is_pool_source

    if is_pool_source(table):
        from .stream import stream_topics

        return stream_topics(table, text, options, generator, progress=progress)
    frame = _read(table)
    column = check_text_name(text, [str(c) for c in frame.columns], func=FUNC)
    texts = text_values(frame[column], column=column, func=FUNC)
    return in_memory_topics(texts, frame.index, options, generator)


def _read(table: object) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, str | os.PathLike):
        from ..data.files import read_table

        return read_table(table)
    raise TypeError(
        f"The 'table' parameter of {FUNC} must be a DataFrame, a table file path or a DuckDB "
        f"relation. Got {type(table).__name__} instead."
    )


def in_memory_topics(
    texts: list[str], index: pd.Index, options: TopicOptions, rng: np.random.Generator
) -> pd.Series:
    """Fit on (a sample of) ``texts`` and assign every one of them."""
    from .model import fit_topic_model

    n = len(texts)
    if n < 2:
        raise ValueError(f"{FUNC} needs at least two texts to form topics. Got {n}.")
    sample = fit_sample(n, options.sample_size, rng)
    fitted = texts if sample is None else [texts[i] for i in sample]
    model = fit_topic_model(fitted, options, pool_size=n)
    codes, blank = (model.fit_codes, model.fit_blank) if sample is None else model.assign(texts)
    return topic_series(codes, index, model, n, blank, sampled=len(fitted))


def fit_sample(n: int, size: int, rng: np.random.Generator) -> Any:
    """Sorted positions of a simple random sample of ``size`` of ``n`` (None: all of them)."""
    if n <= size:
        return None
    return np.sort(rng.choice(n, size=size, replace=False))


def topic_series(
    codes: Any, index: pd.Index, model: Any, n: int, blank: int, *, sampled: int
) -> pd.Series:
    """The categorical Series of :func:`topics`, with its notes."""
    notes = list(model.notes)
    if sampled < n:
        notes.insert(
            0,
            f"Vocabulary, SVD and topics fitted on a random sample of {sampled} of the {n} "
            "texts; every text was then assigned to its nearest topic.",
        )
    if blank:
        notes.append(
            f"{blank} text(s) share no term with the fitted vocabulary; they were given the "
            f"largest topic, {model.names[0]!r}."
        )
    series = pd.Series(
        pd.Categorical.from_codes(np.asarray(codes, dtype=np.int64), categories=model.names),
        index=index,
        name="topic",
    )
    series.attrs["notes"] = tuple(notes)
    series.attrs["topics"] = {
        "method": model.method,
        "k": len(model.names),
        "k_asked": model.k_asked,
        "min_size": model.min_size,
        "fit_sample": sampled,
    }
    return series
