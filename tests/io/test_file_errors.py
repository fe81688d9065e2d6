"""Bad item-table files get a ValueError naming the file and the rule, not a parser's message;
``.json`` is a JSON array of records and ``.jsonl`` JSON Lines (issue 11, item 7)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.data.files import read_table, write_table


def small_frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    y = (rng.random(120) < 0.6).astype(float)
    frame = pd.DataFrame({"g": rng.integers(0, 3, 120), "s": y + rng.normal(0, 1, 120), "y": y})
    frame.loc[40:, "y"] = np.nan
    return frame


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.csv", b"", r"Cannot read 'empty\.csv': the file is empty"),
        ("blank.csv", b"\n\n", r"Cannot read 'blank\.csv': the file is empty"),
        ("bin.csv", b"PAR1\x00\x01\x02\xff", r"'bin\.csv': it holds NUL bytes, so it is a binary"),
        (
            "latin.csv",
            b"g,s\n\xe9t\xe9,1\n",
            r"'latin\.csv': it holds byte 0xe9, which is not UTF-8",
        ),
        ("semi.csv", b"g;s;y\n1;0.5;1\n2;0.1;0\n", r"'semi\.csv'.*looks semicolon-separated"),
        ("tabs.csv", b"g\ts\ty\n1\t0.5\t1\n", r"'tabs\.csv'.*looks tab-separated"),
        (
            "ragged.csv",
            b"g,s,y\n1,2,1\n2,3,0,7\n",
            r"'ragged\.csv': line 3 has 4 fields but the header has 3",
        ),
        (
            "header.csv",
            b"g,s,y\n",
            r"'header\.csv': it has no rows \(only the columns \['g', 's', 'y'\]\)",
        ),
        (
            "lines.json",
            b'{"g": 1}\n{"g": 2}\n',
            r"'lines\.json': it is not valid JSON.*suffix \.jsonl",
        ),
        (
            "object.json",
            b'{"g": [1, 2]}',
            r"'object\.json': it holds a JSON object, but a \.json item table must be a JSON array",
        ),
        ("numbers.json", b"[1, 2]", r"'numbers\.json': element 1 is a JSON number, not an object"),
        ("broken.json", b'[{"g": 1}', r"'broken\.json': it is not valid JSON \(line 1 column 10"),
        (
            "array.jsonl",
            b'[{"g": 1}, {"g": 2}]\n',
            r"'array\.jsonl': line 1 holds a JSON array.*end in \.json",
        ),
        ("broken.jsonl", b'{"g": 1}\n{"g": \n', r"'broken\.jsonl': line 2 is not one JSON value"),
    ],
)
def test_bad_files_name_the_file_and_the_rule(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_table(path)
    with pytest.raises(ValueError, match=message):
        sw.profile(path, z="g", signals="s", label="y")


def test_json_array_of_records_is_read_as_records(tmp_path: Path) -> None:
    frame = small_frame()
    path = tmp_path / "items.json"
    path.write_text(frame.to_json(orient="records", double_precision=15))
    back = read_table(path)
    assert list(back.columns) == ["g", "s", "y"]
    assert len(back) == len(frame)
    np.testing.assert_allclose(back["s"], frame["s"])
    np.testing.assert_array_equal(back["y"].isna(), frame["y"].isna())
    from_json = sw.profile(path, z="g", signals="s", label="y", kind="ordinal", method="lace")
    direct = sw.profile(frame, z="g", signals="s", label="y", kind="ordinal", method="lace")
    np.testing.assert_allclose(from_json.estimate, direct.estimate, rtol=0, atol=1e-12)


@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".csv"])
def test_write_then_read_round_trip(tmp_path: Path, suffix: str) -> None:
    frame = small_frame()
    path = write_table(frame, tmp_path / f"items{suffix}")
    back = read_table(path)
    np.testing.assert_allclose(back["s"], frame["s"], rtol=1e-12)
    np.testing.assert_array_equal(back["y"].isna(), frame["y"].isna())
    if suffix == ".json":
        assert path.read_text().lstrip().startswith("[")
