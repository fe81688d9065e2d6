"""Real-data cells (research/realdata.py): no label leaks into the signals, documented shapes.

Most tests read ../shared/data relative to the repository root. A clean checkout of this
repository (as in CI) does not have that folder, so they skip there with that reason; the
runner's helpers are also tested on synthetic cells, which always run, and the statistical tests
of the study engine run on synthetic data elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from research import realdata
from research.study_real import (
    feasible_methods,
    main,
    merge_methods,
    run_family,
    scratch,
)
from slicewise.methods.registry import METHODS
from slicewise.studies.engine import CellSpec

needs_data = pytest.mark.skipif(
    not realdata.DATA_DIR.is_dir(),
    reason=f"real data not available: {realdata.DATA_DIR} (../shared/data relative to the "
    "repository root) is absent in this checkout",
)

DATASETS = sorted(realdata.BUILDERS)
#: Pool sizes after the documented row exclusions.
POOL_SIZES = {
    "psn_irt": {41_871},
    "alpaca_eval": {805},
    "llmbar": {1_173},
    "pandalm": {993, 931},
    "unieval": {360, 1_181, 875, 474},
    "wmt_mqm_ted": {6_877},
}


@pytest.fixture(scope="module", params=[pytest.param(d, marks=needs_data) for d in DATASETS])
def data(request: pytest.FixtureRequest) -> realdata.RealData:
    name: str = request.param
    families = realdata.PSN_FAMILIES if name == "psn_irt" else None
    return realdata.load(name, families=families)


def test_no_cell_uses_its_own_label_or_a_leaking_column(data: realdata.RealData) -> None:
    for cell in data.cells():
        table, signals = cell.table, list(cell.signals)
        z = [cell.z] if isinstance(cell.z, str) else list(cell.z)
        assert signals, cell.name
        assert cell.label not in signals, cell.name
        assert not set(z) & set(signals), cell.name
        forbidden = set(data.forbidden[cell.name])
        assert not forbidden & set(signals), (cell.name, forbidden & set(signals))
        assert not forbidden & set(table.columns), (cell.name, forbidden & set(table.columns))
        y = table[cell.label].to_numpy(dtype=float)
        assert np.isfinite(y).all(), cell.name
        assert 0 <= y.min() <= y.max() <= 1, cell.name
        for signal in signals:
            s = table[signal].to_numpy(dtype=float)
            assert np.isfinite(s).all(), (cell.name, signal)  # nothing imputed, nothing missing
            assert not np.array_equal(s, y), (cell.name, signal)
            if s.std() > 0:
                assert abs(np.corrcoef(s, y)[0, 1]) < 0.999, (cell.name, signal)
        if cell.primary is not None:
            assert cell.primary in signals, cell.name


def test_pool_sizes_and_budgets_are_as_documented(data: realdata.RealData) -> None:
    sizes = {len(cell.table) for cell in data.cells()}
    assert sizes <= POOL_SIZES[data.name]
    assert max(data.budgets) < min(sizes)
    assert {f.name for f in data.families}
    assert all(f.cells for f in data.families)
    for family in data.families:
        assert all((c.kind or "categorical") == family.kind for c in family.cells)
    names = [c.name for c in data.cells()]
    assert len(set(names)) == len(names)


@needs_data
def test_psn_irt_difficulty_is_built_from_the_other_models_only() -> None:
    data = realdata.psn_irt(families=realdata.PSN_FAMILIES, candidates=("model_0", "model_7"))
    source = pd.read_csv(realdata.DATA_DIR / "psn_irt" / "items.csv")
    for cell in data.cells():
        candidate = cell.name.split("/")[0]
        table = cell.table
        assert candidate not in table.columns
        assert set(cell.signals) == set(realdata.PSN_MODELS) - {candidate}
        others = table[list(cell.signals)].to_numpy()
        np.testing.assert_allclose(table["others_correct"], others.mean(axis=1))
        np.testing.assert_array_equal(table["others_correct_n"], others.sum(axis=1))
        np.testing.assert_array_equal(table["y"], source[candidate].to_numpy(dtype=float))
        # the primary signal is the most accurate other model, chosen without the candidate
        accuracy = source[list(cell.signals)].mean()
        assert cell.primary == accuracy.idxmax()


@needs_data
def test_alpaca_eval_signals_exclude_the_candidate_and_gamed_models() -> None:
    data = realdata.alpaca_eval()
    for cell in data.cells():
        candidate = cell.name.split("/")[0]
        assert not realdata.alpaca_gamed(candidate)
        anchors = [s.split(":", 1)[1] for s in cell.signals if s.startswith("ae2:")]
        assert candidate not in anchors
        assert not any(realdata.alpaca_gamed(a) for a in anchors)
        ae1 = [s for s in cell.signals if s.startswith("ae1:")]
        assert ae1 in ([], [f"ae1:{candidate}"])
        assert cell.primary == (ae1[0] if ae1 else f"ae2:{realdata.ALPACA_FALLBACK_PRIMARY}")
    with_ae1 = {
        c.name.split("/")[0] for c in data.cells() if f"ae1:{c.name.split('/')[0]}" in c.signals
    }
    assert with_ae1 == {"claude", "vicuna-13b", "falcon-40b-instruct", "alpaca-7b"}


def synthetic_family(kind: str, seed: int = 0) -> realdata.Family:
    rng = np.random.default_rng(seed)
    m = 300
    z = rng.uniform(0, 1, m)
    y = (rng.random(m) < 0.3 + 0.4 * z).astype(float)
    frame = pd.DataFrame({"z": z, "g": np.where(z > 0.5, "a", "b"), "y": y})
    frame["s1"] = y + rng.normal(size=m)
    frame["s2"] = rng.normal(size=m)
    cells = tuple(
        CellSpec(
            name=f"c{k}",
            table=frame,
            z="z" if kind == "continuous" else "g",
            label="y",
            signals=("s1", "s2"),
            kind="continuous" if kind == "continuous" else "categorical",
            primary="s1",
        )
        for k in range(2)
    )
    return realdata.Family("f", "continuous" if kind == "continuous" else "categorical", cells, "")


def test_feasible_methods_follow_the_registry() -> None:
    categorical = feasible_methods(synthetic_family("categorical"))
    ordered = feasible_methods(synthetic_family("continuous"))
    assert categorical[0] == "naive"
    assert ordered[0] == "naive"
    assert "lace_oracle" not in ordered
    for name, spec in METHODS.items():
        if name == "lace_oracle":
            continue
        assert (name in ordered) == ("categorical" not in spec.needs)
        assert (name in categorical) == ("continuous" not in spec.needs)
    with pytest.raises(ValueError, match=r"'--methods' option must name registered methods"):
        feasible_methods(synthetic_family("continuous"), ["naive", "laec"])


def test_methods_added_later_equal_one_run_with_every_method() -> None:
    family = synthetic_family("continuous")
    kw = {"budgets": (30, 60), "reps": 3, "seed": 4, "jobs": 1}
    full = run_family(family, methods=["naive", "lace", "global_cv"], **kw).result
    first = run_family(family, methods=["naive", "lace"], **kw).result
    later = run_family(family, methods=["naive", "global_cv"], **kw).result
    merged = merge_methods(first, later)
    assert merged.methods == full.methods
    for a, b in zip(merged.cells, full.cells, strict=True):
        np.testing.assert_array_equal(a.estimates, b.estimates)
    other = run_family(family, methods=["naive", "global_cv"], **{**kw, "seed": 5}).result
    with pytest.raises(ValueError, match="different cells, budgets or splits"):
        merge_methods(first, other)


def test_scratch_command_drops_the_cache_options() -> None:
    argv = ["--dataset", "llmbar", "--cache", "/tmp/c", "--from-cache", "--refresh", "auto"]
    assert scratch([*argv, "--reps", "100"]) == ["--dataset", "llmbar", "--reps", "100"]


@needs_data
@pytest.mark.slow
def test_runner_writes_outputs_and_report(tmp_path: Path) -> None:
    out = tmp_path / "llmbar"
    report = tmp_path / "study_llmbar.md"
    argv = ["--dataset", "llmbar", "--reps", "2", "--methods", "naive,lace,global_cv,local_ppi"]
    assert main([*argv, "--out", str(out), "--report", str(report)]) == 0
    text = report.read_text()
    assert "python -m scripts.study_real --dataset llmbar" in text
    assert "## Family `subset`" in text
    assert "## Family `length`" in text
    subset = pd.read_csv(out / "subset" / "aggregate.csv")
    assert set(subset["method"]) == {"naive", "lace", "global_cv"}  # local_ppi needs an order
    length = pd.read_csv(out / "length" / "aggregate.csv")
    assert "local_ppi" in set(length["method"])
    for family in ("subset", "length"):
        for name in ("summary.csv", "aggregate.csv", "table.md", "re.png", "panels.png"):
            assert (out / family / name).exists()
    assert (out / "length" / "sparse_summary.csv").exists()
