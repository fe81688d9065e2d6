"""`slicewise profile` with several models writes what the Python API returns.

End to end from the real logs in tests/data/logs/ (lm-eval: two dummy models on one multiple-choice
task; Inspect: one mock model): `slicewise import`, a handful of human grades joined on the item id
(`slicewise join` for the long lm-eval table, `slicewise.io.build_item_table` for the Inspect one), then
`slicewise profile --model-col / --pair / --rank / --deploy`. The logs have 10 and 20 items, so the
statistics are checked on a seeded synthetic long table where the full-pool truth is known.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import slicewise as sw
from slicewise.cli import main
from slicewise.io import build_item_table

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"

#: A rater's grades of 8 of the 10 answers of each model (model, the task's question id, grade);
#: they mostly agree with the harness' `acc` and overrule it twice.
GRADES = [
    ("dummy-a", "m00", 1.0),
    ("dummy-a", "m01", 0.0),
    ("dummy-a", "m02", 0.0),
    ("dummy-a", "m03", 1.0),
    ("dummy-a", "m04", 0.0),
    ("dummy-a", "m05", 0.0),
    ("dummy-a", "m06", 0.0),
    ("dummy-a", "m07", 0.0),
    ("dummy-b", "m00", 0.0),
    ("dummy-b", "m01", 0.0),
    ("dummy-b", "m02", 1.0),
    ("dummy-b", "m03", 0.0),
    ("dummy-b", "m04", 0.0),
    ("dummy-b", "m05", 0.0),
    ("dummy-b", "m06", 0.0),
    ("dummy-b", "m07", 1.0),
]
LM_ARGS = ["--z", "doc_difficulty", "--kind", "ordinal", "--bandwidth", "2"]
LM_ARGS += ["--signals", "acc,acc_norm", "--label", "human", "--id", "doc_qid"]
LM_API: dict[str, Any] = {
    "z": "doc_difficulty",
    "kind": "ordinal",
    "bandwidth": 2.0,
    "signals": ["acc", "acc_norm"],
    "label": "human",
    "id": "doc_qid",
}
PROFILE_COLUMNS = ["estimate", "se", "lower", "upper", "naive_estimate", "naive_se", "r2", "gain"]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def quiet(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Call the API without its (expected) small-sample warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.UnpairedLabelsWarning)
        warnings.simplefilter("ignore", UserWarning)
        return func(*args, **kwargs)


def same(written: pd.DataFrame, expected: pd.DataFrame, columns: list[str]) -> None:
    assert len(written) == len(expected)
    for column in columns:
        np.testing.assert_allclose(
            written[column].to_numpy(dtype=float),
            expected[column].to_numpy(dtype=float),
            rtol=1e-12,
            atol=1e-15,
            err_msg=column,
        )


@pytest.fixture
def lm_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """lm-eval logs -> `slicewise import` -> `slicewise join` with the human grades -> items.csv.

    The joined table is checked against an independent pandas merge of the same grades.
    """
    runs = tmp_path / "runs.parquet"
    mc_a = next((LOGS / "lm_eval" / "dummy-a").glob("samples_slicewise_mc_*.jsonl"))
    argv = ["import", "lm-eval", str(mc_a), str(LOGS / "lm_eval" / "dummy-b"), "--out", str(runs)]
    assert run(argv, capsys)[0] == 0
    frame = pd.read_parquet(runs)
    assert sorted(frame["model"].unique()) == ["dummy-a", "dummy-b"]
    grades = pd.DataFrame(GRADES, columns=["model", "doc_qid", "human"])
    grades_path = tmp_path / "grades.csv"
    grades.to_csv(grades_path, index=False)
    path = tmp_path / "items.csv"
    argv = ["join", str(runs), str(grades_path), "--on", "model,doc_qid", "--out", str(path)]
    status, printed, _ = run(argv, capsys)
    assert status == 0
    assert f"20 rows, {len(GRADES)} graded (column 'human')" in printed
    merged = frame.merge(grades, on=["model", "doc_qid"], how="left", validate="one_to_one")
    pd.testing.assert_frame_equal(pd.read_csv(path), merged.pipe(_csv_round_trip, tmp_path))
    return path


def _csv_round_trip(frame: pd.DataFrame, tmp_path: Path) -> pd.DataFrame:
    frame.to_csv(tmp_path / "expected.csv", index=False)
    return pd.read_csv(tmp_path / "expected.csv")


def test_lm_eval_logs_profile_every_model(
    lm_items: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["profile", str(lm_items), *LM_ARGS, "--model-col", "model", "--method", "lace"]
    status, printed, _ = run([*argv, "--out", str(out)], capsys)
    assert status == 0
    expected = quiet(sw.profile_models, lm_items, model="model", method="lace", rng=0, **LM_API)
    written = pd.read_csv(out / "profiles.csv")
    assert written["model"].tolist() == expected.to_frame()["model"].tolist()
    same(written, expected.to_frame(), ["z", *PROFILE_COLUMNS, "n_labeled_eff"])
    payload = json.loads((out / "profiles.json").read_text())
    assert payload["models"] == ["dummy-a", "dummy-b"]
    assert payload["per_model"]["dummy-b"]["n_labeled"] == 8
    assert [r["estimate"] for r in payload["rows"]] == pytest.approx(
        expected.estimate.ravel().tolist(), rel=1e-12
    )
    assert (out / "profiles.png").stat().st_size > 1000
    assert "lace profiles of 2 models over doc_difficulty (ordinal)" in printed
    assert f"{expected['dummy-a'].estimate[0]:.3f}" in printed


def test_lm_eval_logs_gap_between_two_models(
    lm_items: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["profile", str(lm_items), *LM_ARGS, "--model-col", "model", "--method", "lace"]
    status, printed, err = run([*argv, "--pair", "dummy-a,dummy-b", "--out", str(out)], capsys)
    assert status == 0
    expected = quiet(
        sw.gap, lm_items, model="model", model_a="dummy-a", model_b="dummy-b", method="lace",
        rng=0, **LM_API,
    )  # fmt: skip
    same(pd.read_csv(out / "gap.csv"), expected.to_frame(), ["z", *PROFILE_COLUMNS])
    payload = json.loads((out / "gap.json").read_text())
    assert payload["params"]["model_a"] == "dummy-a"
    assert payload["params"]["n_pairs"] == 8
    assert "Gap dummy-a - dummy-b from paired differences on 8 items" in printed
    assert err == ""


def test_lm_eval_logs_deployment_score_per_model(
    lm_items: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["profile", str(lm_items), *LM_ARGS, "--model-col", "model"]
    status, printed, _ = run([*argv, "--deploy", "1=0.5,2=0.3,3=0.2", "--out", str(out)], capsys)
    assert status == 0
    frame = pd.read_csv(lm_items)
    deploy = {"1": 0.5, "2": 0.3, "3": 0.2}
    written = pd.read_csv(out / "deploy.csv")
    cells = pd.read_csv(out / "deploy_cells.csv")
    assert written["model"].tolist() == ["dummy-a", "dummy-b"]
    for k, name in enumerate(["dummy-a", "dummy-b"]):
        expected = sw.deployment_score(frame[frame["model"] == name], deploy=deploy, **LM_API)
        assert expected.method == "auto"
        same(written.iloc[[k]], expected.to_frame(), ["estimate", "se", "lower", "upper"])
        same(cells[cells["model"] == name], expected.contributions(), ["weight", "contribution"])
        assert f"{expected.estimate:.3f}" in printed
    payload = json.loads((out / "deploy.json").read_text())
    assert payload["deploy"] == deploy
    assert "deployment mix Q: 1=0.5, 2=0.3, 3=0.2" in printed


def test_inspect_log_with_human_grades_deployment_score(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = next((LOGS / "inspect").glob("*.json"))
    runs = tmp_path / "runs.csv"
    assert run(["import", "inspect", str(log), "--out", str(runs)], capsys)[0] == 0
    frame = pd.read_csv(runs)
    ok = frame[frame["error"].isna()]  # q07 errored: no scores, so no signals either
    grades = pd.DataFrame(
        {"item_id": ["q01", "q02", "q03", "q04", "q05", "q06", "q09", "q10", "q14", "q17"]}
    )
    grades["human"] = [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]
    gold = ok[["item_id", "difficulty", "subject"]].merge(grades, on="item_id", how="left")
    items = build_item_table(
        gold, "human", {"inspect": (ok, ["match", "includes"])}, profile=["difficulty", "subject"]
    )
    path = tmp_path / "items.csv"
    items.to_csv(path, index=False)
    out = tmp_path / "out"
    argv = ["profile", str(path), "--z", "difficulty", "--kind", "ordinal", "--label", "gold"]
    argv += ["--signals", "inspect:match,inspect:includes", "--deploy", "1=1,2=1,3=2"]
    status, printed, _ = run([*argv, "--out", str(out)], capsys)
    assert status == 0
    expected = sw.deployment_score(
        path,
        z="difficulty",
        kind="ordinal",
        label="gold",
        signals=["inspect:match", "inspect:includes"],
        deploy={"1": 1.0, "2": 1.0, "3": 2.0},
    )
    written = pd.read_csv(out / "deploy.csv")
    assert "model" not in written.columns
    same(written, expected.to_frame(), ["estimate", "se", "lower", "upper", "naive_estimate"])
    assert expected.n_labeled == 10
    assert expected.n_pool == 19
    np.testing.assert_allclose(expected.cell_weight, [0.25, 0.25, 0.5])
    assert f"{expected.estimate:.3f}" in printed


# --- a synthetic long table where the statistics are meaningful ---------------------------------

MODELS = ("m0", "m1", "m2")
LEVELS = np.arange(1, 5)


def synthetic(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Three models on 1,600 items with a shared latent difficulty; gold on the same 320 items.

    Z = level (ordinal 1-4); signals: the item-level difficulty proxy `diff` and each model's own
    `judge`; `strong` is an expensive rater on 640 items holding the labeled ones. The full-pool
    correctness `truth` is kept for the checks.
    """
    rng = np.random.default_rng(20240611)
    m = 1600
    level = rng.integers(1, 5, m)
    u = rng.normal(size=m)
    diff = u + rng.normal(0, 0.6, m)
    order = rng.permutation(m)
    labeled, rated = order[:320], order[:640]
    parts = []
    for k, name in enumerate(MODELS):
        skill = 0.8 - 0.35 * level + 0.3 * k * (level - 2.5)
        y = (skill - u + rng.normal(0, 0.6, m) > 0).astype(float)
        part = pd.DataFrame({"id": np.arange(m), "model": name, "level": level, "diff": diff})
        part["judge"] = y + rng.normal(0, 0.9, m)
        part["strong"] = np.where(np.isin(np.arange(m), rated), y + rng.normal(0, 0.3, m), np.nan)
        part["truth"] = y
        part["y"] = np.where(np.isin(np.arange(m), labeled), y, np.nan)
        parts.append(part)
    frame = pd.concat(parts, ignore_index=True)
    path = tmp_path / "long.csv"
    frame.drop(columns="truth").to_csv(path, index=False)
    return path, frame


SYN_ARGS = ["--z", "level", "--kind", "ordinal", "--signals", "diff,judge", "--label", "y"]
SYN_ARGS += ["--model-col", "model", "--id", "id"]
SYN_API: dict[str, Any] = {
    "z": "level",
    "kind": "ordinal",
    "signals": ["diff", "judge"],
    "label": "y",
    "model": "model",
    "id": "id",
}


def truth_by_level(frame: pd.DataFrame) -> pd.DataFrame:
    """Full-pool mean correctness per (level, model): the pool-target profile."""
    return frame.pivot_table(index="level", columns="model", values="truth", aggfunc="mean")


def test_synthetic_profiles_match_api_and_cover_the_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, frame = synthetic(tmp_path)
    out = tmp_path / "out"
    status, _, _ = run(["profile", str(path), *SYN_ARGS, "--out", str(out)], capsys)
    assert status == 0
    expected = sw.profile_models(path, rng=0, **SYN_API)  # the CLI's default seed is 0
    assert expected.method == "auto"
    written = pd.read_csv(out / "profiles.csv")
    same(written, expected.to_frame(), ["z", *PROFILE_COLUMNS])
    error = written["estimate"] - truth_by_level(frame).to_numpy().T.ravel()
    assert np.all(np.abs(error) < 3 * written["se"]), error / written["se"]  # one draw: 3 se
    assert float(np.mean(expected.gain)) > 1.2  # the judges help


def test_synthetic_wide_layout_with_model_column_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, frame = synthetic(tmp_path)
    wide = frame.pivot(index=["id", "level", "diff"], columns="model", values="y")
    wide = wide.reset_index().rename(columns={m: f"gold_{m}" for m in MODELS})
    assert len(wide) == 1600
    path = tmp_path / "wide.csv"
    wide.to_csv(path, index=False)
    out = tmp_path / "out"
    argv = ["profile", str(path), "--z", "level", "--kind", "ordinal", "--signals", "diff"]
    argv += ["--label", "m0=gold_m0,m2=gold_m2", "--method", "lace", "--out", str(out)]
    assert run(argv, capsys)[0] == 0
    expected = sw.profile_models(
        path, z="level", kind="ordinal", signals=["diff"], method="lace", rng=0,
        label={"m0": "gold_m0", "m2": "gold_m2"},
    )  # fmt: skip
    written = pd.read_csv(out / "profiles.csv")
    assert written["model"].unique().tolist() == ["m0", "m2"]
    same(written, expected.to_frame(), ["z", *PROFILE_COLUMNS])
    argv[argv.index("--label") + 1] = "gold_m0,gold_m1"
    assert run(argv, capsys)[0] == 0
    assert pd.read_csv(out / "profiles.csv")["model"].unique().tolist() == ["gold_m0", "gold_m1"]


def test_synthetic_gap_matches_api_and_beats_separate_profiles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, frame = synthetic(tmp_path)
    out = tmp_path / "out"
    argv = ["profile", str(path), *SYN_ARGS, "--method", "lace", "--pair", "m2,m0"]
    assert run([*argv, "--paired-signals", "difference", "--out", str(out)], capsys)[0] == 0
    expected = sw.gap(
        path, model_a="m2", model_b="m0", method="lace", paired_signals="difference", rng=0,
        **SYN_API,
    )  # fmt: skip
    written = pd.read_csv(out / "gap.csv")
    same(written, expected.to_frame(), ["z", *PROFILE_COLUMNS])
    separate = sw.profile_models(path, method="lace", models=["m2", "m0"], rng=0, **SYN_API)
    assert np.all(written["se"] < np.sqrt((separate.se**2).sum(axis=0)))  # shared difficulty
    truth = truth_by_level(frame)
    gap_truth = (truth["m2"] - truth["m0"]).to_numpy()
    assert np.all(np.abs(written["estimate"] - gap_truth) < 3 * written["se"])


@pytest.mark.parametrize("correction", ["maxt", "bonferroni"])
def test_synthetic_ranking_matches_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], correction: str
) -> None:
    path, frame = synthetic(tmp_path)
    out = tmp_path / "out"
    argv = ["profile", str(path), *SYN_ARGS, "--rank", "--correction", correction]
    status, printed, _ = run([*argv, "--draws", "2000", "--out", str(out)], capsys)
    assert status == 0
    expected = sw.rank_models(path, correction=correction, n_draws=2000, rng=0, **SYN_API)
    gaps = pd.read_csv(out / "ranking.csv")
    same(gaps, expected.to_frame(), ["z", "estimate", "se", "lower", "upper"])
    assert gaps["verdict"].tolist() == expected.to_frame()["verdict"].tolist()
    ranks = pd.read_csv(out / "ranks.csv")
    assert ranks["model"].tolist() == expected.rank_frame()["model"].tolist()
    same(ranks, expected.rank_frame(), ["score", "rank_best", "rank_worst"])
    payload = json.loads((out / "ranking.json").read_text())
    assert payload["critical_value"] == pytest.approx(expected.critical_value(), rel=1e-12)
    assert f"critical value {expected.critical_value():.3f}" in printed
    truth = truth_by_level(frame)
    for row in gaps.itertuples():
        true_gap = truth.loc[row.z, row.model_a] - truth.loc[row.z, row.model_b]
        a_wins, b_wins = f"{row.model_a} > {row.model_b}", f"{row.model_b} > {row.model_a}"
        assert row.verdict != (a_wins if true_gap < 0 else b_wins)  # no wrong sign resolved
        if abs(true_gap) > 0.25:  # > 5 se: resolved with the right sign
            assert row.verdict == (a_wins if true_gap > 0 else b_wins), row


def test_ranking_counts_a_floored_interval_in_the_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both models answer every 'easy' item correctly: that gap's se is the Agresti-Coull floor
    while its influence values are 0. With one pair and disjoint categories the three gaps are
    independent, so the max-|t| critical value is Sidak's for 3 intervals (it was Sidak's for 2
    when the floored member got a zero variance in the correlation)."""
    rng = np.random.default_rng(5)
    g = np.repeat(["easy", "mid", "hard"], 100)
    wide = pd.DataFrame({"g": g})
    wide["a"] = np.where(g == "easy", 1.0, (rng.random(300) < 0.5).astype(float))
    wide["b"] = np.where(g == "easy", 1.0, (rng.random(300) < 0.4).astype(float))
    wide["s"] = wide["a"] - wide["b"] + rng.normal(0, 1, 300)
    wide.loc[~np.isin(np.arange(300), rng.permutation(300)[:90]), ["a", "b"]] = np.nan
    path = tmp_path / "wide.csv"
    wide.to_csv(path, index=False)
    out = tmp_path / "out"
    argv = ["profile", str(path), "--z", "g", "--kind", "categorical", "--signals", "s"]
    assert run([*argv, "--label", "a,b", "--rank", "--out", str(out)], capsys)[0] == 0
    payload = json.loads((out / "ranking.json").read_text())
    assert payload["n_family"] == 3
    sidak = float(stats.norm.ppf(0.5 + 0.95 ** (1 / 3) / 2))  # 2.388
    assert abs(payload["critical_value"] - sidak) < 0.05, payload["critical_value"]


def test_synthetic_deployment_scores_match_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, frame = synthetic(tmp_path)
    spec = tmp_path / "mix.csv"
    pd.DataFrame({"level": [1, 2, 3, 4], "weight": [0.1, 0.2, 0.3, 0.4]}).to_csv(spec, index=False)
    out = tmp_path / "out"
    argv = ["profile", str(path), *SYN_ARGS, "--deploy", str(spec), "--models", "m1,m0"]
    assert run([*argv, "--out", str(out)], capsys)[0] == 0
    written = pd.read_csv(out / "deploy.csv")
    assert written["model"].tolist() == ["m1", "m0"]
    table = pd.read_csv(path)
    truth = truth_by_level(frame)
    for k, name in enumerate(["m1", "m0"]):
        api = {key: v for key, v in SYN_API.items() if key != "model"}
        expected = sw.deployment_score(
            table[table["model"] == name], deploy=sw.read_deploy(spec), **api
        )
        same(written.iloc[[k]], expected.to_frame(), ["estimate", "se", "naive_estimate"])
        psi = float(np.dot([0.1, 0.2, 0.3, 0.4], truth[name]))
        assert abs(expected.estimate - psi) < 3 * expected.se


def test_synthetic_cascade_and_break_even_match_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = synthetic(tmp_path)
    one = tmp_path / "m0.csv"
    pd.read_csv(path).query("model == 'm0'").to_csv(one, index=False)
    out = tmp_path / "out"
    argv = ["profile", str(one), "--z", "level", "--kind", "ordinal", "--signals", "diff"]
    argv += ["--label", "y", "--rater", "strong", "--cost-rater", "1", "--cost-label", "20"]
    status, printed, _ = run([*argv, "--out", str(out)], capsys)
    assert status == 0
    expected = sw.cascade(one, z="level", kind="ordinal", signals="diff", rater="strong", label="y")
    same(pd.read_csv(out / "cascade.csv"), expected.to_frame(), ["z", *PROFILE_COLUMNS])
    plan = sw.cascade_break_even(
        r2_y_xs=np.asarray(expected.params["r2_y_xs"]),
        r2_y_s=np.asarray(expected.params["r2_y_s"]),
        cost_rater=1.0,
        cost_label=20.0,
    )
    advice = pd.read_csv(out / "break_even.csv")
    same(advice, plan.to_frame(), ["cost_ratio", "break_even", "rater_per_label", "efficiency"])
    assert advice["pays"].map({"yes": True, "no": False}).tolist() == plan.pays.tolist()
    assert bool(np.all(plan.pays))  # a rater with R^2 ~ 0.8 at 1/20 of a label's cost pays
    assert f"the rater pays at {len(advice)} of {len(advice)} grid points" in printed


# --- single-model behaviour and errors -------------------------------------------------------


def test_one_label_column_keeps_the_single_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from slicewise.reports.output import format_table

    path, _ = synthetic(tmp_path)
    one = pd.read_csv(path).query("model == 'm1'").rename(columns={"y": "y,graded"})
    items = tmp_path / "one.csv"
    one.to_csv(items, index=False)
    argv = ["profile", str(items), "--z", "level", "--kind", "ordinal", "--signals", "judge"]
    status, printed, _ = run([*argv, "--label", "y,graded", "--method", "lace"], capsys)
    assert status == 0  # a column whose name holds a comma is still one column
    expected = sw.profile(
        items, z="level", kind="ordinal", signals=["judge"], label="y,graded", method="lace"
    )
    assert printed.splitlines()[: expected.size + 2] == format_table(expected).splitlines()
    status, printed, _ = run([*argv, "--label", "y,graded"], capsys)
    assert status == 0
    assert printed.startswith("auto profile over level (ordinal)")


ERRORS = [
    (["--label", "y", "--rank"], "--rank compares models: give --model-col COL"),
    (["--label", "y", "--pair", "m0,m1"], "--pair compares models"),
    (["--label", "y", "--models", "m0"], "--models picks models of a long"),
    (["--label", "y", "--model-col", "model", "--rank", "--method", "lace_shrunk"], "linear method"),
    (["--label", "y", "--model-col", "model", "--deploy", "1=1", "--method", "lace_shrunk"],
     "--deploy needs a linear method's influence values: --method auto, lace, global_cv, naive; "
     "got "
     "--method lace_shrunk"),
    (["--label", "y", "--rater", "strong", "--method", "lace"], "has no --method choice"),
    (["--label", "y", "--model-col", "model", "--rater", "strong"], "does not combine"),
    (["--label", "y", "--model-col", "model", "--pair", "m0"], "exactly two models A,B; got 'm0'"),
    (["--label", "y", "--model-col", "model", "--pair", "m0,m1", "--rank"],
     "--pair and --rank are separate analyses"),
    (["--label", "y", "--model-col", "model", "--correction", "bonferroni"],
     "--correction applies to --rank, not to per-model profiles"),
    (["--label", "y", "--rater", "strong", "--cost-rater", "1"], "go together"),
    (["--label", "y", "--model-col", "model", "--select"], "--select applies to a one-model"),
    (["--label", "y", "--model-col", "model", "--rank", "--C", "2"],
     "--C applies to a one-model profile or per-model profiles .* or --pair, not to --rank; got "
     "--C 2.0"),
    (["--label", "y", "--model-col", "model", "--deploy", "1=1", "--seed", "3"],
     "--seed applies to"),
    (["--label", "y,judge", "--model-col", "model"], "names several columns, but --model-col"),
    (["--label", "m0=y,judge"], "mixes model=column pairs and plain columns"),
    (["--label", "y,,judge"], "has an empty entry"),
    (["--label", "y", "--model-col", "model", "--deploy", "1=1", "--models", "m0,zz"],
     r"--models names model\(s\) \['zz'\]"),
    (["--label", "y", "--model-col", "model", "--deploy", "9=1"], "names level"),
    (["--label", "y", "--model-col", "model", "--deploy", "1:1"], "LEVEL=WEIGHT"),
]  # fmt: skip


@pytest.mark.parametrize(("flags", "message"), ERRORS)
def test_incompatible_flags_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    path, _ = synthetic(tmp_path)
    argv = ["profile", str(path), "--z", "level", "--kind", "ordinal", "--signals", "diff"]
    status, printed, err = run([*argv, *flags, "--id", "id"], capsys)
    assert status == 2
    assert printed == ""
    assert err.startswith("slicewise: error: "), err
    assert err.count("\n") == 1, err
    assert re.search(message, err), err
