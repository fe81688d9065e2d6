"""Inputs a newcomer gives on the first day (issue 31, item 3): each gets a clear error or
warning that names the parameter or column, the rule and the offending value or count, or the
right answer; none a traceback from inside numpy or pandas, none a silently wrong result."""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.cli import main
from slicewise.exceptions import DuplicateItemsWarning, InclusionProbabilityWarning


def pool(m: int = 600, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 4, m)
    y = (rng.random(m) < 0.3 + 0.1 * g).astype(float)
    label = y.copy()
    label[rng.permutation(m)[150:]] = np.nan
    return pd.DataFrame(
        {
            "item_id": [f"q{i:04d}" for i in range(m)],
            "g": np.array(list("abcd"))[g],
            "judge": y + rng.normal(0, 0.8, m),
            "length": rng.normal(5, 1, m),
            "y": label,
        }
    )


OPTS = {"z": "g", "label": "y", "signals": ["judge", "length"]}


def test_one_labeled_item_is_refused_by_name() -> None:
    """A one-item table (and one label in a large pool) crashed inside auto's folds with
    'reduce() of empty iterable'; no method can give an interval from one label."""
    frame = pool().iloc[:1].assign(y=1.0)
    with pytest.raises(ValueError, match=r"auto needs at least 2 gold labels .* 'y' has 1 labeled"):
        sw.profile(frame, **OPTS)
    one = pool().assign(y=np.nan)
    one.loc[3, "y"] = 1.0
    for method in ("auto", "lace", "naive"):
        with pytest.raises(ValueError, match="at least 2 gold labels"):
            sw.profile(one, method=method, **OPTS)


def _long(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = pool(seed=seed)
    parts = []
    for k in range(3):
        part = base[["item_id", "g"]].copy()
        part["model"] = f"m{k}"
        y = (rng.random(len(base)) < 0.4 + 0.1 * k).astype(float)
        part["judge"] = y + rng.normal(0, 0.8, len(base))
        part["y"] = np.where(rng.random(len(base)) < 0.3, y, np.nan)
        parts.append(part)
    return pd.concat(parts)  # the index repeats 0..599 three times, as pd.concat leaves it


@pytest.mark.parametrize("func", ["profile_models", "gap", "rank_models"])
def test_long_table_with_a_duplicated_index(func: str) -> None:
    """pd.concat's repeated index raised 'Boolean index has wrong length' in data/panel.py; rows
    are matched by position, so the answer equals that of the same table with a fresh index."""
    long = _long()
    assert long.index.has_duplicates
    options = {"z": "g", "label": "y", "signals": ["judge"], "id": "item_id", "model": "model"}
    extra = {"model_a": "m0", "model_b": "m1"} if func == "gap" else {}
    run = getattr(sw, func)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.LabelSelectionWarning)
        got = run(long, rng=0, **options, **extra).to_frame()
        want = run(long.reset_index(drop=True), rng=0, **options, **extra).to_frame()
    pd.testing.assert_frame_equal(got, want)


def test_corrupt_parquet_without_duckdb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without duckdb a single Parquet file is read whole by pyarrow (a required dependency): a
    good file gives the in-memory answer, a corrupt one says so, naming the file (it raised
    ImportError 'needs duckdb')."""
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb raises ImportError
    good = tmp_path / "items.parquet"
    pool().to_parquet(good, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.LabelSelectionWarning)
        res = sw.profile(good, method="lace", **OPTS)
        want = sw.profile(pool(), method="lace", **OPTS)
    np.testing.assert_allclose(res.estimate, want.estimate, rtol=1e-12)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(ValueError, match=r"Cannot read 'bad.parquet' as Parquet"):
        sw.profile(bad, method="lace", **OPTS)


@pytest.mark.parametrize(("harness", "name"), [("lm-eval", "samples.jsonl"), ("inspect", "log.json"), ("helm", "per_instance_stats.json")])  # fmt: skip
def test_binary_file_given_to_import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], harness: str, name: str
) -> None:
    """A binary file raised a bare codec error that named no file."""
    path = tmp_path / name
    path.write_bytes(bytes([0x1F, 0x8B, 0x08, 0xD6, 0xFF, 0x00]) * 50)  # gzip-like bytes
    assert main(["import", harness, str(path), "--out", str(tmp_path / "out.parquet")]) == 2
    err = capsys.readouterr().err
    assert f"'{path}' is not UTF-8 text" in err
    assert "binary or compressed" in err


@pytest.mark.parametrize("option", ["--out", "--report"])
def test_unwritable_outputs_fail_before_any_work(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    option: str,
) -> None:
    """A folder that takes no new file ([Errno 2] / [Errno 13] after the results were printed):
    the option is named and nothing is printed or computed."""
    items = tmp_path / "items.csv"
    pool().to_csv(items, index=False)
    target = tmp_path / "locked" / ("out" if option == "--out" else "report.html")
    (tmp_path / "locked").mkdir()

    def refuse(*args: object, dir: object = None, **kwargs: object) -> object:
        if dir is not None and Path(str(dir)) == tmp_path / "locked":
            raise PermissionError(13, "Permission denied")
        return real(*args, dir=dir, **kwargs)

    real = tempfile.TemporaryFile
    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    args = ["profile", str(items), "--z", "g", "--signals", "judge", "--label", "y"]
    assert main([*args, option, str(target)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{option} '{target}' cannot be written" in captured.err
    assert "Permission denied" in captured.err


def test_report_naming_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = tmp_path / "items.csv"
    pool().to_csv(items, index=False)
    args = ["profile", str(items), "--z", "g", "--signals", "judge", "--label", "y"]
    assert main([*args, "--report", str(tmp_path)]) == 2
    assert "is an existing directory" in capsys.readouterr().err


def test_extreme_signal_and_label_scales() -> None:
    """Signals of 1e300 overflowed in the pool sd (then a LinAlgError); labels of 1e-300 gave
    intervals [0, 1] from a variance that underflowed to 0. Both are refused by column."""
    frame = pool()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(
            ValueError, match=r"Signal column 'judge' reaches \|value\| = \d\.\d+e\+300"
        ):
            sw.profile(frame.assign(judge=frame["judge"] * 1e300), **OPTS)
        with pytest.raises(ValueError, match=r"Label column 'y' reaches \|value\| = 1e-300"):
            sw.profile(frame.assign(y=frame["y"] * 1e-300), **OPTS)
    # large but representable scales are fine and change nothing: signals are standardised
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.LabelSelectionWarning)
        base = sw.profile(frame, method="lace", **OPTS)
        scaled = sw.profile(frame.assign(judge=frame["judge"] * 1e80), method="lace", **OPTS)
    np.testing.assert_allclose(scaled.estimate, base.estimate, rtol=1e-9)


def test_fully_duplicated_rows_warn_about_the_id_column() -> None:
    """pd.concat([t, t]) without `id` doubled n and shrank se by about sqrt(2) silently."""
    frame = pool()
    twice = pd.concat([frame, frame])
    with pytest.warns(
        DuplicateItemsWarning, match=r"Column 'item_id' looks like an item id and 600"
    ):
        res = sw.profile(twice, method="naive", **OPTS)
    assert any("pass id='item_id'" in note for note in res.notes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateItemsWarning)
        once = sw.profile(frame, method="naive", **OPTS)
    np.testing.assert_allclose(res.se * np.sqrt(2), once.se, rtol=0.05)  # what it warns about
    with pytest.raises(ValueError, match="Id column 'item_id' has 600 duplicated ids"):
        sw.profile(twice, method="naive", id="item_id", **OPTS)


def _domain_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    m = 600
    d = rng.integers(0, 6, m)
    y = (rng.random(m) < 0.3 + 0.1 * d).astype(float)
    gold = np.full(m, np.nan)
    rows = rng.choice(m, 120, replace=False)
    gold[rows] = y[rows]
    return pd.DataFrame({"d": d, "s": y + rng.normal(0, 1, m), "y": gold, "pi": 0.9, "ok": 0.2})


def test_domain_inclusion_probabilities_that_cannot_be_right() -> None:
    """pi = 0.9 on every row with 120 of 600 labeled: the labeled 1 / pi add up to 133, not
    600; the se shrank 2.8x silently."""
    frame = _domain_frame()
    with pytest.warns(
        InclusionProbabilityWarning, match=r"'pi' cannot be right.* add up to 133\.3.*600 items"
    ):
        bad = sw.domains(frame, domain="d", label="y", signals="s", inclusion="pi", method="hajek")
    with warnings.catch_warnings():
        warnings.simplefilter("error", InclusionProbabilityWarning)
        good = sw.domains(frame, domain="d", label="y", signals="s", inclusion="ok", method="hajek")
    assert np.all(good.se / bad.se > 2.5)  # what the warning is about
    with pytest.warns(InclusionProbabilityWarning, match="'pi' cannot be right"):
        sw.profile(
            frame, z="d", kind="categorical", label="y", signals="s", inclusion="pi", method="hajek"
        )
