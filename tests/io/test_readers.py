"""Tests of slicewise.io on logs written by the real tools (see tests/data/logs/README.md).

Expected values come from what the fixture tasks are known to produce, not from the
readers: Inspect's mockllm/model always answers "Default output from mockllm/model",
lm-eval's dummy model always generates "lol" and scores choices at random (the
per-choice log-likelihoods are in the samples file), and HELM's statistics are in the
JSON file itself.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from slicewise.io import (
    LogReadWarning,
    build_item_table,
    import_logs,
    inspect_value_to_float,
    read_helm,
    read_inspect,
    read_lm_eval,
    read_logs,
)

LOGS = Path(__file__).parent.parent / "data" / "logs"
INSPECT_DIR = LOGS / "inspect"
INSPECT_EVAL = next(INSPECT_DIR.glob("*.eval"))
INSPECT_JSON = next(INSPECT_DIR.glob("*.json"))
LM_DIR = LOGS / "lm_eval"
LM_A = LM_DIR / "dummy-a"
LM_B = LM_DIR / "dummy-b"
LM_GEN = next(LM_A.glob("samples_slicewise_gen_*.jsonl"))
LM_MC_A = next(LM_A.glob("samples_slicewise_mc_*.jsonl"))
LM_MC_B = next(LM_B.glob("samples_slicewise_mc_*.jsonl"))
HELM_DIR = LOGS / "helm"
HELM_PLAIN = HELM_DIR / "simple1:model=simple_model1"
HELM_AUG = HELM_DIR / "simple1:model=simple_model1,data_augmentation=extra_space2"

# Recent Inspect writes .eval members with Zstandard; Python < 3.14 needs `zstandard`.
HAS_ZSTD = sys.version_info >= (3, 14) or importlib.util.find_spec("zstandard") is not None
needs_zstd = pytest.mark.skipif(
    not HAS_ZSTD, reason="reading Zstandard .eval logs needs the 'zstandard' package"
)

IDS = [f"q{i:02d}" for i in range(1, 21)]
ERROR_ID = "q07"
NO_SCORE_ID = "q13"
# includes(): the target (case-folded) occurs in "Default output from mockllm/model".
INCLUDES_CORRECT = {"q01", "q02", "q03", "q04", "q08", "q10", "q12", "q13", "q15", "q17", "q19"}
# match() (location "end"): the reply ends with the target.
MATCH_CORRECT = {"q01", "q03", "q08", "q15", "q17", "q19"}
# letter_grade: P for difficulty 2, N for 3, C/I from includes for 1; nothing for q13.
LETTER = {
    "q01": 0.5, "q02": 0.0, "q03": 1.0, "q04": 0.5, "q05": 0.0, "q06": 0.0, "q08": 0.0,
    "q09": 0.0, "q10": 0.5, "q11": 0.0, "q12": 1.0, "q14": 0.0, "q15": 1.0, "q16": 0.5,
    "q17": 0.0, "q18": 0.0, "q19": 0.5, "q20": 0.0,
}  # fmt: skip


def _dataset() -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (LOGS / "inspect_dataset.jsonl").read_text().splitlines()]
    return {row["id"]: row for row in rows}


def _read_quietly(func: Any, *args: Any, **kwargs: Any) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LogReadWarning)
        frame: pd.DataFrame = func(*args, **kwargs)
    return frame


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- Inspect


def test_value_to_float_matches_inspect_defaults() -> None:
    values = ["C", "P", "I", "N", "yes", "TRUE", "no", "False", "0.25", 3, 0.5, True, None]
    expected = [1.0, 0.5, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.25, 3.0, 0.5, 1.0, math.nan]
    got = [inspect_value_to_float(v) for v in values]
    np.testing.assert_array_equal(got, expected)
    assert math.isnan(inspect_value_to_float("maybe"))
    assert math.isnan(inspect_value_to_float([1, 2]))


def _check_inspect_frame(frame: pd.DataFrame, epochs: int) -> None:
    dataset = _dataset()
    assert list(frame.columns) == [
        "item_id", "model", "task", "epoch", "log", "difficulty", "subject",
        "includes", "match", "letter_grade", "judge", "rubric.short", "rubric.words", "error",
    ]  # fmt: skip
    assert len(frame) == 20 * epochs
    assert sorted(frame["item_id"].unique()) == IDS
    assert sorted(frame["epoch"].unique().tolist()) == list(range(1, epochs + 1))
    assert (frame.groupby("item_id").size() == epochs).all()
    assert set(frame["model"]) == {"mockllm/model"}
    assert set(frame["task"]) == {"slicewise_fixture"}
    for row in frame.itertuples():
        item = dataset[row.item_id]
        assert row.difficulty == item["difficulty"]
        assert row.subject == item["subject"]
        if row.item_id == ERROR_ID:
            assert "simulated solver failure on sample q07" in row.error
            for column in ("includes", "match", "letter_grade", "judge", "rubric.short"):
                assert math.isnan(frame.at[row.Index, column]), column
            continue
        assert pd.isna(row.error)
        assert row.includes == (1.0 if row.item_id in INCLUDES_CORRECT else 0.0)
        assert row.match == (1.0 if row.item_id in MATCH_CORRECT else 0.0)
        assert row.judge == pytest.approx(item["difficulty"] / 10)
        # dict-valued score: one column per key, letters converted like any score
        assert frame.at[row.Index, "rubric.short"] == (1.0 if len(item["answer"]) <= 5 else 0.0)
        assert frame.at[row.Index, "rubric.words"] == len(item["answer"].split())
        if row.item_id == NO_SCORE_ID:
            assert math.isnan(row.letter_grade)
        else:
            assert row.letter_grade == LETTER[row.item_id]


def test_inspect_json_log() -> None:
    with pytest.warns(LogReadWarning) as record:
        frame = read_inspect(INSPECT_JSON)
    _check_inspect_frame(frame, epochs=1)
    assert set(frame["log"]) == {INSPECT_JSON.name}
    assert frame["includes"].dtype == np.float64
    messages = [str(w.message) for w in record if issubclass(w.category, LogReadWarning)]
    assert len(messages) == 1
    assert INSPECT_JSON.name in messages[0]
    assert "1 of 20 samples errored ('q07 (epoch 1)')" in messages[0]
    assert "1 score is missing (letter_grade: 'q13 (epoch 1)')" in messages[0]


@needs_zstd
def test_inspect_eval_log_two_epochs() -> None:
    with pytest.warns(LogReadWarning) as record:
        frame = read_inspect(INSPECT_EVAL)
    _check_inspect_frame(frame, epochs=2)
    messages = [str(w.message) for w in record if issubclass(w.category, LogReadWarning)]
    assert len(messages) == 1
    assert INSPECT_EVAL.name in messages[0]
    assert "2 of 40 samples errored" in messages[0]
    assert "2 scores are missing" in messages[0]


@needs_zstd
def test_inspect_directory_reads_both_formats_with_one_warning_each() -> None:
    with pytest.warns(LogReadWarning) as record:
        frame = read_inspect(INSPECT_DIR, scorer=["judge", "includes"])
    assert len(frame) == 60
    assert frame.groupby("log").size().to_dict() == {INSPECT_EVAL.name: 40, INSPECT_JSON.name: 20}
    assert list(frame.columns)[-3:] == ["judge", "includes", "error"]
    assert "match" not in frame.columns
    assert sorted(str(w.message).split("'")[1] for w in record) == sorted(
        [INSPECT_EVAL.name, INSPECT_JSON.name]
    )


def test_inspect_unknown_scorer_lists_available() -> None:
    with pytest.raises(ValueError, match=r"`scorer` asks for scorers not found") as info:
        read_inspect(INSPECT_JSON, scorer=["includes", "accuracy"])
    message = str(info.value)
    assert "'accuracy'" in message
    assert "available scorers: 'includes', 'match', 'letter_grade', 'judge', 'rubric'" in message


def test_inspect_no_warning_when_nothing_is_wrong_in_selection() -> None:
    # The errored sample is still an error whatever the scorer: the warning stays.
    with pytest.warns(LogReadWarning, match="samples errored"):
        frame = read_inspect(INSPECT_JSON, scorer="judge")
    assert frame["judge"].isna().sum() == 1


def test_inspect_rejects_non_log_json(tmp_path: Path) -> None:
    other = tmp_path / "notes.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="is not an Inspect JSON log"):
        read_inspect(other)
    with pytest.raises(ValueError, match="holds no Inspect logs"):
        read_inspect(tmp_path)


def test_inspect_missing_path() -> None:
    with pytest.raises(ValueError, match=r"`paths` has 1 path\(s\) that do not exist"):
        read_inspect(LOGS / "nope.eval")


def _edited_json_log(tmp_path: Path, edit: Any) -> Path:
    """A copy of the real JSON log with one edit, for cases the real run cannot produce."""
    data = json.loads(INSPECT_JSON.read_text())
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path


def test_inspect_unfinished_log_and_metadata_clash(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["status"] = "error"
        for sample in data["samples"]:
            sample["metadata"]["model"] = "from-metadata"

    path = _edited_json_log(tmp_path, edit)
    with pytest.warns(LogReadWarning) as record:
        frame = read_inspect(path, scorer="judge")
    messages = [str(w.message) for w in record]
    assert any("the log status is 'error', not 'success'" in m for m in messages)
    assert any("'model' clash with reader columns and were renamed to 'metadata_model'" in m
               for m in messages)  # fmt: skip
    assert set(frame["model"]) == {"mockllm/model"}
    assert set(frame["metadata_model"]) == {"from-metadata"}


def test_inspect_log_without_samples(tmp_path: Path) -> None:
    path = _edited_json_log(tmp_path, lambda data: data.pop("samples"))
    with pytest.raises(ValueError, match=r"hold no samples .*--no-log-samples"):
        read_inspect(path)


def test_inspect_eval_without_zstandard_explains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import slicewise.io.inspect_logs as inspect_logs

    if sys.version_info >= (3, 14):
        pytest.skip("Python 3.14 reads Zstandard zip members natively")

    def refuse() -> Any:
        raise ImportError("No module named 'zstandard'")

    monkeypatch.setattr(inspect_logs, "_zstandard", refuse)
    with pytest.raises(ImportError, match=r"compressed with Zstandard \(zip method 93"):
        read_inspect(INSPECT_EVAL)


# --------------------------------------------------------------------------- lm-eval


def test_lm_eval_several_filters_need_a_choice() -> None:
    with pytest.raises(ValueError, match="has 2 filters") as info:
        read_lm_eval(LM_GEN)
    message = str(info.value)
    assert "'strict-match', 'flexible-extract'" in message
    assert "`filter` is None" in message


@pytest.mark.parametrize(
    ("chosen", "correct_targets"), [("strict-match", {"lo"}), ("flexible-extract", {"lol"})]
)
def test_lm_eval_filter_choice(chosen: str, correct_targets: set[str]) -> None:
    docs = [json.loads(line) for line in (LOGS / "lm_eval_tasks" / "gen.jsonl").open()]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = read_lm_eval(LM_GEN, filter=chosen)
    assert list(frame.columns) == [
        "item_id", "task", "model", "filter", "log", "doc_qid", "doc_question", "doc_answer",
        "doc_difficulty", "doc_subject", "exact_match",
    ]  # fmt: skip
    assert len(frame) == 12
    assert frame["item_id"].tolist() == [str(i) for i in range(12)]
    assert set(frame["filter"]) == {chosen}
    assert set(frame["task"]) == {"slicewise_gen"}
    assert set(frame["model"]) == {"dummy-a"}
    for row, doc in zip(frame.itertuples(), docs, strict=True):
        assert row.doc_qid == doc["qid"]
        assert row.doc_difficulty == doc["difficulty"]
        assert row.doc_subject == doc["subject"]
        assert row.exact_match == (1.0 if doc["answer"] in correct_targets else 0.0)


def test_lm_eval_unknown_filter() -> None:
    with pytest.raises(ValueError, match=r"`filter` is 'strict'"):
        read_lm_eval(LM_GEN, filter="strict")
    with pytest.raises(ValueError, match=r"maps task 'slicewise_gen' to 'loose'"):
        read_lm_eval(LM_GEN, filter={"slicewise_gen": "loose"})
    with pytest.raises(ValueError, match=r"`filter` maps tasks 'mmlu' that are not among"):
        read_lm_eval(LM_MC_A, filter={"mmlu": "none"})


def _expected_mc(path: Path) -> dict[str, tuple[float, float]]:
    """acc and acc_norm recomputed from the logged log-likelihoods (lm-eval's rule)."""
    expected = {}
    for line in _jsonl(path):
        lls = np.array([float(pair[0]) for pair in line["filtered_resps"]])
        lengths = np.array([float(len(c)) for c in line["doc"]["choices"]])
        gold = int(line["target"])
        acc = float(np.argmax(lls) == gold)
        acc_norm = float(np.argmax(lls / lengths) == gold)
        expected[str(line["doc_id"])] = (acc, acc_norm)
    return expected


def test_lm_eval_multiple_choice_metrics() -> None:
    frame = read_lm_eval(LM_MC_A, metric=["acc", "acc_norm"])
    expected = _expected_mc(LM_MC_A)
    assert len(frame) == 10
    assert set(frame["filter"]) == {"none"}
    assert "doc_choices" not in frame.columns  # lists are not profile candidates
    assert frame["doc_label"].tolist() == [i % 4 for i in range(10)]
    for row in frame.itertuples():
        assert (row.acc, row.acc_norm) == expected[row.item_id]
    # the results file agrees on the mean
    results = json.loads(next(LM_A.glob("results_*.json")).read_text())
    assert frame["acc"].mean() == pytest.approx(results["results"]["slicewise_mc"]["acc,none"])


def test_lm_eval_directory_with_filter_and_models() -> None:
    frame = read_lm_eval(LM_DIR, filter="strict-match")
    counts = frame.groupby(["model", "task"]).size().to_dict()
    assert counts == {
        ("dummy-a", "slicewise_gen"): 12,
        ("dummy-a", "slicewise_mc"): 10,
        ("dummy-b", "slicewise_mc"): 10,
    }
    # the single-filter task keeps its only filter, recorded in the `filter` column
    assert set(frame.loc[frame["task"] == "slicewise_mc", "filter"]) == {"none"}
    assert frame.loc[frame["task"] == "slicewise_gen", "exact_match"].sum() == 3.0
    assert frame.loc[frame["task"] == "slicewise_gen", "acc"].isna().all()
    b = frame[frame["model"] == "dummy-b"].set_index("item_id")
    for item_id, (acc, acc_norm) in _expected_mc(LM_MC_B).items():
        assert (b.at[item_id, "acc"], b.at[item_id, "acc_norm"]) == (acc, acc_norm)


def test_lm_eval_metric_errors() -> None:
    with pytest.raises(ValueError, match=r"`metric` asks for metrics not found .*'bleu'") as info:
        read_lm_eval(LM_MC_A, metric="bleu")
    assert "available metrics: 'acc', 'acc_norm'" in str(info.value)
    with pytest.raises(
        ValueError, match=r"not found in lm-eval samples file 'samples_slicewise_gen"
    ):
        read_lm_eval(LM_A, metric="acc", filter="strict-match")


def test_lm_eval_model_missing_without_results(tmp_path: Path) -> None:
    copy = tmp_path / LM_MC_A.name
    copy.write_bytes(LM_MC_A.read_bytes())
    with pytest.warns(LogReadWarning, match="has no results_.*json beside it"):
        frame = read_lm_eval(copy)
    assert frame["model"].isna().all()
    assert len(frame) == 10


def test_lm_eval_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"contains no lm-eval samples files"):
        read_lm_eval(tmp_path)


# --------------------------------------------------------------------------- HELM


def _helm_entries(run_dir: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((run_dir / "per_instance_stats.json").read_text())
    return data


def test_helm_run_directory_values_match_json() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = read_helm(HELM_PLAIN)
    entries = _helm_entries(HELM_PLAIN)
    assert len(frame) == len(entries) == 20
    assert sorted(set(frame["item_id"])) == [f"id{i}" for i in range(10, 20)]
    assert frame.groupby("item_id")["train_trial_index"].apply(sorted).tolist() == [[0, 1]] * 10
    assert set(frame["model"]) == {"simple/model1"}
    assert set(frame["run"]) == {"simple1:model=simple_model1"}
    assert set(frame["scenario"]) == {"simple1"}
    assert set(frame["split"]) == {"test"}
    assert "perturbation" not in frame.columns
    indexed = frame.set_index(["item_id", "train_trial_index"])
    checked = 0
    for entry in entries:
        row = indexed.loc[(entry["instance_id"], entry["train_trial_index"])]
        for stat in entry["stats"]:
            value = row[stat["name"]["name"]]
            if "mean" in stat:
                assert value == stat["mean"]
                checked += 1
            else:
                assert stat["count"] == 0
                assert math.isnan(value)
    assert checked > 300
    # num_prompt_tokens differs between instances: values are not all the same
    assert frame["num_prompt_tokens"].nunique() > 1


def test_helm_stats_file_and_selection() -> None:
    frame = read_helm(HELM_PLAIN / "per_instance_stats.json", stats=["logprob", "num_bytes"])
    assert list(frame.columns) == [
        "item_id", "model", "run", "scenario", "train_trial_index", "split", "logprob", "num_bytes",
    ]  # fmt: skip
    with pytest.raises(ValueError, match=r"`stats` asks for statistics not found .*'exact_match'"):
        read_helm(HELM_PLAIN, stats="exact_match")


def test_helm_perturbed_instances_dropped_with_warning() -> None:
    with pytest.warns(LogReadWarning, match=r"dropped 10 perturbed instance entries") as record:
        frame = read_helm(HELM_AUG)
    assert len(record) == 1
    assert "extra_space(num_spaces=2)" in str(record[0].message)
    assert HELM_AUG.name in str(record[0].message)
    assert len(frame) == 10
    assert frame["item_id"].is_unique
    assert set(frame["run_data_augmentation"]) == {"extra_space2"}
    originals = {e["instance_id"]: e for e in _helm_entries(HELM_AUG) if "perturbation" not in e}
    for row in frame.itertuples():
        stats = {s["name"]["name"]: s for s in originals[row.item_id]["stats"]}
        assert row.num_prompt_tokens == stats["num_prompt_tokens"]["mean"]


def test_helm_keep_perturbations() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = read_helm(HELM_AUG, perturbations="keep")
    assert len(frame) == 20
    assert frame["perturbation"].isna().sum() == 10
    assert set(frame["perturbation"].dropna()) == {"extra_space(num_spaces=2)"}
    assert not frame.duplicated(["item_id", "train_trial_index", "perturbation"]).any()
    perturbed = {e["instance_id"]: e for e in _helm_entries(HELM_AUG) if "perturbation" in e}
    rows = frame[frame["perturbation"].notna()]
    for row in rows.itertuples():
        stats = {s["name"]["name"]: s for s in perturbed[row.item_id]["stats"]}
        assert row.num_prompt_tokens == stats["num_prompt_tokens"]["mean"]


def test_helm_suite_directory_and_bad_option() -> None:
    frame = _read_quietly(read_helm, HELM_DIR)
    assert frame.groupby("run").size().to_dict() == {HELM_PLAIN.name: 20, HELM_AUG.name: 10}
    with pytest.raises(ValueError, match=r"'perturbations' parameter of read_helm must be one"):
        read_helm(HELM_DIR, perturbations="all")  # type: ignore[arg-type]


def test_helm_rejects_other_json(tmp_path: Path) -> None:
    bad = tmp_path / "per_instance_stats.json"
    bad.write_text('{"stats": []}')
    with pytest.raises(ValueError, match=r"is not a per_instance_stats\.json"):
        read_helm(tmp_path)


# --------------------------------------------------------------------------- read_logs


def test_read_logs_dispatch_and_option_checks() -> None:
    frame = read_logs("lm-eval", LM_GEN, filter="flexible-extract", metric="exact_match")
    assert frame["exact_match"].sum() == 4.0
    assert len(_read_quietly(read_logs, "helm", HELM_AUG)) == 10
    inspect_frame = _read_quietly(read_logs, "inspect", INSPECT_JSON, scorer="match")
    assert inspect_frame["match"].sum() == len(MATCH_CORRECT)
    with pytest.raises(ValueError, match=r"'metric' parameter of read_logs applies to kind"):
        read_logs("inspect", INSPECT_JSON, metric="acc")
    with pytest.raises(ValueError, match=r"'kind' parameter of read_logs must be one of"):
        read_logs("openai", INSPECT_JSON)  # type: ignore[arg-type]


def test_read_logs_warning_points_at_caller() -> None:
    with pytest.warns(LogReadWarning) as record:
        read_logs("helm", HELM_AUG)
    assert record[0].filename == __file__


# --------------------------------------------------------------------------- import_logs


def test_import_logs_parquet_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "items.parquet"
    with pytest.warns(LogReadWarning, match="samples errored"):
        written = import_logs("inspect", INSPECT_JSON, out)
    back = pd.read_parquet(out)
    assert back.shape == written.shape == (20, 14)
    assert list(back.columns) == list(written.columns)
    pd.testing.assert_frame_equal(
        back.reset_index(drop=True), written, check_dtype=False, check_exact=True
    )
    row = back.set_index("item_id").loc[ERROR_ID]
    assert math.isnan(row["includes"])
    assert "simulated solver failure" in row["error"]


def test_import_logs_mixed_types_written_as_text(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["samples"][0]["metadata"]["difficulty"] = "hard"

    log = _edited_json_log(tmp_path, edit)
    out = tmp_path / "items.parquet"
    with pytest.warns(LogReadWarning) as record:
        written = import_logs("inspect", log, out, scorer="judge")
    messages = [str(w.message) for w in record]
    assert "Columns 'difficulty' (int/str) mix value types" in messages[-1]
    assert "samples errored" in messages[0]
    back = pd.read_parquet(out)
    assert back["difficulty"].tolist()[:3] == ["hard", "3", "1"]
    assert written["difficulty"].tolist() == back["difficulty"].tolist()


def test_import_logs_csv(tmp_path: Path) -> None:
    out = tmp_path / "items.csv"
    written = import_logs("lm-eval", LM_DIR, out, filter="flexible-extract")
    back = pd.read_csv(out, dtype={"item_id": str})
    assert len(back) == len(written) == 32
    np.testing.assert_array_equal(back["exact_match"], written["exact_match"])


def test_import_logs_bad_suffix_fails_before_reading(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"'out' parameter of import_logs must end in one of"):
        import_logs("lm-eval", tmp_path / "missing", tmp_path / "items.xlsx")


# --------------------------------------------------------------------------- build_item_table


def _mc(path: Path) -> pd.DataFrame:
    return read_lm_eval(path, metric=["acc", "acc_norm"])


def test_build_item_table_from_two_lm_eval_runs() -> None:
    gold = _mc(LM_MC_A)
    unlabeled = ["2", "5", "9"]
    gold.loc[gold["item_id"].isin(unlabeled), "acc"] = np.nan
    other = _mc(LM_MC_B).sample(frac=1.0, random_state=0)  # order must not matter
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = build_item_table(
            gold,
            "acc",
            {"dummy-b": (other, ["acc", "acc_norm"])},
            profile=["doc_difficulty", "doc_subject"],
            label="y",
        )
    assert list(table.columns) == [
        "item_id", "doc_difficulty", "doc_subject", "y", "dummy-b:acc", "dummy-b:acc_norm",
    ]  # fmt: skip
    expected_a = _expected_mc(LM_MC_A)
    expected_b = _expected_mc(LM_MC_B)
    docs = {str(line["doc_id"]): line["doc"] for line in _jsonl(LM_MC_A)}
    assert table["item_id"].tolist() == [str(i) for i in range(10)]
    for row in table.itertuples(index=False):
        item_id, difficulty, subject, y, b_acc, b_norm = row
        assert difficulty == docs[item_id]["difficulty"]
        assert subject == docs[item_id]["subject"]
        if item_id in unlabeled:
            assert math.isnan(y)
        else:
            assert y == expected_a[item_id][0]
        assert (b_acc, b_norm) == expected_b[item_id]


def test_build_item_table_inspect_gold_and_judge() -> None:
    runs = _read_quietly(read_inspect, INSPECT_JSON)
    gold = runs[["item_id", "difficulty", "includes"]]
    judge = runs.loc[runs["item_id"] != ERROR_ID, ["item_id", "judge"]]
    table = build_item_table(
        gold,
        "includes",
        {"judge": (judge, "judge")},
        profile="difficulty",
        id_mismatch="intersection",
    )
    assert len(table) == 19
    assert ERROR_ID not in set(table["item_id"])
    dataset = _dataset()
    for row in table.itertuples(index=False):
        assert row[3] == pytest.approx(dataset[row.item_id]["difficulty"] / 10)
        assert row.gold == (1.0 if row.item_id in INCLUDES_CORRECT else 0.0)


def test_build_item_table_missing_signal_values() -> None:
    runs = _read_quietly(read_inspect, INSPECT_JSON)
    with pytest.raises(
        ValueError,
        match=r"`signals` columns have missing or non-finite values: 'judge:judge' has 1 "
        r"\(ids: 'q07'\); 'judge:letter_grade' has 2 \(ids: 'q07', 'q13'\)",
    ):
        build_item_table(runs, "includes", {"judge": (runs, ["judge", "letter_grade"])})


def test_build_item_table_duplicate_ids() -> None:
    gold = pd.DataFrame({"item_id": ["q7", "q9", "q12", "q7", "q9", "q12", "q1"], "y": 1.0})
    signal = pd.DataFrame({"item_id": ["q7", "q9", "q12", "q1"], "s": 0.5})
    with pytest.raises(
        ValueError,
        match=r"`gold` source 'human' has 3 duplicate item ids \(first: 'q7', 'q9', 'q12'\); "
        r"ids must be unique within a source",
    ):
        build_item_table(gold, "y", {"judge": (signal, "s")}, gold_source="human")
    many = pd.DataFrame({"item_id": [f"d{i}" for i in range(7)] * 2, "s": 0.5})
    with pytest.raises(
        ValueError,
        match=r"`signals` source 'judge' has 7 duplicate item ids \(first: 'd0', 'd1', 'd2', "
        r"'d3', 'd4', \.\.\. \(2 more\)\)",
    ):
        build_item_table(signal.rename(columns={"s": "y"}), "y", {"judge": (many, "s")})


def test_build_item_table_id_mismatch() -> None:
    gold = pd.DataFrame({"item_id": [f"i{k}" for k in range(8)], "y": [1.0, 0.0] * 4})
    signal = pd.DataFrame({"item_id": [f"i{k}" for k in range(2, 10)], "s": np.arange(8.0)})
    with pytest.raises(
        ValueError,
        match=r"`signals` source 'judge' has 2 ids not in the `gold` source 'gold' "
        r"\('i8', 'i9'\) and 2 ids of the `gold` source missing from it \('i0', 'i1'\)",
    ):
        build_item_table(gold, "y", {"judge": (signal, "s")})
    table = build_item_table(gold, "y", {"judge": (signal, "s")}, id_mismatch="intersection")
    assert table["item_id"].tolist() == [f"i{k}" for k in range(2, 8)]
    assert table["judge:s"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert table["gold"].tolist() == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    disjoint = pd.DataFrame({"item_id": ["x"], "s": [1.0]})
    with pytest.raises(ValueError, match="No item id is shared"):
        build_item_table(gold, "y", {"judge": (disjoint, "s")}, id_mismatch="intersection")
    with pytest.raises(ValueError, match=r"'id_mismatch' parameter of build_item_table"):
        build_item_table(gold, "y", {"judge": (signal, "s")}, id_mismatch="union")  # type: ignore[arg-type]


def test_build_item_table_column_and_label_errors() -> None:
    gold = pd.DataFrame({"item_id": ["a", "b", "c"], "y": [1.0, np.nan, 2.0], "z": [1, 2, 3]})
    signal = pd.DataFrame({"item_id": ["a", "b", "c"], "s": [0.1, 0.2, 0.3], "t": ["x", "y", "z"]})
    with pytest.raises(ValueError, match=r"label column 'y' has 1 values outside \[0, 1\]"):
        build_item_table(gold, "y", {"judge": (signal, "s")})
    ok = gold.assign(y=[1.0, np.nan, 0.0])
    with pytest.raises(ValueError, match=r"`gold` source 'gold' has no label \(`gold_column`\)"):
        build_item_table(ok, "label", {"judge": (signal, "s")})
    with pytest.raises(ValueError, match=r"`signals` source 'judge' has no signal column 'u'"):
        build_item_table(ok, "y", {"judge": (signal, ["s", "u"])})
    with pytest.raises(ValueError, match=r"signal column 't' has 3 non-numeric values"):
        build_item_table(ok, "y", {"judge": (signal, "t")})
    with pytest.raises(ValueError, match=r"has no id \(`on`\) column 'doc'"):
        build_item_table(ok, "y", {"judge": (signal, "s")}, on="doc")
    with pytest.raises(ValueError, match=r"Output columns 'z' would appear twice"):
        build_item_table(ok, "y", {"judge": (signal, "s")}, profile="z", label="z")
    with pytest.raises(TypeError, match=r"must be a \(DataFrame, column or columns\) pair"):
        build_item_table(ok, "y", {"judge": signal})  # type: ignore[dict-item]
    missing_id = signal.assign(item_id=["a", None, "c"])
    with pytest.raises(
        ValueError, match=r"'judge' has 1 missing item ids in column\(s\) 'item_id'"
    ):
        build_item_table(ok, "y", {"judge": (missing_id, "s")})


def test_build_item_table_gold_may_be_unlabeled_and_no_signals() -> None:
    gold = pd.DataFrame({"item_id": [1, 2, 3], "y": [True, None, False]})
    table = build_item_table(gold, "y", {})
    assert table["item_id"].tolist() == ["1", "2", "3"]
    np.testing.assert_array_equal(table["gold"], [1.0, np.nan, 0.0])
