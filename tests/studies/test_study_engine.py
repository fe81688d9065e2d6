"""Study engine: RE and its interval by hand, aggregation by hand, matched splits, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from slicewise.studies.engine import CellSpec, study, study_cells
from slicewise.studies.summary import CellStudy, StudyResult


def hand_cell(
    name: str, est: np.ndarray, truth: np.ndarray, var: np.ndarray | None = None
) -> CellStudy:
    methods = ("naive", "lace")[: est.shape[0]]
    budgets = (10, 20)[: est.shape[1]]
    return CellStudy(
        name=name,
        methods=methods,
        budgets=budgets,
        z=np.arange(truth.shape[-1]).astype(object),
        truth=truth,
        estimates=est,
        variances=np.ones_like(est) * 0.01 if var is None else var,
        pool_n_eff=np.arange(1.0, truth.shape[-1] + 1),
        target="pool",
        n_pool=100,
    )


def test_re_and_interval_match_a_hand_computation() -> None:
    # 2 methods x 1 budget x 4 splits x 2 grid points, truth (0, 0)
    naive = np.array([[0.3, 0.1], [0.2, -0.2], [-0.4, 0.0], [0.1, 0.3]])
    lace = np.array([[0.1, 0.0], [0.1, -0.1], [-0.1, 0.1], [0.0, 0.2]])
    est = np.stack([naive, lace])[:, None]  # (2, 1, 4, 2)
    res = StudyResult(cells=(hand_cell("c", est, np.zeros(2)),))
    row = res.summary().query("method == 'lace'").iloc[0]
    a = np.array([0.05, 0.04, 0.08, 0.05])  # per-split MSE of naive, by hand
    b = np.array([0.005, 0.01, 0.01, 0.02])
    re = a.mean() / b.mean()
    phi = a / a.mean() - b / b.mean()
    se = phi.std(ddof=1) / 2.0
    assert row["mean_mse"] == pytest.approx(b.mean())
    assert row["re"] == pytest.approx(re)
    assert row["log_re_se"] == pytest.approx(se)
    assert row["re_low"] == pytest.approx(re * np.exp(-1.959963984540054 * se))
    assert row["re_high"] == pytest.approx(re * np.exp(1.959963984540054 * se))
    # coverage: |err| <= 1.96 * 0.1 for the lace fits: 7 of 8 (0.2 exceeds 0.196)
    assert row["coverage"] == pytest.approx(7 / 8)
    assert row["bias_rms"] == pytest.approx(np.sqrt(((0.1 / 4) ** 2 + (0.2 / 4) ** 2) / 2))


def test_geometric_mean_aggregation_matches_direct_computation() -> None:
    rng = np.random.default_rng(0)
    cells, logs, ses, joint_ses, joint_logs = [], [], [], [], []
    for c in range(3):
        est = rng.normal(0, [[[[1.0]], [[0.8]]], [[[0.6]], [[0.5]]]], size=(2, 2, 30, 4))
        cells.append(hand_cell(f"c{c}", est, np.zeros(4)))
        mse = (est**2).mean(-1)
        per_budget = []
        phis = []
        for b in range(2):
            a, m = mse[0, b], mse[1, b]
            per_budget.append(np.log(a.mean() / m.mean()))
            phis.append(a / a.mean() - m / m.mean())
            if b == 0:
                logs.append(per_budget[-1])
                ses.append(phis[-1].std(ddof=1) / np.sqrt(30))
        joint = np.mean(phis, axis=0)
        joint_logs.append(np.mean(per_budget))
        joint_ses.append(joint.std(ddof=1) / np.sqrt(30))
    agg = StudyResult(cells=tuple(cells)).aggregate().set_index(["method", "budget"])
    row = agg.loc[("lace", 10)]
    se = np.sqrt(np.sum(np.square(ses))) / 3
    assert row["re"] == pytest.approx(np.exp(np.mean(logs)))
    assert row["re_low"] == pytest.approx(np.exp(np.mean(logs) - 1.959963984540054 * se))
    overall = agg.loc[("lace", "overall")]
    se_joint = np.sqrt(np.sum(np.square(joint_ses))) / 3
    assert overall["re"] == pytest.approx(np.exp(np.mean(joint_logs)))
    assert overall["re_high"] == pytest.approx(
        np.exp(np.mean(joint_logs) + 1.959963984540054 * se_joint)
    )


def test_sparse_region_keeps_lowest_pool_effective_size() -> None:
    est = np.zeros((2, 1, 3, 6))
    res = StudyResult(cells=(hand_cell("c", est, np.zeros(6)),)).restrict(k=2)
    assert list(res.cells[0].z) == [0, 1]


def full_table(m: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.3 + 0.4 * z).astype(float)
    return pd.DataFrame({"z": z, "s1": y + rng.normal(0, 0.5, m), "s2": rng.normal(size=m), "y": y})


def test_every_method_sees_the_same_labeled_sets() -> None:
    """lace_oracle with a zero coefficient is naive: identical fits in every split means the
    methods were given identical labeled sets; at n = M every split recovers the pool truth."""
    data = full_table()
    res = study(
        data,
        z="z",
        signals=["s1", "s2"],
        label="y",
        kind="continuous",
        methods=("naive", "lace_oracle", "lace"),
        coef=np.zeros(2),
        budgets=(40, 300),
        reps=5,
        rng=1,
    )
    cell = res.cells[0]
    np.testing.assert_array_equal(cell.estimates[0], cell.estimates[1])
    np.testing.assert_allclose(
        cell.estimates[0, 1], np.broadcast_to(cell.truth, (5, 20)), rtol=1e-12
    )
    assert not np.allclose(cell.estimates[2, 0], cell.estimates[0, 0])
    # splits differ from each other at n = 40
    assert np.ptp(cell.estimates[0, 0, :, 10]) > 0


def test_study_is_reproducible_and_cells_combine() -> None:
    data = full_table()
    spec = CellSpec(name="a", table=data, z="z", label="y", signals=["s1", "s2"], kind="continuous")
    spec_b = CellSpec(name="b", table=data, z="z", label="y", signals=["s1"], kind="continuous")
    one = study_cells([spec, spec_b], budgets=(30, 60), reps=4, rng=5)
    two = study_cells([spec, spec_b], budgets=(30, 60), reps=4, rng=5, n_jobs=2)
    np.testing.assert_array_equal(one.cells[1].estimates, two.cells[1].estimates)
    assert set(one.aggregate()["cells"]) == {2}


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"budgets": (10, 400)}, r"must not exceed the pool size M = 300. Got \[400\]"),
        ({"methods": ("naive", "laec")}, r"'methods' parameter of study must be one of"),
        ({"reps": 0}, r"'reps' parameter of study must be an integer >= 1"),
    ],
)
def test_study_argument_errors(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        study(full_table(), z="z", signals=["s1"], label="y", **kwargs)  # type: ignore[arg-type]


def test_study_needs_a_fully_labeled_table() -> None:
    data = full_table()
    data.loc[[1, 2], "y"] = np.nan
    with pytest.raises(
        ValueError, match=r"fully labeled table, but label column 'y' is missing on 2"
    ):
        study(data, z="z", signals=["s1"], label="y")
