"""Item-level probabilities (issue 30): the ``uncertainty=`` columns, declared once, enter the
signals with their products, and next_items' residual model sends the batch to the items whose
signals are unreliable, inside slices (known truth: the judge-quality design)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from benchmarks.bench_adaptive import judge_quality, with_pilot

GRID = [0.1, 0.3, 0.5, 0.7, 0.9]
COMMON = dict(
    z="z", signals=["judge", "confidence"], label="y", kind="continuous", grid=GRID, bandwidth=0.1
)


def _pilot(seed: int, m: int = 2000, n0: int = 300) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    full = judge_quality(rng, m)
    return full, with_pilot(full, n0, rng)


@pytest.mark.parametrize("seed", range(3))
def test_the_batch_goes_to_the_items_the_judge_gets_wrong(seed: int) -> None:
    """Known truth: the label's sd given the signals is sqrt(0.98 x 0.02) = 0.14 on the half
    where the judge is reliable and sqrt(theta (1 - theta)) >= 0.43 on the other, so the
    Neyman allocation gives the unreliable half 0.43 / (0.43 + 0.14) = 0.75 of the adaptive
    part of the batch, and with the uniform floor (0.3 of the batch spread evenly) at least
    0.3 x 0.5 + 0.7 x 0.75 = 0.68. Before issue 30 the residual model had no product of the
    judge with its confidence and gave that half 0.51-0.53 (seeds 0-2)."""
    full, table = _pilot(seed)
    out = sw.next_items(table, batch=300, uncertainty=["confidence"], rng=0, **COMMON)  # type: ignore[arg-type]
    p = 1.0 - (1.0 - out["pi"].to_numpy()) / (1.0 - 300 / 2000)
    unlabeled = table["y"].isna().to_numpy()
    unreliable = full["confidence"].to_numpy() < 0.5
    share = p[unlabeled & unreliable].sum() / p[unlabeled].sum()
    assert share >= 0.65, share  # measured 0.72-0.77
    assert out.attrs["design"]["strength"] > 0.0
    assert any("upper bound" in note for note in out.attrs["notes"])


def test_uncertainty_columns_become_signals_with_their_products() -> None:
    full, table = _pilot(0, m=600, n0=120)
    from slicewise.data.table import make_table

    items = make_table(
        table, z="z", signals=["judge"], label="y", uncertainty=["confidence"], canonical=True
    )
    assert items.signal_names == ("judge", "confidence", "judge*confidence")
    rows = items.input_rows(np.arange(len(table)))
    expected = (full["judge"] * full["confidence"]).to_numpy()[rows]
    np.testing.assert_array_equal(items.signals[:, 2], expected)
    assert any("Uncertainty column(s) 'confidence'" in note for note in items.notes)
    # a column that is a signal already enters only through its products
    both = make_table(
        table, z="z", signals=["judge", "confidence"], label="y", uncertainty="confidence"
    )
    assert both.signal_names == ("judge", "confidence", "judge*confidence")


def test_the_product_lets_the_estimate_trust_the_judge_where_it_is_reliable() -> None:
    """Known truth: the best adjustment linear in (judge, confidence) explains about a quarter
    of the label's variance, the one with judge x confidence about half; on the same uniform
    labels the default estimate's variance must fall accordingly (by more than 20% here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratios = []
        for seed in range(3):
            _, table = _pilot(seed, m=3000, n0=550)
            plain = sw.profile(table, **COMMON)  # type: ignore[arg-type]
            product = sw.profile(table, uncertainty="confidence", **COMMON)  # type: ignore[arg-type]
            ratios.append(float(np.mean(product.se**2) / np.mean(plain.se**2)))
    assert max(ratios) < 0.8, ratios


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"uncertainty": "nope"},
            ValueError,
            "'uncertainty' parameter of profile names column 'nope'",
        ),
        ({"uncertainty": ["confidence", "confidence"]}, sw.InvalidParameterError, "distinct"),
        ({"uncertainty": 3}, sw.InvalidParameterError, "'uncertainty' parameter of profile"),
    ],
)
def test_bad_uncertainty_columns(kwargs: dict[str, object], error: type, match: str) -> None:
    _, table = _pilot(1, m=300, n0=80)
    with pytest.raises(error, match=match):
        sw.profile(table, **COMMON, **kwargs)  # type: ignore[arg-type]


def test_missing_uncertainty_values_are_refused_naming_the_column() -> None:
    _, table = _pilot(1, m=300, n0=80)
    table.loc[[3, 7], "confidence"] = np.nan
    with pytest.raises(ValueError, match="Uncertainty column 'confidence' has 2 missing"):
        sw.next_items(table, batch=20, uncertainty="confidence", **COMMON)  # type: ignore[arg-type]


def test_an_out_of_core_pool_refuses_uncertainty(tmp_path: object) -> None:
    pytest.importorskip("duckdb")
    _, table = _pilot(1, m=300, n0=80)
    path = f"{tmp_path}/pool.parquet"
    table.drop(columns="y").assign(item=np.arange(300)).to_parquet(path)
    gold = table.assign(item=np.arange(300))[["item", "y"]].dropna()
    with pytest.raises(ValueError, match="'uncertainty' parameter of profile needs the pool"):
        sw.profile(path, gold=gold, on="item", uncertainty="confidence", **COMMON)  # type: ignore[arg-type]


def test_the_command_line_takes_the_declared_flag(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """`slicewise next` and `slicewise plan` take --uncertainty from the option's declaration,
    and next prints what the safeguard chose."""
    from slicewise.cli import main

    _, table = _pilot(2, m=800, n0=150)
    path = f"{tmp_path}/items.csv"
    table.to_csv(path, index=False)
    common = ["--z", "z", "--kind", "continuous", "--signals", "judge,confidence", "--label", "y"]
    out = f"{tmp_path}/batch.csv"
    argv = ["next", path, *common, "--uncertainty", "confidence", "--batch", "80", "--out", out]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "note: On the 150 labels so far" in printed
    assert main(["plan", path, *common, "--uncertainty", "confidence", "--halfwidth", "0.1"]) == 0
    assert "Planned for next_items' adaptive design" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["next", "--help"])
    assert "--uncertainty COLUMNS" in capsys.readouterr().out
