"""Every documented bad input gets a ValueError naming the column or parameter, rule and value."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.exceptions import (
    ConstantSignalWarning,
    EmptyNeighbourhoodWarning,
    FullyLabeledWarning,
)
from slicewise.sources.gold import read_gold


def frame(m: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    level = rng.integers(1, 6, m)
    y = (rng.random(m) < 0.3 + 0.1 * level).astype(float)
    out = pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(m)],
            "level": level,
            "x": rng.normal(size=m),
            "judge": y + rng.normal(0, 0.5, m),
            "conf": rng.random(m),
            "correct": y,
        }
    )
    out.loc[rng.permutation(m)[: m // 2], "correct"] = np.nan
    return out


def run(data: pd.DataFrame, **kwargs: object) -> sw.ProfileResult:
    options: dict[str, object] = {
        "z": "level",
        "signals": ["judge", "conf"],
        "label": "correct",
        "kind": "ordinal",
    }
    options.update(kwargs)
    return sw.profile(data, **options)  # type: ignore[arg-type]


def test_missing_z_counts_rows() -> None:
    data = frame()
    data.loc[[3, 5, 7], "level"] = np.nan
    with pytest.raises(ValueError, match=r"`z` column 'level' has 3 missing values"):
        run(data)


def test_non_numeric_signal_names_column_and_count() -> None:
    data = frame()
    data["judge"] = data["judge"].astype(object)
    data.loc[[1, 2], "judge"] = "n/a"
    with pytest.raises(ValueError, match=r"Signal column 'judge' has 2 non-numeric values"):
        run(data)


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_signal(bad: float) -> None:
    data = frame()
    data.loc[[4], "conf"] = bad
    with pytest.raises(ValueError, match=r"Signal column 'conf' has 1 infinite values"):
        run(data)


def test_missing_signal_with_missing_error() -> None:
    data = frame()
    data.loc[[4], "conf"] = np.nan
    with pytest.raises(ValueError, match=r"Signal column 'conf' has 1 missing values \(of 200"):
        run(data, missing="error")


def test_label_outside_unit_interval() -> None:
    data = frame()
    labeled = data.index[data["correct"].notna()]
    data.loc[labeled[:4], "correct"] = 2.0
    with pytest.raises(ValueError, match=r"Label column 'correct' has 4 values outside \[0, 1\]"):
        run(data)


def test_no_labeled_rows() -> None:
    data = frame()
    data["correct"] = np.nan
    with pytest.raises(ValueError, match=r"Label column 'correct' has no labeled rows \(all 200"):
        run(data)


def test_fully_labeled_warns_that_lace_reduces_to_naive() -> None:
    data = frame().assign(correct=lambda f: f["correct"].fillna(0.0))
    with pytest.warns(FullyLabeledWarning, match="reduces to the naive local mean"):
        res = run(data)
    np.testing.assert_allclose(res.estimate, res.naive_estimate, atol=1e-12)
    assert any("reduces to the naive" in note for note in res.notes)


def test_duplicate_ids() -> None:
    data = frame()
    data.loc[[10, 11], "id"] = "q0"
    with pytest.raises(ValueError, match=r"Id column 'id' has 1 duplicated ids \(e.g. 'q0'\)"):
        run(data, id="id")


@pytest.mark.parametrize(
    ("param", "value", "pattern"),
    [
        ("method", "lacey", r"'method' parameter of profile must be one of .*'naive'.*'lace'"),
        ("kind", "nominal", r"'kind' parameter of profile must be one of 'continuous'"),
        ("target", "world", r"'target' parameter of profile must be one of 'pool', 'population'"),
        ("level", 1.0, r"'level' parameter of profile must be a float in \(0, 1\). Got 1.0"),
        ("level", 0.0, r"'level' parameter of profile must be a float in \(0, 1\). Got 0.0"),
        ("ridge", -1.0, r"'ridge' parameter of profile must be a finite float >= 0. Got -1.0"),
        ("bandwidth", -0.5, r"'bandwidth' parameter of profile must be > 0"),
        ("nuisance_scale", 0.5, r"'nuisance_scale' parameter of profile must be a float >= 1"),
    ],
)
def test_parameter_errors(param: str, value: object, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        run(frame(), **{param: value})


def test_negative_continuous_bandwidth() -> None:
    with pytest.raises(ValueError, match=r"'bandwidth' parameter of profile must be > 0"):
        run(frame(), z="x", kind="continuous", bandwidth=-1.0)


def test_unknown_columns_are_listed() -> None:
    with pytest.raises(
        ValueError, match=r"'signals' parameter of profile names column\(s\) 'jduge'"
    ):
        run(frame(), signals=["jduge"])


def test_label_listed_as_signal() -> None:
    with pytest.raises(ValueError, match="also listed in `signals`"):
        run(frame(), signals=["judge", "correct"])


def test_bandwidth_rejected_for_categorical() -> None:
    with pytest.raises(ValueError, match="does not apply to categorical profiles"):
        run(frame(), kind="categorical", bandwidth=1.0)


def test_grid_level_must_exist() -> None:
    with pytest.raises(ValueError, match=r"names categories \['hard'\] that do not occur"):
        run(
            frame().assign(level=lambda f: f["level"].astype(str)),
            kind="categorical",
            grid=["hard"],
        )


def test_lace_without_signals_is_an_error() -> None:
    with pytest.raises(ValueError, match="Method 'lace' needs at least one cheap signal"):
        run(frame(), signals=None, method="lace")


def test_oracle_needs_coef() -> None:
    with pytest.raises(ValueError, match="Method 'lace_oracle' needs a supplied coefficient"):
        run(frame(), method="lace_oracle")


def test_oracle_coef_shape_is_checked() -> None:
    with pytest.raises(ValueError, match=r"'coef' parameter of profile must give 2 finite"):
        run(frame(), method="lace_oracle", coef=np.ones((5, 3)))


def test_empty_grid_point_is_nan_with_one_warning() -> None:
    data = frame()
    data.loc[data["level"] == 5, "correct"] = np.nan  # level 5 has no labels
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = run(data)
    empty = [w for w in caught if issubclass(w.category, EmptyNeighbourhoodWarning)]
    assert len(empty) == 1
    assert "1 grid point(s) have no labeled weight" in str(empty[0].message)
    assert "5.0" in str(empty[0].message) or "5" in str(empty[0].message)
    assert np.isnan(res.estimate[4])
    assert np.isnan(res.se[4])
    assert np.all(np.isfinite(res.estimate[:4]))


def test_constant_signal_inside_a_neighbourhood_does_not_break_the_solve() -> None:
    data = frame()
    data.loc[data["level"] == 2, "conf"] = 0.5  # constant within level 2 only
    res = run(data, ridge=0.0)
    assert np.all(np.isfinite(res.estimate))
    assert np.all(np.isfinite(res.se))


@pytest.mark.parametrize("value", [1.0, 0.1])
def test_constant_signal_over_pool_warns_by_name(value: float) -> None:
    # 0.1's pool sd is the rounding of its mean (about 1e-17), not 0: still a constant column
    data = frame().assign(conf=value)
    with pytest.warns(ConstantSignalWarning, match=r"\['conf'\] are constant over the pool"):
        res = run(data)
    assert np.all(np.isfinite(res.estimate))


def test_path_inputs_and_unknown_suffix(tmp_path: pytest.TempPathFactory) -> None:
    data = frame()
    path = tmp_path / "items.parquet"  # type: ignore[operator]
    data.to_parquet(path)
    from_path = run(path)  # type: ignore[arg-type]
    from_frame = run(data)
    # a Parquet file is scanned out of core: the same sums in another order
    np.testing.assert_allclose(from_path.estimate, from_frame.estimate, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"suffix '.xlsx' is not a supported table format"):
        run(tmp_path / "items.xlsx")  # type: ignore[operator, arg-type]


def test_a_table_that_is_neither_a_frame_nor_a_path_names_the_parameter() -> None:
    records = frame().to_dict("records")  # a list of rows, not a DataFrame
    common = {"z": "level", "signals": ["conf"], "label": "correct"}
    with pytest.raises(TypeError, match=r"'table' parameter of profile .* Got list instead"):
        sw.profile(records, **common)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"'table' parameter of domains .* Got list instead"):
        sw.domains(records, domain="level", label="correct")  # type: ignore[arg-type]
    # the gold table of an out-of-core pool (the in-memory join checks it in slicewise.io.join)
    with pytest.raises(TypeError, match=r"'gold' parameter of profile .* Got list instead"):
        read_gold(records, on="id", label="correct")  # type: ignore[arg-type]
