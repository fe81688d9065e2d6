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
from typing import Any, Protocol

import numpy as np

from .._typing import FloatArray

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
    """TF-IDF then truncated SVD, fitted by :func:`fit_tfidf`."""

    vectorizer: Any
    components: FloatArray

    def transform(self, texts: list[str]) -> FloatArray:
        sparse = self.vectorizer.transform(texts)
        return unit_rows(sparse @ self.components.T)


def fit_tfidf(texts: list[str]) -> TfidfSVD:
    """Fit the vocabulary and the SVD on ``texts``.

    Raises ValueError when the texts share no term (all stop words, or every term in one text).
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.utils.extmath import svd_flip

    n = len(texts)
    vectorizer = TfidfVectorizer(
        sublinear_tf=True,
        stop_words="english",
        min_df=2 if n >= 20 else 1,
        max_df=0.5 if n >= 20 else 1.0,
        max_features=MAX_TERMS,
        dtype=np.float64,
    )
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError as error:
        raise ValueError(
            f"The texts share no vocabulary to build topics from ({error}); topics need words "
            "that occur in at least two texts."
        ) from None
    dims = min(SVD_DIMS, matrix.shape[1] - 1, n - 1)
    if dims < 1:
        raise ValueError(
            f"The texts have {matrix.shape[1]} term(s) in common; topics need at least two."
        )
    svd = TruncatedSVD(dims, algorithm="arpack", random_state=0).fit(matrix)
    components = np.asarray(svd.components_, dtype=np.float64)
    _, components = svd_flip(np.zeros((1, dims)), components, u_based_decision=False)
    return TfidfSVD(vectorizer=vectorizer, components=np.ascontiguousarray(components))


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


def fit_representation(method: str, texts: list[str]) -> Representation:
    """The fitted representation ``method`` ('tfidf' or 'embedding')."""
    if method == "embedding":
        return load_wordllama()
    return fit_tfidf(texts)
