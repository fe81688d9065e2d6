"""``slicewise profile 'logs/*.parquet' --gold grades.csv --on id ...`` scans the pool out of core."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pool_frames import SIGNALS, make_pool

import slicewise as sw
from slicewise.cli import main


def test_profile_glob_with_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = make_pool(m=3000, n=300, seed=5)
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(data.pool)), 3)):
        data.pool.iloc[rows].to_parquet(logs / f"day-{i}.parquet", index=False)
    grades = tmp_path / "grades.csv"
    data.gold.to_csv(grades, index=False)
    out = tmp_path / "out"
    code = main(
        [
            "profile",
            str(logs / "*.parquet"),
            "--gold",
            str(grades),
            "--on",
            "id",
            "--z",
            "segment",
            "--signals",
            ",".join(SIGNALS),
            "--label",
            "human",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr()
    assert "scanned out of core" in printed.out
    assert "rows" in printed.err  # the progress bar
    written = pd.read_csv(out / "profile.csv")
    ref = sw.profile(data.merged, z="segment", signals=SIGNALS, label="human", method="lace")
    np.testing.assert_allclose(written["estimate"], ref.estimate, rtol=0, atol=1e-6)
