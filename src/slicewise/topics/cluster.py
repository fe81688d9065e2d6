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

**k.** When not given, k is the one among 2, ..., k_max (k_max = min(:data:`MAX_TOPICS`,
M / min_size)) whose merged topics, fitted on at most :data:`SELECT_ITEMS` evenly spaced vectors
of the fit sample, have the largest mean silhouette (cosine distance, on at most
:data:`SILHOUETTE_ITEMS` of them); the smallest k within :data:`SILHOUETTE_TOLERANCE` of the
largest is kept, so a tie is not decided by the last bits of a float. That k is then fitted on
the whole fit sample.

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
#: Vectors (evenly spaced over the fit sample) the silhouette rule fits each candidate k on;
#: the chosen k is then fitted on the whole fit sample.
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
    from sklearn.metrics import silhouette_score

    ward = Ward.build(vectors)
    chosen = vectors[spaced(vectors.shape[0], SELECT_ITEMS)]
    small = max(1, int(np.ceil(min_count * chosen.shape[0] / vectors.shape[0])))
    sub = chosen[spaced(chosen.shape[0], SILHOUETTE_ITEMS)]
    scores: dict[int, float] = {}
    for k in range(2, k_max + 1):
        centroids = fit_k(chosen, ward, k, small)
        labels = nearest(sub, centroids)
        if centroids.shape[0] < 2 or np.unique(labels).size < 2:
            continue
        scores[k] = float(silhouette_score(sub, labels, metric="cosine"))
    if not scores:
        raise ValueError("no k in 2..k_max leaves two topics after merging")
    best = max(scores.values())
    k = min(key for key, value in scores.items() if value >= best - SILHOUETTE_TOLERANCE)
    centroids = fit_k(vectors, ward, k, min_count)
    return Choice(centroids=centroids, k=k, silhouettes=scores)
