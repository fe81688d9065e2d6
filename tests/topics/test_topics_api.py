"""sw.topics: label-free, aligned, deterministic, merged to the budget, named by c-TF-IDF, and
clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _topic_data import VOCABULARIES, planted
from sklearn.metrics import adjusted_mutual_info_score, adjusted_rand_score

import slicewise as sw


def test_recovers_planted_topics_and_names_them() -> None:
    frame = planted()
    found = sw.topics(frame, text="prompt")
    assert found.dtype.name == "category"
    assert found.name == "topic"
    assert found.index.equals(frame.index)
    assert adjusted_mutual_info_score(frame["truth"], found) > 0.9
    assert found.cat.categories.size == 4
    for name in found.cat.categories:
        members = frame.loc[found == name, "truth"].mode()[0]
        assert set(name.split(", ")) <= set(VOCABULARIES[members]), (name, members)


def test_label_free_and_reads_only_the_text() -> None:
    frame = planted(seed=1)
    first = sw.topics(frame, text="prompt")
    shuffled = frame.assign(gold=frame["gold"].sample(frac=1, random_state=3).to_numpy())
    assert sw.topics(shuffled, text="prompt").equals(first)
    assert sw.topics(frame[["prompt"]], text="prompt").equals(first)


def test_index_is_kept() -> None:
    frame = planted(seed=2)
    frame.index = pd.Index([f"item-{i}" for i in range(len(frame))])
    found = sw.topics(frame, text="prompt")
    assert found.index.equals(frame.index)


def test_deterministic_below_the_sample_size() -> None:
    frame = planted(seed=4)
    a = sw.topics(frame, text="prompt", rng=0)
    b = sw.topics(frame, text="prompt", rng=12345)
    assert a.equals(b)


def test_seeds_agree_when_the_fit_sample_is_drawn() -> None:
    frame = planted(n=1500, seed=5)
    a = sw.topics(frame, text="prompt", rng=0, sample_size=300)
    b = sw.topics(frame, text="prompt", rng=1, sample_size=300)
    assert "random sample of 300 of the 1500" in a.attrs["notes"][0]
    assert adjusted_rand_score(a, b) >= 0.8


def test_small_topics_are_merged_to_the_budget() -> None:
    frame = planted(n=400, seed=6)
    found = sw.topics(frame, text="prompt", k=8, budget=40, min_labels=8)
    # every topic must expect 8 of 40 labels: hold >= 80 of 400 items
    assert found.value_counts().min() >= 80
    assert found.attrs["topics"]["min_size"] == 80
    assert any("merged into their nearest" in note for note in found.attrs["notes"])
    unmerged = sw.topics(frame, text="prompt", k=4, budget=400, min_labels=1)
    assert unmerged.cat.categories.size == 4


def test_k_is_chosen_by_silhouette_and_said() -> None:
    found = sw.topics(planted(seed=7), text="prompt")
    assert found.attrs["topics"]["k_asked"] is None
    assert "largest mean silhouette" in found.attrs["notes"][0]


def test_texts_without_a_known_term_go_to_the_largest_topic() -> None:
    frame = planted(seed=8)
    frame.loc[0, "prompt"] = "zzzqqq"
    found = sw.topics(frame, text="prompt")
    assert found.iloc[0] == found.cat.categories[0]
    assert any("1 text(s) share no term" in note for note in found.attrs["notes"])


def test_embedding_backend_is_installed_and_finds_topics() -> None:
    frame = planted(seed=9)
    found = sw.topics(frame, text="prompt", method="embedding")
    assert found.attrs["topics"]["method"] == "embedding"
    assert adjusted_mutual_info_score(frame["truth"], found) > 0.5


@pytest.mark.parametrize(
    ("change", "kwargs", "error", "match"),
    [
        (None, {"text": "nope"}, ValueError, "'text' parameter of topics names column 'nope'"),
        (None, {"text": 3}, TypeError, "must be a column name"),
        ({"prompt": np.nan}, {}, ValueError, "1 missing value"),
        ({"prompt": 42}, {}, TypeError, "must hold strings; 1 value"),
        ({"prompt": "   "}, {}, ValueError, "1 empty or white-space text"),
        (None, {"k": 1}, ValueError, "'k' parameter of topics must be an integer >= 2"),
        (None, {"k": 500}, ValueError, "'k' parameter of topics must be at most the number"),
        (None, {"method": "lda"}, ValueError, "'method' parameter of topics must be one of"),
        (None, {"budget": 10}, ValueError, "fewer than two topics"),
        (None, {"rng": "seed"}, TypeError, "'rng' parameter of topics"),
    ],
)
def test_bad_input_is_named(
    change: dict[str, object] | None, kwargs: dict[str, object], error: type, match: str
) -> None:
    frame = planted(seed=10).astype({"prompt": object})
    if change is not None:
        for column, value in change.items():
            frame.loc[3, column] = value
    with pytest.raises(error, match=match):
        sw.topics(frame, **{"text": "prompt", **kwargs})  # type: ignore[arg-type]
