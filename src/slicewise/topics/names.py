"""Readable topic names: each topic's top terms by class-based TF-IDF (c-TF-IDF).

With tf_{t,c} the count of term t in the texts of topic c, divided by the topic's count of all
terms, f_t the count of t over all topics and A the mean count of terms per topic, the weight of
t in c is

.. math::

    W_{t,c} = \\frac{tf_{t,c}}{\\sum_{t'} tf_{t',c}} \\log\\left(1 + \\frac{A}{f_t}\\right),

and a topic is named by its :data:`NAME_TERMS` heaviest terms (BERTopic's c-TF-IDF; ties are
broken alphabetically). The counts use English words of three or more letters without stop words.

References
----------
Grootendorst, M. (2022). BERTopic: Neural topic modeling with a class-based TF-IDF procedure.
arXiv:2203.05794, Section 3.3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._typing import IntArray, ObjectArray

#: Terms in a topic's name.
NAME_TERMS = 3
#: Words of three or more letters (no digits or underscores: no "br" of an HTML break).
WORDS = r"(?u)\b[^\W\d_]{3,}\b"
#: A term that is such a word from end to end.
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class WordCounts:
    """Counts of the names' words: a sparse (texts x terms) matrix and its terms, sorted."""

    counts: Any
    terms: ObjectArray


def word_counts(texts: list[str]) -> WordCounts | None:
    """The names' words counted in ``texts`` (None: no such word in any of them)."""
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(stop_words="english", token_pattern=WORDS, lowercase=True)
    try:
        counts = vectorizer.fit_transform(texts)
    except ValueError:  # no word at all: numbers or stop words only
        return None
    return WordCounts(counts=counts, terms=vectorizer.get_feature_names_out())


def name_words(counts: Any, terms: ObjectArray) -> WordCounts | None:
    """The names' words among the columns of a count matrix of scikit-learn's default tokens.

    A default token is a whole run of two or more word characters; a name's word
    (:data:`WORDS`) is a whole run of three or more letters. So the words :func:`word_counts`
    finds are exactly the default tokens made of three or more letters, and these columns equal
    its counts without reading the texts again.
    """
    keep = np.flatnonzero([_WORD.fullmatch(str(term)) is not None for term in terms])
    if keep.size == 0:
        return None
    return WordCounts(counts=counts[:, keep], terms=np.asarray(terms[keep], dtype=object))


def topic_names(words: WordCounts | None, labels: IntArray, k: int) -> tuple[str, ...]:
    """One distinct name per topic 0..k-1 (``'topic j'`` where a topic has no counted word),
    from the names' word counts of the texts whose topics are ``labels``."""
    if words is None:
        return tuple(f"topic {j + 1}" for j in range(k))
    from scipy.sparse import csr_matrix

    terms = words.terms
    n = labels.size
    onehot = csr_matrix((np.ones(n), (labels, np.arange(n))), shape=(k, n))
    per_topic = np.asarray((onehot @ words.counts).toarray(), dtype=np.float64)  # (k, V)
    totals = per_topic.sum(axis=1, keepdims=True)
    tf = np.divide(per_topic, totals, out=np.zeros_like(per_topic), where=totals > 0)
    mean_terms = per_topic.sum() / k
    weight = tf * np.log1p(mean_terms / np.maximum(per_topic.sum(axis=0), 1.0))
    names: list[str] = []
    for j in range(k):
        order = np.lexsort((terms, -np.round(weight[j], 12)))
        ranked = [str(terms[i]) for i in order if weight[j, i] > 0]
        name = ", ".join(ranked[:NAME_TERMS]) or f"topic {j + 1}"
        extra = NAME_TERMS
        while name in names and extra < len(ranked):
            extra += 1
            name = ", ".join(ranked[:extra])
        if name in names:
            name = f"{name} ({j + 1})"
        names.append(name)
    return tuple(names)
