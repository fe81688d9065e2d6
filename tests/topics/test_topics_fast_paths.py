"""The fast paths of sw.topics against the slow obvious ones: one count pass instead of a TF-IDF
vectorizer and a names vectorizer, the silhouette from distances computed once, the fitted
texts' codes instead of assigning them again, topics settled from a selection."""

from __future__ import annotations

import numpy as np
import pytest
from _topic_data import planted
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_mutual_info_score, silhouette_score
from sklearn.metrics.pairwise import cosine_distances
from sklearn.utils.extmath import svd_flip

import slicewise as sw
from slicewise.topics import cluster
from slicewise.topics.embed import MAX_TERMS, fit_tfidf, frequent_terms, unit_rows
from slicewise.topics.model import fit_topic_model
from slicewise.topics.names import word_counts
from slicewise.topics.options import TopicOptions

# digits, underscores, two-letter words, accents, a letter run glued to digits, stop words
ODD = [
    "Bake the naïve café bread at 200 degrees for 40 minutes",
    "abc123 and x_y are not words, but résumé is; so is Ørsted",
    "go to the ML lab and run python3 on the GPU",
    "the the the and of",
]


def _texts() -> list[str]:
    return list(planted(n=300, seed=30)["prompt"]) + ODD * 3


def test_one_count_pass_gives_the_tfidf_vectorizer_and_svd() -> None:
    texts = _texts()
    fitted = fit_tfidf(texts)
    vectorizer = TfidfVectorizer(
        sublinear_tf=True, stop_words="english", min_df=2, max_df=0.5, max_features=MAX_TERMS
    )
    matrix = vectorizer.fit_transform(texts)
    assert list(fitted.representation.counter.vocabulary) == list(  # type: ignore[attr-defined]
        vectorizer.get_feature_names_out()
    )
    svd = TruncatedSVD(50, algorithm="arpack", random_state=0).fit(matrix)
    _, components = svd_flip(np.zeros((1, 50)), svd.components_, u_based_decision=False)
    expected = unit_rows(matrix @ components.T)
    np.testing.assert_allclose(fitted.vectors, expected, atol=1e-12)
    # a batch of new texts maps to the same vectors as the fitted ones
    np.testing.assert_allclose(fitted.representation.transform(texts), fitted.vectors, atol=1e-12)


def test_the_names_words_are_the_columns_of_the_one_count_pass() -> None:
    texts = _texts()
    words = fit_tfidf(texts).words
    alone = word_counts(texts)
    assert words is not None
    assert alone is not None
    assert list(words.terms) == list(alone.terms)
    assert {"naïve", "résumé", "ørsted", "lab", "gpu"} <= set(words.terms)
    assert not {"abc", "abc123", "ml", "python3", "x_y", "200"} & set(words.terms)
    assert (words.counts != alone.counts).nnz == 0


def test_frequent_terms_keeps_the_most_frequent_in_column_order() -> None:
    from scipy.sparse import csr_matrix

    counts = csr_matrix(np.array([[1, 0, 2, 1], [1, 1, 3, 0], [0, 1, 1, 0], [1, 0, 0, 0.0]]))
    # document frequencies 3, 2, 3, 1; totals 3, 2, 6, 1
    assert frequent_terms(counts, min_df=2, max_df=4.0, limit=10).tolist() == [0, 1, 2]
    assert frequent_terms(counts, min_df=2, max_df=2.0, limit=10).tolist() == [1]
    assert frequent_terms(counts, min_df=1, max_df=4.0, limit=2).tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(5))
def test_silhouette_from_distances_equals_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = unit_rows(rng.normal(size=(120, 6)))
    labels = rng.integers(4, size=120)
    labels[labels == 2] = 3  # an unused code
    labels[7] = 5  # a topic of one item
    ours = cluster.cosine_silhouette(cosine_distances(vectors), labels)
    assert ours == pytest.approx(silhouette_score(vectors, labels, metric="cosine"), abs=1e-12)


def test_fitted_codes_equal_assigning_the_texts_again() -> None:
    texts = [*_texts(), "zzzqqq"]
    model = fit_topic_model(texts, TopicOptions(), pool_size=len(texts))
    codes, blank = model.assign(texts)
    np.testing.assert_array_equal(codes, model.fit_codes)
    assert blank == model.fit_blank == 1 + 3  # the unknown word and the stop words alone


def test_topics_settled_from_a_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = planted(n=1200, seed=31)
    whole = sw.topics(frame, text="prompt", budget=60)
    monkeypatch.setattr(cluster, "SELECT_ITEMS", 150)
    settled = sw.topics(frame, text="prompt", budget=60)
    assert adjusted_mutual_info_score(frame["truth"], settled) > 0.9
    assert adjusted_mutual_info_score(whole, settled) > 0.9
    # the size rule holds on the whole pool: 10 of 60 labels, so 200 of 1,200 items
    assert settled.value_counts().min() >= 200
    fixed = sw.topics(frame, text="prompt", k=8, budget=60)
    assert fixed.value_counts().min() >= 200
