"""Topics from unit vectors: Ward-started spherical k-means, small topics merged, k chosen by
silhouette.

**Fit.** For a number of topics k, Ward's hierarchical clustering of at most :data:`WARD_ITEMS`
evenly spaced vectors of the fit sample gives k starting centroids, and spherical k-means
(assign each vector to the centroid of largest cosine, re-average, rescale to unit length)
refines them on the whole fit sample until no assignment changes. Every step is
deterministic, so the topics depend on the fitted texts alone.

**Small topics are merged.** A topic must expect at least ``min_labels`` gold labels when
``budget`` labels are drawn uniformly from the pool of M items: it must hold at least
ceil(min_labels M / budget) items (without a budget, :data:`MIN_SHARE` of the items). While the
smallest topic is below that size, it is merged into the topic whose centroid is nearest (largest
cosine), the merged centroid being the size-weighted mean, and k-means is refined again from the
merged centroids.

**Fitted on a selection, then settled.** Ward's start, the k-means and the merging run on at most
:data:`SELECT_ITEMS` evenly spaced vectors of the fit sample (the size a topic must hold scaled
to them); when the fit sample is larger, spherical k-means then refines those centroids on all
of it, and a topic left below the size is merged as above. On a fit sample of at most
:data:`SELECT_ITEMS` texts the selection is all of it.

**k.** When not given, k is the one among 2, ..., k_max (k_max = min(:data:`MAX_TOPICS`,
M / min_size)) whose merged topics on the selection have the largest mean silhouette (cosine
distance, on at most :data:`SILHOUETTE_ITEMS` evenly spaced vectors of the selection, their
distances computed once); the smallest k within :data:`SILHOUETTE_TOLERANCE` of the largest is
kept, so a tie is not decided by the last bits of a float. Those topics are then settled on the
whole fit sample.

References
----------
Rousseeuw, P. J. (1987). Silhouettes: a graphical aid to the interpretation and validation of
cluster analysis. *Journal of Computational and Applied Mathematics* 20, 53-65.
Dhillon, I. S. and Modha, D. S. (2001). Concept decompositions for large sparse text data using
clustering. *Machine Learning* 42, 143-175 (spherical k-means).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray, IntArray

#: Most topics the silhouette rule considers.
MAX_TOPICS = 20
#: Vectors Ward's clustering starts the centroids from (evenly spaced over the fit sample).
WARD_ITEMS = 2_000
#: Vectors the silhouette is computed on.
SILHOUETTE_ITEMS = 2_000
#: Smallest share of the pool a topic holds when no budget is given.
MIN_SHARE = 0.05
#: Silhouettes within this of the largest count as ties (the smallest k wins).
SILHOUETTE_TOLERANCE = 0.005
#: Spherical k-means iterations at most.
MAX_ITER = 50
#: Vectors (evenly spaced over the fit sample) topics are first fitted on, for every candidate k;
#: the chosen topics are then settled on the whole fit sample.
SELECT_ITEMS = 5_000


def spaced(n: int, m: int) -> IntArray:
    """At most ``m`` evenly spaced positions among ``n``."""
    if n <= m:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))


def nearest(vectors: FloatArray, centroids: FloatArray) -> IntArray:
    """Each vector's centroid of largest cosine (the first on a tie)."""
    out: IntArray = np.argmax(vectors @ centroids.T, axis=1)
    return out


def _means(vectors: FloatArray, labels: IntArray, k: int) -> tuple[FloatArray, IntArray]:
    from scipy.sparse import csr_matrix

    counts = np.bincount(labels, minlength=k)
    onehot = csr_matrix((np.ones(labels.size), (labels, np.arange(labels.size))), (k, labels.size))
    sums = np.asarray(onehot @ vectors)
    norm = np.linalg.norm(sums, axis=1, keepdims=True)
    return np.divide(sums, norm, out=np.zeros_like(sums), where=norm > 0), counts


def refine(vectors: FloatArray, centroids: FloatArray) -> FloatArray:
    """Spherical k-means from ``centroids`` until no assignment changes; empty topics dropped."""
    labels = nearest(vectors, centroids)
    for _ in range(MAX_ITER):
        centroids, counts = _means(vectors, labels, centroids.shape[0])
        centroids = centroids[counts > 0]
        new = nearest(vectors, centroids)
        if np.array_equal(new, labels):
            break
        labels = new
    return centroids


def merge_small(vectors: FloatArray, centroids: FloatArray, min_count: int) -> FloatArray:
    """Merge the smallest topic into its nearest while it holds fewer than ``min_count`` vectors
    (and more than one topic is left), refining after each merge."""
    while centroids.shape[0] > 1:
        counts = np.bincount(nearest(vectors, centroids), minlength=centroids.shape[0])
        small = int(np.argmin(counts))
        if counts[small] >= min_count:
            break
        cosine = centroids @ centroids[small]
        cosine[small] = -np.inf
        into = int(np.argmax(cosine))
        merged = counts[into] * centroids[into] + counts[small] * centroids[small]
        norm = float(np.linalg.norm(merged))
        centroids = centroids.copy()
        centroids[into] = merged / norm if norm > 0 else centroids[into]
        centroids = refine(vectors, np.delete(centroids, small, axis=0))
    return centroids


@dataclass(frozen=True)
class Ward:
    """Ward's tree of the evenly spaced vectors, cut at any k."""

    vectors: FloatArray
    tree: FloatArray

    @classmethod
    def build(cls, vectors: FloatArray) -> Ward:
        from scipy.cluster.hierarchy import linkage

        sub = vectors[spaced(vectors.shape[0], WARD_ITEMS)]
        return cls(vectors=sub, tree=linkage(sub, method="ward"))

    def centroids(self, k: int) -> FloatArray:
        from scipy.cluster.hierarchy import fcluster

        labels = fcluster(self.tree, k, criterion="maxclust").astype(np.int64) - 1
        means, counts = _means(self.vectors, labels, int(labels.max()) + 1)
        return means[counts > 0]


def fit_k(vectors: FloatArray, ward: Ward, k: int, min_count: int) -> FloatArray:
    """Centroids of k topics (fewer after merging), refined on ``vectors``."""
    return merge_small(vectors, refine(vectors, ward.centroids(k)), min_count)


@dataclass(frozen=True)
class Selection:
    """The at most :data:`SELECT_ITEMS` evenly spaced vectors topics are first fitted on, and the
    merging size scaled to them (``whole``: they are all the vectors)."""

    vectors: FloatArray
    min_count: int
    whole: bool

    @classmethod
    def of(cls, vectors: FloatArray, min_count: int) -> Selection:
        n = vectors.shape[0]
        chosen = vectors[spaced(n, SELECT_ITEMS)]
        scaled = max(1, math.ceil(min_count * chosen.shape[0] / n))
        return cls(vectors=chosen, min_count=scaled, whole=chosen.shape[0] == n)

    def settle(self, vectors: FloatArray, centroids: FloatArray, min_count: int) -> FloatArray:
        """Topics fitted on the selection, refined on all ``vectors`` and merged again to
        ``min_count`` (unchanged when the selection is all of them)."""
        if self.whole:
            return centroids
        return merge_small(vectors, refine(vectors, centroids), min_count)


def fit_topics(vectors: FloatArray, ward: Ward, k: int, min_count: int) -> FloatArray:
    """k topics (fewer after merging): fitted and merged on the selection, then settled on all
    ``vectors`` (the module notes)."""
    selection = Selection.of(vectors, min_count)
    return selection.settle(
        vectors, fit_k(selection.vectors, ward, k, selection.min_count), min_count
    )


def cosine_silhouette(distances: FloatArray, labels: IntArray) -> float:
    """Mean silhouette of ``labels`` from a matrix of distances between the labeled vectors.

    With a_i the mean distance from item i to the other items of its topic and b_i the smallest
    mean distance to the items of another topic, s_i = (b_i - a_i) / max(a_i, b_i), and 0 for
    an item alone in its topic (Rousseeuw 1987); scikit-learn's ``silhouette_score`` with the
    distances precomputed once for every k.
    """
    n = labels.size
    rows = np.arange(n)
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    onehot = np.zeros((n, k))
    onehot[rows, labels] = 1.0
    sums = distances @ onehot
    size = counts[labels]
    own = sums[rows, labels] / np.maximum(size - 1.0, 1.0)
    means = np.divide(sums, counts, out=np.full_like(sums, np.inf), where=counts > 0)
    means[rows, labels] = np.inf
    other = means.min(axis=1)
    scale = np.maximum(own, other)
    score = np.divide(other - own, scale, out=np.zeros(n), where=(size > 1) & (scale > 0))
    return float(score.mean())


def min_topic_size(pool_size: int, budget: int | None, min_labels: int) -> int:
    """Items a topic must hold in a pool of ``pool_size`` (the merging rule of the notes)."""
    if budget is None:
        return max(1, math.ceil(MIN_SHARE * pool_size))
    return max(1, math.ceil(min_labels * pool_size / budget))


@dataclass(frozen=True)
class Choice:
    """Centroids of the chosen topics and how k was found."""

    centroids: FloatArray
    k: int
    silhouettes: dict[int, float]


def choose_k(vectors: FloatArray, k_max: int, min_count: int) -> Choice:
    """The silhouette rule of the module notes over k = 2, ..., k_max."""
    from sklearn.metrics.pairwise import cosine_distances

    ward = Ward.build(vectors)
    selection = Selection.of(vectors, min_count)
    sub = selection.vectors[spaced(selection.vectors.shape[0], SILHOUETTE_ITEMS)]
    distances = np.asarray(cosine_distances(sub), dtype=np.float64)
    scores: dict[int, float] = {}
    fitted: dict[int, FloatArray] = {}
    for k in range(2, k_max + 1):
        centroids = fit_k(selection.vectors, ward, k, selection.min_count)
        labels = nearest(sub, centroids)
        if centroids.shape[0] < 2 or np.unique(labels).size < 2:
            continue
        fitted[k] = centroids
        scores[k] = cosine_silhouette(distances, labels)
    if not scores:
        raise ValueError("no k in 2..k_max leaves two topics after merging")
    best = max(scores.values())
    k = min(key for key, value in scores.items() if value >= best - SILHOUETTE_TOLERANCE)
    centroids = selection.settle(vectors, fitted[k], min_count)
    return Choice(centroids=centroids, k=k, silhouettes=scores)
