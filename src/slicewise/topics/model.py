"""A fitted topic model: a text representation, topic centroids and names.

:func:`fit_topic_model` fits on a sample of texts (the whole table when it is small) and
:meth:`TopicModel.assign` maps any batch of texts to topic codes, so a pool on disk is assigned
batch by batch (:mod:`slicewise.topics.stream`) with the topics an in-memory table of the same
sample would get.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray
from .cluster import MAX_TOPICS, Ward, choose_k, fit_topics, min_topic_size, nearest
from .embed import Representation, fit_representation
from .names import topic_names
from .options import TopicOptions


@dataclass(frozen=True, eq=False)
class TopicModel:
    """Topics fitted on a sample of texts.

    Attributes
    ----------
    representation : Representation
        The fitted map from texts to unit vectors.
    centroids : ndarray of shape (k, d)
        Unit centroids, largest topic (on the fit sample) first.
    names : tuple of str
        c-TF-IDF names, in the order of the centroids.
    method : str
    k_asked : int or None
    min_size : int
        Items each topic must hold in the pool (the merging rule).
    notes : tuple of str
    fit_codes : ndarray of int, shape (n,)
        Topic codes of the fitted texts (what :meth:`assign` gives them).
    fit_blank : int
        Fitted texts with no known term (given topic 0).
    """

    representation: Representation
    centroids: FloatArray
    names: tuple[str, ...]
    method: str
    k_asked: int | None
    min_size: int
    notes: tuple[str, ...]
    fit_codes: IntArray
    fit_blank: int

    def vectors(self, texts: list[str]) -> FloatArray:
        """Unit vectors of ``texts`` (zero rows for texts with no known term)."""
        return self.representation.transform(texts)

    def assign(self, texts: list[str]) -> tuple[IntArray, int]:
        """Topic codes of ``texts``, and how many had no known term (given topic 0, the
        largest)."""
        vectors = self.vectors(texts)
        blank = ~np.any(vectors != 0.0, axis=1)
        codes = nearest(vectors, self.centroids)
        codes[blank] = 0
        return codes, int(blank.sum())


def fit_topic_model(texts: list[str], options: TopicOptions, *, pool_size: int) -> TopicModel:
    """Fit topics on ``texts`` (a sample of a pool of ``pool_size`` items, or all of them).

    Raises ValueError when the budget leaves room for fewer than two topics, or ``k`` exceeds
    the number of texts.
    """
    n = len(texts)
    if options.k is not None and options.k > n:
        raise ValueError(
            f"The 'k' parameter of {_FUNC} must be at most the number of texts ({n}). Got "
            f"{options.k} instead."
        )
    min_size = min_topic_size(pool_size, options.budget, options.min_labels)
    k_max = min(MAX_TOPICS, pool_size // min_size)
    rule = (
        f"every topic must expect at least {options.min_labels} of the {options.budget} labels "
        f"of the budget under uniform sampling, so hold at least {min_size} of the "
        f"{pool_size} items"
        if options.budget is not None
        else f"without a budget, every topic must hold at least 5% of the items ({min_size} of "
        f"{pool_size}); give budget= to size topics for your labels"
    )
    if k_max < 2:
        raise ValueError(
            f"Topics cannot be formed: {rule}, which leaves room for fewer than two topics. "
            "Plan more labels ('budget') or ask fewer per topic ('min_labels')."
        )
    fitted = fit_representation(options.method, texts)
    known = np.any(fitted.vectors != 0.0, axis=1)
    fit_vectors = fitted.vectors[known]
    min_count = max(1, int(np.ceil(min_size * n / pool_size)))
    notes = []
    if options.k is None:
        choice = choose_k(fit_vectors, k_max, min_count)
        centroids, start = choice.centroids, choice.k
        notes.append(
            f"k = {choice.k} has the largest mean silhouette (cosine) among k = 2..{k_max} "
            f"({', '.join(f'{k}: {s:.3f}' for k, s in choice.silhouettes.items())}), the "
            "smallest k within 0.005 of the largest kept."
        )
    else:
        centroids, start = (
            fit_topics(fit_vectors, Ward.build(fit_vectors), options.k, min_count),
            options.k,
        )
    codes = nearest(fit_vectors, centroids)
    counts = np.bincount(codes, minlength=centroids.shape[0])
    order = np.argsort(-counts, kind="stable")
    centroids = centroids[order]
    if centroids.shape[0] < start:
        notes.append(
            f"{start - centroids.shape[0]} small topic(s) merged into their nearest: {rule}."
        )
    else:
        notes.append(f"No topic was merged: {rule}.")
    codes = np.argsort(order)[codes]
    all_codes = np.zeros(n, dtype=np.int64)
    all_codes[known] = codes
    names = topic_names(fitted.words, all_codes, centroids.shape[0])
    return TopicModel(
        representation=fitted.representation,
        centroids=centroids,
        names=names,
        method=options.method,
        k_asked=options.k,
        min_size=min_size,
        notes=tuple(notes),
        fit_codes=all_codes,
        fit_blank=int(n - known.sum()),
    )


_FUNC = "topics"
