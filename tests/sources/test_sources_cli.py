"""``slicewise profile 'logs/*.parquet' --gold grades.csv --on id ...`` scans the pool out of core."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pool_frames import make_pool

import slicewise as sw
from slicewise.cli import main


def test_profile_glob_with_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command of issue 13, with the default method (auto) and a progress bar per pass."""
    data = make_pool(m=3000, n=300, seed=5)
    names = {"id": "conversation_id", "length": "len"}
    pool = data.pool.rename(columns=names)
    logs = tmp_path / "logs"
    logs.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(pool)), 3)):
        pool.iloc[rows].to_parquet(logs / f"day-{i}.parquet", index=False)
    grades = tmp_path / "grades.csv"
    data.gold.rename(columns=names).to_csv(grades, index=False)
    out = tmp_path / "out"
    code = main(
        [
            "profile",
            str(logs / "*.parquet"),
            "--gold",
            str(grades),
            "--on",
            "conversation_id",
            "--z",
            "segment",
            "--signals",
            "judge,len",
            "--label",
            "human",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr()
    assert "scanned out of core" in printed.out
    for stage in ("statistics of", "predictions over"):  # progress bars
        assert stage in printed.err
    # a text profile column's kernel sums are taken in the statistics scan: no pass of their own
    assert "kernel sums of" not in printed.err
    written = pd.read_csv(out / "profile.csv")
    merged = data.merged.rename(columns=names)
    ref = sw.profile(merged, z="segment", signals=["judge", "len"], label="human")
    assert ref.method == "auto"
    assert "learned" in str(ref.params["cv_variance_ratio"])  # the learned pass ran
    np.testing.assert_allclose(written["estimate"], ref.estimate, rtol=0, atol=1e-6)
    np.testing.assert_allclose(written["se"], ref.se, rtol=0, atol=1e-6)
