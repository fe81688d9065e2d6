"""Text representations for :func:`slicewise.topics`: unit vectors, one row per text.

* ``'tfidf'`` (default): TF-IDF (sublinear term frequency, English stop words, terms in at least
  two texts and at most half of them) reduced by a truncated SVD (latent semantic analysis) to
  :data:`SVD_DIMS` dimensions, rows scaled to unit length. The SVD is ARPACK's with a fixed
  start vector and signs flipped to a convention, so a representation depends on the fitted
  texts alone.
* ``'embedding'``: WordLlama's static token embeddings (``pip install 'slicewise[embed]'``),
  averaged per text; the model ships inside the wheel and is loaded from it, with no download.

Both are fitted once (on the fit sample) and then map any batch of texts, so a pool on disk is
assigned batch by batch with the representation its topics were fitted on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .._typing import FloatArray, IntArray

if TYPE_CHECKING:
    from .names import WordCounts

#: Dimensions of the truncated SVD of the TF-IDF matrix.
SVD_DIMS = 50
#: The TF-IDF vocabulary's largest size (the most frequent terms of the fit sample).
MAX_TERMS = 1 << 16


class Representation(Protocol):
    """A fitted map from texts to unit vectors."""

    def transform(self, texts: list[str]) -> FloatArray: ...


def unit_rows(matrix: Any) -> FloatArray:
    """Rows scaled to unit Euclidean length (a zero row stays zero)."""
    out = np.asarray(matrix, dtype=np.float64)
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    scaled: FloatArray = np.divide(out, norm, out=np.zeros_like(out), where=norm > 0)
    return scaled


@dataclass(frozen=True)
class TfidfSVD:
    """TF-IDF then truncated SVD, fitted by :func:`fit_tfidf`: the counts of the fitted
    vocabulary, their TF-IDF weights and the SVD's components."""

    counter: Any
    weights: Any
    components: FloatArray

    def transform(self, texts: list[str]) -> FloatArray:
        sparse = self.weights.transform(self.counter.transform(texts))
        return unit_rows(sparse @ self.components.T)


@dataclass(frozen=True)
class Fitted:
    """A representation fitted on texts, the unit vectors of those texts, and their word counts
    for the names (:class:`~slicewise.topics.names.WordCounts`; None: no word to count)."""

    representation: Representation
    vectors: FloatArray
    words: WordCounts | None


def frequent_terms(counts: Any, *, min_df: int, max_df: float, limit: int) -> IntArray:
    """Columns of a count matrix in at least ``min_df`` and at most ``max_df`` of its rows,
    at most the ``limit`` most frequent of them (ties: the first column), in column order.

    scikit-learn's ``CountVectorizer(min_df, max_df, max_features)`` rule, with a stable sort.
    """
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    keep = np.flatnonzero((df >= min_df) & (df <= max_df))
    if keep.size > limit:
        total = np.asarray(counts.sum(axis=0)).ravel()[keep]
        keep = np.sort(keep[np.argsort(-total, kind="stable")[:limit]])
    out: IntArray = keep.astype(np.intp)
    return out


def fit_tfidf(texts: list[str]) -> Fitted:
    """Fit the vocabulary and the SVD on ``texts``, with one pass over them.

    The words are counted once (scikit-learn's default tokens: runs of two or more word
    characters, lower case, English stop words dropped); the TF-IDF vocabulary (terms in at least
    two texts and at most half of them, at most :data:`MAX_TERMS`) and the names' words
    (:func:`~slicewise.topics.names.name_words`) are columns of those counts, so the fitted texts'
    vectors are those of ``TfidfVectorizer(sublinear_tf=True, stop_words='english', min_df=2,
    max_df=0.5, max_features=MAX_TERMS)`` and the SVD without reading the texts again.

    Raises ValueError when the texts share no term (all stop words, or every term in one text).
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
    from sklearn.utils.extmath import svd_flip

    from .names import name_words

    n = len(texts)
    counter = CountVectorizer(stop_words="english", dtype=np.float64)
    try:
        counts = counter.fit_transform(texts).tocsr()
    except ValueError as error:
        raise ValueError(
            f"The texts share no vocabulary to build topics from ({error}); topics need words "
            "that occur in at least two texts."
        ) from None
    terms = counter.get_feature_names_out()
    keep = frequent_terms(
        counts,
        min_df=2 if n >= 20 else 1,
        max_df=0.5 * n if n >= 20 else float(n),
        limit=MAX_TERMS,
    )
    if keep.size == 0:
        raise ValueError(
            "The texts share no vocabulary to build topics from (no term is in at least two "
            "texts and at most half of them); topics need words that occur in at least two texts."
        )
    dims = min(SVD_DIMS, keep.size - 1, n - 1)
    if dims < 1:
        raise ValueError(f"The texts have {keep.size} term(s) in common; topics need at least two.")
    weights = TfidfTransformer(sublinear_tf=True)
    matrix = weights.fit_transform(counts[:, keep])
    svd = TruncatedSVD(dims, algorithm="arpack", random_state=0).fit(matrix)
    components = np.asarray(svd.components_, dtype=np.float64)
    _, components = svd_flip(np.zeros((1, dims)), components, u_based_decision=False)
    components = np.ascontiguousarray(components)
    fixed = CountVectorizer(stop_words="english", dtype=np.float64, vocabulary=terms[keep])
    return Fitted(
        representation=TfidfSVD(counter=fixed, weights=weights, components=components),
        vectors=unit_rows(matrix @ components.T),
        words=name_words(counts, terms),
    )


@dataclass(frozen=True)
class WordLlamaMean:
    """WordLlama's embeddings (the ``embed`` extra), loaded from the installed wheel."""

    model: Any

    def transform(self, texts: list[str]) -> FloatArray:
        return unit_rows(self.model.embed(texts, batch_size=4096))


def load_wordllama() -> WordLlamaMean:
    """The WordLlama model shipped in the ``wordllama`` wheel, loaded with downloads disabled.

    Raises ImportError naming the extra when ``wordllama`` is not installed.
    """
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError as error:
        raise ImportError(
            "method='embedding' of topics needs the wordllama package: pip install "
            "'slicewise[embed]' (its model ships inside the wheel; nothing is downloaded)."
        ) from error
    from pathlib import Path

    # the wheel holds the weights and the tokenizer; pointing the cache at the package folder
    # finds both there, and disable_download makes a missing file an error instead of a fetch
    folder = Path(wordllama.__file__).parent
    return WordLlamaMean(model=WordLlama.load(cache_dir=folder, disable_download=True))


def fit_representation(method: str, texts: list[str]) -> Fitted:
    """The representation ``method`` ('tfidf' or 'embedding') fitted on ``texts``, with their
    vectors and word counts."""
    if method == "embedding":
        from .names import word_counts

        model = load_wordllama()
        return Fitted(
            representation=model, vectors=model.transform(texts), words=word_counts(texts)
        )
    return fit_tfidf(texts)
