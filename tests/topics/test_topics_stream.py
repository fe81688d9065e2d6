"""Topics of a Parquet pool streamed through DuckDB equal the in-memory ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from _topic_data import planted

import slicewise as sw


@pytest.mark.parametrize("sample_size", [20_000, 250])
def test_parquet_pool_equals_in_memory(tmp_path: Path, sample_size: int) -> None:
    frame = planted(n=600, seed=11)
    path = tmp_path / "pool.parquet"
    frame[["prompt"]].to_parquet(path, row_group_size=97)
    memory = sw.topics(frame, text="prompt", rng=3, sample_size=sample_size)
    streamed = sw.topics(path, text="prompt", rng=3, sample_size=sample_size)
    assert list(streamed.cat.categories) == list(memory.cat.categories)
    assert (streamed.cat.codes.to_numpy() == memory.cat.codes.to_numpy()).all()
    assert streamed.attrs["notes"] == memory.attrs["notes"]


def test_bad_text_in_a_pool_names_the_row(tmp_path: Path) -> None:
    frame = planted(n=300, seed=12)
    frame.loc[250, "prompt"] = ""
    path = tmp_path / "pool.parquet"
    frame[["prompt"]].to_parquet(path, row_group_size=64)
    with pytest.raises(ValueError, match=r"1 empty or white-space text\(s\), at rows 250"):
        sw.topics(path, text="prompt")
    with pytest.raises(ValueError, match="names column 'text'"):
        sw.topics(path, text="text")
