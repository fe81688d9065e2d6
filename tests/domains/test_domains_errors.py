"""Every documented bad input of sw.domains, sw.validate and sw.sample raises a clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import slicewise as sw
from slicewise.exceptions import EmptyDomainWarning, SmallDomainWarning


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    bench = np.repeat(["a", "b", "c", "d", "e", "f"], 200)
    hist = (rng.random(1200) < 0.6).astype(float)
    y = np.where(rng.random(1200) < 0.8, hist, 1 - hist)
    out = pd.DataFrame({"bench": bench, "hist": hist, "correct": y, "suite": "s"})
    drawn = sw.sample(out, design="stratified", strata="bench", fraction=0.2, rng=1)
    return drawn.apply(out, label="correct")


def run(frame: pd.DataFrame, **kw: object) -> sw.DomainResult:
    args: dict[str, object] = {
        "domain": "bench",
        "signals": ["hist"],
        "label": "correct",
        "strata": "stratum",
        "method": "greg",
    }
    args.update(kw)
    return sw.domains(frame, **args)  # type: ignore[arg-type]


def test_inclusion_outside_unit_interval(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[bad["correct"].notna().to_numpy().nonzero()[0][:3], "pi"] = 1.5
    with pytest.raises(ValueError, match=r"'pi' has 3 values outside \(0, 1\] on labeled rows"):
        run(bad, strata=None)
    bad.loc[bad.index[bad["correct"].notna()][:2], "pi"] = 0.0
    with pytest.raises(ValueError, match=r"values outside \(0, 1\]"):
        run(bad, strata=None)


def test_inclusion_missing_on_labeled_rows(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[bad.index[bad["correct"].notna()][:4], "pi"] = np.nan
    with pytest.raises(
        ValueError, match=r"'pi' has 4 missing or non-finite values on labeled rows"
    ):
        run(bad)


def test_inclusion_inconsistent_with_strata(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[bad.index[bad["correct"].notna()][:1], "pi"] = 0.5
    with pytest.raises(ValueError, match=r"disagrees with the stratified design.*stratum 'a'"):
        run(bad)


def test_missing_columns_and_values(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="'domain' parameter of domains names column"):
        run(frame, domain="nope")
    with pytest.raises(ValueError, match="'inclusion' parameter of domains names column"):
        run(frame, inclusion="weights")
    bad = frame.copy()
    bad.loc[0, "bench"] = None
    with pytest.raises(ValueError, match="domain column 'bench' has 1 missing values"):
        run(bad)
    bad = frame.copy()
    bad.loc[5, "hist"] = np.nan
    with pytest.raises(ValueError, match="Signal column 'hist' has 1 missing"):
        run(bad)


def test_label_rules(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[bad.index[bad["correct"].notna()][:2], "correct"] = 2.0
    with pytest.raises(ValueError, match=r"Label column 'correct' has 2 values outside \[0, 1\]"):
        run(bad)
    with pytest.raises(ValueError, match="also listed in `signals`"):
        run(frame, signals=["hist", "correct"])
    empty = frame.assign(correct=np.nan)
    with pytest.raises(ValueError, match="has no labeled rows"):
        run(empty)


def test_unknown_method_lists_valid_ones(frame: pd.DataFrame) -> None:
    with pytest.raises(
        ValueError, match="'method' parameter of domains must be one of 'ht', 'hajek'"
    ):
        run(frame, method="lace")


def test_method_needs(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="Method 'greg' needs at least one cheap signal"):
        run(frame, signals=None)
    with pytest.raises(ValueError, match="'pp-ts' needs at least one taxonomy level"):
        run(frame, method="pp-ts")
    with pytest.raises(ValueError, match="'prediction' parameter of domains must name one of"):
        run(frame, method="ppi", prediction="other")


def test_taxonomy_must_be_constant_within_domain(frame: pd.DataFrame) -> None:
    bad = frame.assign(suite=np.where(np.arange(len(frame)) % 2, "x", "y"))
    with pytest.raises(ValueError, match="Taxonomy column 'suite' takes several values within 6"):
        run(bad, method="pp-ts", taxonomy=["suite"])


def test_option_rules(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="'level' parameter of domains must be a float in"):
        run(frame, level=1.5)
    with pytest.raises(ValueError, match="'variance_df' parameter of domains must be a finite"):
        run(frame, variance_df=-1)
    with pytest.raises(ValueError, match="'covariates' parameter of domains must be one of"):
        run(frame, covariates="everything")
    with pytest.raises(ValueError, match="'folds' parameter of validate must be an integer >= 2"):
        sw.validate(frame, domain="bench", label="correct", signals=["hist"], folds=1)


def test_empty_domain_gives_nan_and_one_warning(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    bad.loc[bad["bench"] == "c", "correct"] = np.nan
    with pytest.warns(EmptyDomainWarning, match="1 domain\\(s\\) have no labeled unit.*: c"):
        res = run(bad, strata=None)
    table = res.to_frame()
    assert np.isnan(table.loc[table["bench"] == "c", "estimate"]).all()
    assert np.isfinite(table.loc[table["bench"] != "c", "estimate"]).all()


def test_tiny_domain_warns_small(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    rows = bad.index[(bad["bench"] == "d") & bad["correct"].notna()][3:]
    bad.loc[rows, "correct"] = np.nan
    with pytest.warns(SmallDomainWarning, match="fewer than 10 labels"):
        run(bad, strata=None, method="ht")


def test_sample_rules(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="Exactly one of the 'budget' and 'fraction'"):
        sw.sample(frame, strata="bench")
    with pytest.raises(ValueError, match="'fraction' parameter of sample must be a float in"):
        sw.sample(frame, strata="bench", fraction=1.5)
    with pytest.raises(ValueError, match="'budget' parameter of sample must be at most"):
        sw.sample(frame, strata="bench", budget=5000)
    with pytest.raises(ValueError, match="design='stratified' needs the 'strata' parameter"):
        sw.sample(frame, budget=10)
    with pytest.raises(ValueError, match="'design' parameter of sample must be one of"):
        sw.sample(frame, design="cluster", budget=10)
    with pytest.raises(ValueError, match="allocation='neyman' needs the 'neyman' parameter"):
        sw.sample(frame, strata="bench", budget=60, allocation="neyman")
    with pytest.raises(ValueError, match="budget 5 of sample is below the 12 units"):
        sw.sample(frame, strata="bench", budget=5)
    with pytest.raises(ValueError, match="names strata 'zz'"):
        sw.sample(frame, strata="bench", budget=60, allocation="user", shares={"zz": 1.0})
    bad = frame.assign(size=0.0)
    with pytest.raises(ValueError, match="Size column 'size' has 1200 values <= 0"):
        sw.sample(bad, design="poisson", budget=60, size="size")


def test_zero_variance_domain_warns(frame: pd.DataFrame) -> None:
    bad = frame.copy()
    rows = bad.index[(bad["bench"] == "e") & bad["correct"].notna()]
    bad.loc[rows, "correct"] = 1.0
    with pytest.warns(SmallDomainWarning, match="1 domain\\(s\\) have a zero design variance.*: e"):
        run(bad, method="ht")
