"""Inputs that used to crash or give a raw library message (issue 11, item 7): auto without
signals, CLI --out naming a file, sw.validate(rng=None) not reproducible, auto depending on the
order of the rows."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main


def pool(m: int = 2000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cat = rng.integers(0, 4, m)
    x = rng.normal(size=m)
    y = (rng.random(m) < 1 / (1 + np.exp(-(x + cat - 1.5)))).astype(float)
    label = y.copy()
    label[rng.permutation(m)[250:]] = np.nan
    return pd.DataFrame(
        {
            "id": [f"item{i:05d}" for i in range(m)],
            "cat": np.array(list("abcd"))[cat],
            "level": cat,
            "x": x,
            "s1": y + rng.normal(0, 0.7, m),
            "s2": x + rng.normal(0, 1, m),
            "y": label,
        }
    )


@pytest.mark.parametrize(("z", "kind"), [("cat", None), ("level", "ordinal"), ("x", None)])
def test_auto_without_signals_is_naive_with_a_note(z: str, kind: str | None) -> None:
    frame = pool()
    res = sw.profile(frame, z=z, label="y", kind=kind)  # type: ignore[arg-type]
    np.testing.assert_array_equal(res.estimate, res.naive_estimate)
    np.testing.assert_array_equal(res.se, res.naive_se)
    assert "auto used the gold labels alone: no cheap signals were given." in res.notes


def test_fh_smoothing_without_signals_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"'smooth' parameter is 'fh'.*no signals were given"):
        sw.profile(pool(), z="cat", label="y", method="naive", smooth="fh")


@pytest.mark.parametrize(("z", "kind"), [("cat", "categorical"), ("x", "continuous")])
def test_auto_does_not_depend_on_the_row_order(z: str, kind: str) -> None:
    frame = pool().drop(columns="id")
    base = sw.profile(frame, z=z, signals=["s1", "s2"], label="y", kind=kind)  # type: ignore[arg-type]
    for seed in range(3):
        shuffled = frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)
        res = sw.profile(shuffled, z=z, signals=["s1", "s2"], label="y", kind=kind)  # type: ignore[arg-type]
        np.testing.assert_allclose(res.estimate, base.estimate, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.se, base.se, rtol=0, atol=1e-12)


def test_row_order_with_an_id_column_and_in_select() -> None:
    frame = pool()
    shuffled = frame.sample(frac=1.0, random_state=9)
    options = {"z": "cat", "signals": ["s1", "s2"], "label": "y", "id": "id"}
    a = sw.profile(frame, **options)  # type: ignore[arg-type]
    b = sw.profile(shuffled, **options)  # type: ignore[arg-type]
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=0, atol=1e-12)
    sa = sw.select(frame, method="lace_shrunk", rng=1, **options)  # type: ignore[arg-type]
    sb = sw.select(shuffled, method="lace_shrunk", rng=1, **options)  # type: ignore[arg-type]
    assert sa.chosen == sb.chosen
    np.testing.assert_allclose(sa.scores, sb.scores, rtol=0, atol=1e-12)


def test_validate_without_rng_is_reproducible() -> None:
    rng = np.random.default_rng(4)
    bench = np.repeat(["a", "b", "c", "d", "e", "f"], 300)
    hist = (rng.random(bench.size) < 0.6).astype(float)
    y = np.where(rng.random(bench.size) < 0.8, hist, 1 - hist)
    frame = pd.DataFrame({"bench": bench, "hist": hist, "correct": y})
    draw = sw.sample(frame, design="stratified", strata="bench", fraction=0.1, rng=1)
    labeled = draw.apply(frame, label="correct")
    options = {"domain": "bench", "signals": ["hist"], "label": "correct", "strata": "stratum"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = sw.validate(labeled, **options)  # type: ignore[arg-type]
        second = sw.validate(labeled, **options)  # type: ignore[arg-type]
    np.testing.assert_array_equal(first.dbcv_mse, second.dbcv_mse)
    np.testing.assert_array_equal(first.split50_mse, second.split50_mse)


def test_cli_out_naming_a_file_fails_before_any_work(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.csv"
    pool().to_csv(items, index=False)
    existing = tmp_path / "result.csv"
    existing.write_text("keep me\n")
    args = ["profile", str(items), "--z", "level", "--signals", "s1", "--label", "y"]
    for out in (existing, existing / "sub"):
        assert main([*args, "--out", str(out)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""  # nothing printed: the check comes first
        assert "must be a directory for the profile outputs" in captured.err
        assert "is an existing file" in captured.err
    assert existing.read_text() == "keep me\n"
    assert main([*args, "--out", str(tmp_path / "new" / "dir")]) == 0
    assert (tmp_path / "new" / "dir" / "profile.csv").is_file()
