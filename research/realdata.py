"""Real-data cells for the matched-split studies of issue 4 (LACE paper, Section 5.3).

Every builder reads one dataset from ``../shared/data`` relative to the repository root (the files
are never copied into the repository) and returns a :class:`RealData`: families of
:class:`~slicewise.studies.engine.CellSpec` (one family per profile axis Z, because the methods that
need an ordered profile cannot run on a categorical one), the label budgets, the notes that
document every data decision, and per cell the columns that must never be cheap signals (the
candidate's own label source and columns that leak it).

Conventions shared by every cell table: the gold label is the column ``y`` in [0, 1]; signal
columns keep a name that says where they come from (``model_3``, ``ae2:claude``, ...); every
table is fully labeled (the study masks the labels); nothing is imputed, rows or signals with
missing values are dropped and the notes say so.

Datasets (see ``../shared/data/README.md``):

* ``psn_irt``: 12 candidates x (Z = benchmark, Z = share of the other 11 models correct);
* ``alpaca_eval``: 10 candidates x (Z = dataset, Z = log instruction length);
* ``llmbar``: Y = gold preference, four judges, Z = subset or log input length;
* ``pandalm``: Y = human majority, the PandaLM-7B verdict and the length ratio, Z = model pair or
  app (and the GPT-3.5 verdict on the rows where it parsed);
* ``unieval``: human scores rescaled to [0, 1], UniEval scores as signals, Z = system or length;
* ``wmt_mqm_ted``: MQM rescaled to [0, 1], sentence metrics as signals, Z = system or length.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from slicewise._typing import Kind
from slicewise.studies.engine import CellSpec

ROOT = Path(__file__).resolve().parents[1]
#: ``../shared/data`` relative to the repository root.
DATA_DIR = ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class Family:
    """Cells that share a profile axis (and hence the set of feasible methods).

    Attributes
    ----------
    name : str
        Short name of the profile axis ('benchmark', 'difficulty', ...).
    kind : {'continuous', 'ordinal', 'categorical'}
    cells : tuple of CellSpec
    description : str
        What Z is, in one sentence.
    """

    name: str
    kind: Kind
    cells: tuple[CellSpec, ...]
    description: str


@dataclass(frozen=True)
class RealData:
    """The study cells of one dataset.

    Attributes
    ----------
    name : str
    families : tuple of Family
    budgets : tuple of int
        Default label budgets (nested prefixes of each split).
    description : str
    notes : tuple of str
        Every data decision (exclusions, mappings, dropped rows or signals).
    forbidden : mapping of cell name to tuple of str
        Columns that must never be signals of that cell: the source of its label and any column
        that leaks it. Checked by ``tests/studies/test_realdata_cells.py``.
    """

    name: str
    families: tuple[Family, ...]
    budgets: tuple[int, ...]
    description: str
    notes: tuple[str, ...] = ()
    forbidden: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def cells(self) -> list[CellSpec]:
        """Every cell of every family."""
        return [cell for family in self.families for cell in family.cells]

    def family(self, name: str) -> Family:
        """The family called ``name``."""
        for family in self.families:
            if family.name == name:
                return family
        valid = ", ".join(repr(f.name) for f in self.families)
        raise ValueError(
            f"The 'family' parameter of {self.name} must be one of {valid}. Got {name!r} instead."
        )


def data_dir(path: str | Path | None = None) -> Path:
    """The shared data folder (``../shared/data`` relative to the repository root by default)."""
    folder = DATA_DIR if path is None else Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"The real-data folder {folder} does not exist; the studies read ../shared/data "
            "relative to the repository root (see ../shared/data/README.md)."
        )
    return folder


def _select(families: Sequence[str] | None, available: Sequence[str], dataset: str) -> list[str]:
    chosen = list(available) if families is None else list(families)
    unknown = [f for f in chosen if f not in available]
    if unknown or not chosen:
        raise ValueError(
            f"The 'families' parameter of {dataset} must list some of {list(available)}. "
            f"Got {families!r} instead."
        )
    return chosen


def verdict_share(verdict: pd.Series) -> pd.Series:
    """Pairwise verdict 1 / 2 / 0 -> share of evidence that the first output is better.

    1 (first better) -> 1.0, 2 (second better) -> 0.0, 0 (tie, or the two presentation orders
    disagreed) -> 0.5. On the label's scale, so a judge can be used raw as a predictor.
    """
    mapped = verdict.map({1: 1.0, 2: 0.0, 0: 0.5})
    bad = verdict.notna() & mapped.isna()
    if bad.any():
        raise ValueError(
            f"Verdict column {verdict.name!r} must hold 0, 1 or 2; got {sorted(verdict[bad].unique())}."
        )
    return mapped.astype(np.float64)


# --------------------------------------------------------------------------------------------
# psn_irt
# --------------------------------------------------------------------------------------------

PSN_MODELS = tuple(f"model_{k}" for k in range(12))
#: The 4-parameter IRT fit saw every model's labels, so these columns leak the candidate's gold.
PSN_LEAKING = ("difficulty", "discrimination", "guessing", "feasibility")
PSN_FAMILIES = ("benchmark", "difficulty", "difficulty_levels")


def psn_irt(
    *,
    families: Sequence[str] | None = ("benchmark", "difficulty"),
    candidates: Sequence[str] = PSN_MODELS,
    path: str | Path | None = None,
) -> RealData:
    """PSN-IRT: each of the 12 models as candidate; S = the other 11 models' correctness.

    Parameters
    ----------
    families : sequence of {'benchmark', 'difficulty', 'difficulty_levels'}, optional
        'benchmark': Z = benchmark (categorical, 11 very unbalanced groups, 164 to 14,042 items).
        'difficulty': Z = share of the other 11 models that are correct (continuous, Gaussian
        kernel at the rule-of-thumb h0, 20 grid points), the paper's protocol. 'difficulty_levels':
        the same count 0..11 as an ordinal profile with exact-level weights (12 grid points).
        Default: benchmark and difficulty (24 cells).
    candidates : sequence of str
        Candidate model columns.
    path : path, optional
        The shared data folder.

    Returns
    -------
    RealData
        Budgets 250, 500, 1000, 2000 of M = 41,871.

    Notes
    -----
    The difficulty is leak-free: it is built from the other models only (never the candidate),
    while the IRT columns are fitted on all 12 models and are not used at all. The continuous
    share is preferred over exact levels as the main axis because it follows the paper's
    protocol (Gaussian kernel, h0) and makes the stress grid's bandwidth axis meaningful (with
    exact integer levels every half-width below 1 gives the same weights). The primary judge
    signal (for the single-signal methods) is the other model with the highest overall accuracy,
    computed from the signal columns only.
    """
    chosen = _select(families, PSN_FAMILIES, "psn_irt")
    unknown = [c for c in candidates if c not in PSN_MODELS]
    if unknown or not candidates:
        raise ValueError(
            f"The 'candidates' parameter of psn_irt must list some of {list(PSN_MODELS)}. "
            f"Got {list(candidates)!r} instead."
        )
    frame = pd.read_csv(
        data_dir(path) / "psn_irt" / "items.csv", usecols=["benchmark", *PSN_MODELS]
    )
    accuracy = frame[list(PSN_MODELS)].mean(axis=0)
    cells: dict[str, list[CellSpec]] = {name: [] for name in chosen}
    forbidden: dict[str, tuple[str, ...]] = {}
    for candidate in candidates:
        others = [m for m in PSN_MODELS if m != candidate]
        count = frame[others].sum(axis=1)
        table = pd.DataFrame(
            {
                "benchmark": frame["benchmark"].astype(str),
                "others_correct": count / len(others),
                "others_correct_n": count.astype(np.int64),
                "y": frame[candidate].astype(np.float64),
            }
        )
        for other in others:
            table[other] = frame[other].astype(np.float64)
        primary = max(others, key=lambda m: (float(accuracy[m]), m))
        specs = {
            "benchmark": ("benchmark", "categorical", None),
            "difficulty": ("others_correct", "continuous", None),
            "difficulty_levels": ("others_correct_n", "ordinal", None),
        }
        for name in chosen:
            z, kind, grid = specs[name]
            cell = CellSpec(
                name=f"{candidate}/{name}",
                table=table,
                z=z,
                label="y",
                signals=tuple(others),
                kind=kind,  # type: ignore[arg-type]
                grid=grid,
                primary=primary,
            )
            cells[name].append(cell)
            forbidden[cell.name] = (candidate, *PSN_LEAKING)
    described = {
        "benchmark": "benchmark (categorical, 11 groups of 164 to 14,042 items)",
        "difficulty": "share of the other 11 models correct (continuous, Gaussian kernel, h0)",
        "difficulty_levels": "number of the other 11 models correct (ordinal, exact levels 0-11)",
    }
    return RealData(
        name="psn_irt",
        families=tuple(
            Family(
                name=name,
                kind=cells[name][0].kind or "categorical",
                cells=tuple(cells[name]),
                description=described[name],
            )
            for name in chosen
        ),
        budgets=(250, 500, 1000, 2000),
        description=(
            "PSN-IRT (Joe-Hall-Lee/PSN-IRT, commit 5cae95a): 41,871 items of 11 benchmarks, 0/1 "
            "correctness of 12 anonymous LLMs. Candidate Y = one model's correctness; S = the other "
            "11 models' correctness (K = 11)."
        ),
        notes=(
            "The IRT columns (difficulty, discrimination, guessing, feasibility) are fitted on all "
            "12 models, so they leak the candidate's labels: they are not read at all.",
            "Z = difficulty is the share of the OTHER 11 models correct (never the candidate).",
            "Primary signal (per_signal_cv, plugin_judge, local_ppi): the other model with the "
            "highest overall accuracy over the pool (signal columns only, no candidate labels).",
            "model_3 scores 1.00 on MMLU: as candidate its MMLU group is constant (zero variance).",
        ),
        forbidden=forbidden,
    )


# --------------------------------------------------------------------------------------------
# alpaca_eval
# --------------------------------------------------------------------------------------------

#: Candidates spanning AlpacaEval 2 quality (win rate vs gpt4_1106_preview 0.02 to 0.71); none has
#: a missing AlpacaEval 2 preference.
ALPACA_CANDIDATES = (
    "FuseChat-Gemma-2-9B-Instruct",
    "FuseChat-Llama-3.1-8B-Instruct",
    "FuseChat-Llama-3.2-1B-Instruct",
    "claude-2.1",
    "claude",
    "gpt-3.5-turbo-1106",
    "Qwen-14B-Chat",
    "vicuna-13b",
    "falcon-40b-instruct",
    "alpaca-7b",
)
#: Fixed anchor models (never candidates): their preferences on the same instruction measure how
#: hard the instruction is against the baseline.
ALPACA_ANCHORS = (
    "FuseChat-Qwen-2.5-7B-Instruct",
    "claude-instant-1.2",
    "Mixtral-8x7B-Instruct-v0.1_concise",
    "gpt4_0613_concise",
    "OpenHermes-2.5-Mistral-7B",
)
#: Primary signal when the candidate has no usable AlpacaEval 1 preference (fixed a priori).
ALPACA_FALLBACK_PRIMARY = "claude-instant-1.2"
ALPACA_FAMILIES = ("dataset", "length")


def alpaca_gamed(name: str) -> bool:
    """Entries built to game the judge: NullModel, *_verbose and gpt4_gamed."""
    return name == "NullModel" or name.endswith("_verbose") or name == "gpt4_gamed"


def ae1_preference(values: pd.Series) -> pd.Series:
    """AlpacaEval 1 preference -> [0, 1]: 2 -> 1, 1 -> 0, draws (1.5, or 0) -> 0.5.

    AlpacaEval encodes a draw as 0 in older annotations and as 1.5 in newer ones; the AE1
    leaderboard's ``n_draws`` equals the number of 0 and 1.5 entries of each model.
    """
    mapped = values.map({2.0: 1.0, 1.0: 0.0, 1.5: 0.5, 0.0: 0.5})
    bad = values.notna() & mapped.isna()
    if bad.any():
        raise ValueError(
            f"AlpacaEval 1 preferences must be 0, 1, 1.5 or 2; got {sorted(values[bad].unique())}."
        )
    return mapped.astype(np.float64)


def alpaca_eval(
    *,
    families: Sequence[str] | None = None,
    candidates: Sequence[str] = ALPACA_CANDIDATES,
    anchors: Sequence[str] = ALPACA_ANCHORS,
    path: str | Path | None = None,
) -> RealData:
    """AlpacaEval 2 (weighted GPT-4-turbo judge): several candidates on 805 instructions.

    Parameters
    ----------
    families : sequence of {'dataset', 'length'}, optional
        Z = source dataset (categorical, 5 groups of 80 to 252) and Z = log instruction length
        (continuous). Default both.
    candidates, anchors : sequence of str
        Candidate and anchor models (disjoint; gamed entries are rejected as candidates).
    path : path, optional

    Returns
    -------
    RealData
        Budgets 50, 100, 200 of M = 805.

    Notes
    -----
    Y = the candidate's preference - 1 in [0, 1] (the probability that the GPT-4-turbo judge
    prefers it to gpt4_1106_preview). S = the anchors' preferences - 1, the candidate's log
    output length, and the AlpacaEval 1 annotator's preference for the candidate (see
    :func:`ae1_preference`) when the candidate is in AlpacaEval 1 with no missing value; otherwise
    that signal is dropped for the candidate (never imputed). Primary signal: the AE1 preference,
    or the anchor claude-instant-1.2 where there is none.
    """
    chosen = _select(families, ALPACA_FAMILIES, "alpaca_eval")
    folder = data_dir(path) / "alpaca_eval"
    prefs = pd.read_csv(folder / "ae2_weighted_gpt4turbo_preference_matrix.csv").set_index(
        "item_id"
    )
    lengths = pd.read_csv(folder / "ae2_weighted_gpt4turbo_output_length_matrix.csv").set_index(
        "item_id"
    )
    items = pd.read_csv(folder / "ae2_weighted_gpt4turbo_items.csv").set_index("item_id")
    ae1 = pd.read_csv(folder / "ae1_gpt4_preference_matrix.csv").set_index("item_id")
    ae1_items = pd.read_csv(folder / "ae1_gpt4_items.csv").set_index("item_id")
    if (
        not items.index.equals(ae1_items.index)
        or not (items["instruction"] == ae1_items["instruction"]).all()
    ):
        raise ValueError("AlpacaEval 1 and 2 item files do not list the same instructions.")
    gamed = [c for c in candidates if alpaca_gamed(c)]
    overlap = sorted(set(candidates) & set(anchors))
    missing = [m for m in (*candidates, *anchors) if m not in prefs.columns]
    if gamed or overlap or missing:
        raise ValueError(
            "The 'candidates' and 'anchors' parameters of alpaca_eval must be disjoint AlpacaEval "
            f"2 models and no gamed entry; got gamed {gamed}, in both {overlap}, unknown {missing}."
        )
    incomplete = [m for m in (*candidates, *anchors) if prefs[m].isna().any()]
    if incomplete:
        raise ValueError(
            f"Models {incomplete} have missing AlpacaEval 2 preferences; choose complete models."
        )
    base = pd.DataFrame(index=items.index)
    base["dataset"] = items["dataset"].astype(str)
    base["log_instruction_len"] = np.log(items["instruction_len"].astype(np.float64))
    for anchor in anchors:
        base[f"ae2:{anchor}"] = prefs[anchor].astype(np.float64) - 1.0
    cells: dict[str, list[CellSpec]] = {name: [] for name in chosen}
    forbidden: dict[str, tuple[str, ...]] = {}
    dropped: list[str] = []
    for candidate in candidates:
        table = base.copy()
        table["y"] = prefs[candidate].astype(np.float64) - 1.0
        table[f"len:{candidate}"] = np.log1p(lengths[candidate].astype(np.float64))
        signals = [f"ae2:{a}" for a in anchors] + [f"len:{candidate}"]
        primary = f"ae2:{ALPACA_FALLBACK_PRIMARY}"
        if candidate in ae1.columns and ae1[candidate].notna().all():
            table[f"ae1:{candidate}"] = ae1_preference(ae1[candidate])
            signals.append(f"ae1:{candidate}")
            primary = f"ae1:{candidate}"
        else:
            reason = (
                "not in AlpacaEval 1"
                if candidate not in ae1.columns
                else (f"{int(ae1[candidate].isna().sum())} missing AE1 preference(s)")
            )
            dropped.append(f"{candidate} ({reason})")
        table = table.reset_index(drop=True)
        for name in chosen:
            z, kind = (
                ("dataset", "categorical")
                if name == "dataset"
                else (
                    "log_instruction_len",
                    "continuous",
                )
            )
            cell = CellSpec(
                name=f"{candidate}/{name}",
                table=table,
                z=z,
                label="y",
                signals=tuple(signals),
                kind=kind,  # type: ignore[arg-type]
                primary=primary,
            )
            cells[name].append(cell)
            forbidden[cell.name] = (f"ae2:{candidate}",)
    described = {
        "dataset": "source dataset (categorical: helpful_base 129, koala 156, oasst 188, "
        "selfinstruct 252, vicuna 80)",
        "length": "log instruction length (continuous, Gaussian kernel, h0)",
    }
    return RealData(
        name="alpaca_eval",
        families=tuple(
            Family(
                name,
                "categorical" if name == "dataset" else "continuous",
                tuple(cells[name]),
                described[name],
            )
            for name in chosen
        ),
        budgets=(50, 100, 200),
        description=(
            "AlpacaEval 2 (tatsu-lab/alpaca_eval, commit cd543a1, Apache-2.0): 805 instructions; "
            "Y = the weighted GPT-4-turbo judge's preference for the candidate over "
            "gpt4_1106_preview, minus 1, in [0, 1]."
        ),
        notes=(
            f"Candidates ({len(candidates)}): {', '.join(candidates)}.",
            f"Anchors (signals for every candidate, never candidates): {', '.join(anchors)}.",
            "Excluded as candidates: the deliberately gamed entries (NullModel, *_verbose, "
            "gpt4_gamed) and the baseline gpt4_1106_preview (its preference is constant 0.5).",
            "Signals per candidate: the anchors' preferences - 1, log(1 + the candidate's output "
            "length), and the AlpacaEval 1 annotator's preference for the candidate (2 -> 1, "
            "1 -> 0, draws coded 1.5 or 0 -> 0.5) where it exists without missing values.",
            "AE1 signal dropped (never imputed) for: " + (", ".join(dropped) or "none") + ".",
            "Primary signal: the AE1 preference where present, otherwise the anchor "
            f"{ALPACA_FALLBACK_PRIMARY} (fixed a priori, not chosen by gold correlation).",
        ),
        forbidden=forbidden,
    )


# --------------------------------------------------------------------------------------------
# llmbar
# --------------------------------------------------------------------------------------------

LLMBAR_JUDGES = (
    "GPT-4|Metrics_Reference",
    "PaLM2|Metrics_Reference",
    "ChatGPT|Metrics_Reference",
    "LLaMA2|Metrics_Reference",
)
LLMBAR_FAMILIES = ("subset", "length")


def llmbar(*, families: Sequence[str] | None = None, path: str | Path | None = None) -> RealData:
    """LLMBar: Y = (gold_label == 1); S = four judges' Metrics_Reference verdicts.

    Parameters
    ----------
    families : sequence of {'subset', 'length'}, optional
        Z = subset (categorical, 13 groups of 45 to 192) and Z = log input length (continuous).
    path : path, optional

    Returns
    -------
    RealData
        Budgets 60, 120, 300 of M = 1,173.

    Notes
    -----
    Rows where any of the four judges is missing are dropped (27 of 1,200), so every signal is
    observed on the pool. Verdicts map to the share of the two presentation orders that prefer
    output 1 (1 -> 1, 2 -> 0, 0 = the orders disagreed -> 0.5): on the label's scale.
    """
    chosen = _select(families, LLMBAR_FAMILIES, "llmbar")
    frame = pd.read_csv(data_dir(path) / "llmbar" / "pairs.csv")
    keep = frame[list(LLMBAR_JUDGES)].notna().all(axis=1)
    frame = frame[keep].reset_index(drop=True)
    table = pd.DataFrame(
        {
            "subset": frame["subset"].astype(str),
            "log_input_chars": np.log(frame["input_chars"].astype(np.float64)),
            "y": (frame["gold_label"] == 1).astype(np.float64),
        }
    )
    for judge in LLMBAR_JUDGES:
        table[judge] = verdict_share(frame[judge])
    cells = []
    for name in chosen:
        z, kind = (
            ("subset", "categorical") if name == "subset" else ("log_input_chars", "continuous")
        )
        cells.append(
            Family(
                name=name,
                kind=kind,  # type: ignore[arg-type]
                cells=(
                    CellSpec(
                        name=f"gold/{name}",
                        table=table,
                        z=z,
                        label="y",
                        signals=LLMBAR_JUDGES,
                        kind=kind,  # type: ignore[arg-type]
                        primary=LLMBAR_JUDGES[0],
                    ),
                ),
                description="subset (categorical, 13 groups)"
                if name == "subset"
                else "log input length (continuous, Gaussian kernel, h0)",
            )
        )
    return RealData(
        name="llmbar",
        families=tuple(cells),
        budgets=(60, 120, 300),
        description=(
            "LLMBar (princeton-nlp/LLMBar, commit 900616b, MIT): 1,200 response pairs with a gold "
            "preference and six LLM judges; Y = 1 when output 1 is the better one."
        ),
        notes=(
            f"Signals: {', '.join(LLMBAR_JUDGES)} (K = 4; complete on the rows used).",
            f"Rows dropped because a judge is missing: {int((~keep).sum())} of {keep.size}.",
            "Verdict mapping: 1 -> 1.0, 2 -> 0.0, 0 (the two presentation orders disagreed) -> "
            "0.5, i.e. the share of the two orders preferring output 1.",
            "Primary signal: GPT-4|Metrics_Reference.",
        ),
        forbidden={f"gold/{f}": ("gold_label",) for f in chosen},
    )


# --------------------------------------------------------------------------------------------
# pandalm
# --------------------------------------------------------------------------------------------

PANDALM_FAMILIES = ("pair", "app", "pair_gpt35")


def pandalm(*, families: Sequence[str] | None = None, path: str | Path | None = None) -> RealData:
    """PandaLM: Y = human majority (1 -> 1, 2 -> 0, tie -> 0.5); S = PandaLM-7B and lengths.

    Parameters
    ----------
    families : sequence of {'pair', 'app', 'pair_gpt35'}, optional
        'pair': Z = model pair (categorical, 10 pairs of 89 to 111); 'app': Z = motivation app
        (categorical, 50 apps of 1 to 59: a sparse-group stress case); 'pair_gpt35': Z = model
        pair on the rows where the GPT-3.5 verdict parsed, with that verdict as a third signal.
    path : path, optional

    Returns
    -------
    RealData
        Budgets 60, 120, 300.

    Notes
    -----
    Signals: the PandaLM-7B verdict (1 -> 1, 2 -> 0, tie 0 -> 0.5) and log((1 + chars of response
    1) / (1 + chars of response 2)). Rows with a missing response length (6) are dropped. The
    GPT-3.5 verdict (missing on 63 rows) is used only in 'pair_gpt35', on its complete rows.
    """
    chosen = _select(families, PANDALM_FAMILIES, "pandalm")
    frame = pd.read_csv(data_dir(path) / "pandalm" / "pairs.csv")
    keep = frame[["resp1_chars", "resp2_chars"]].notna().all(axis=1)
    frame = frame[keep].reset_index(drop=True)
    table = pd.DataFrame(
        {
            "pair": frame["cmp_key"].astype(str),
            "app": frame["motivation_app"].astype(str),
            "y": verdict_share(frame["gold_majority"]),
            "pandalm7b": verdict_share(frame["pandalm7b_verdict"]),
            "log_len_ratio": np.log1p(frame["resp1_chars"].astype(np.float64))
            - np.log1p(frame["resp2_chars"].astype(np.float64)),
            "gpt35": verdict_share(frame["gpt35_verdict"]),
        }
    )
    complete = table["gpt35"].notna()
    families_out = []
    for name in chosen:
        signals: tuple[str, ...]
        if name == "pair_gpt35":
            data, z, signals = (
                table[complete].reset_index(drop=True),
                "pair",
                ("pandalm7b", "log_len_ratio", "gpt35"),
            )
        else:
            data, z, signals = table.drop(columns="gpt35"), name, ("pandalm7b", "log_len_ratio")
        spec = CellSpec(
            name=f"majority/{name}",
            table=data,
            z=z,
            label="y",
            signals=signals,
            kind="categorical",
            primary="pandalm7b",
        )
        description = {
            "pair": "model pair (categorical, 10 pairs)",
            "app": "motivation app (categorical, 50 apps of 1 to 59 items)",
            "pair_gpt35": "model pair, rows with a parsed GPT-3.5 verdict",
        }[name]
        families_out.append(Family(name, "categorical", (spec,), description))
    return RealData(
        name="pandalm",
        families=tuple(families_out),
        budgets=(60, 120, 300),
        description=(
            "PandaLM test set (WeOpenML/PandaLM, commit 3871806, Apache-2.0): 999 response pairs "
            "of five 7B models, three human annotators; Y = the majority's preference for "
            "response 1."
        ),
        notes=(
            "Y mapping: gold_majority 1 -> 1, 2 -> 0, tie 0 -> 0.5 (a tie is half a win); the "
            "PandaLM-7B and GPT-3.5 verdicts use the same mapping.",
            f"Rows dropped for a missing response length: {int((~keep).sum())} of {keep.size}.",
            "gpt35_verdict is missing (unparseable) on 63 rows: it is left out of 'pair' and "
            f"'app' and used only in 'pair_gpt35', on its {int(complete.sum())} complete rows "
            "(a different pool, so its target differs).",
            "Primary signal: pandalm7b.",
        ),
        forbidden={
            f"majority/{f}": ("gold_majority", "annotator1", "annotator2", "annotator3")
            for f in chosen
        },
    )


# --------------------------------------------------------------------------------------------
# unieval
# --------------------------------------------------------------------------------------------

UNIEVAL_FAMILIES = ("system", "length")
#: (dataset, label column, label range, signals); the first signal is the primary one. UniEval's
#: 'overall' is the mean of the dimensions, so one dimension is left out to avoid an exact
#: linear dependence.
UNIEVAL_CELLS: dict[str, tuple[tuple[str, ...], str, tuple[float, float], tuple[str, ...]]] = {
    "topical_chat": (
        ("topical_chat",),
        "human_overall",
        (1.0, 5.0),
        (
            "unieval_overall",
            "unieval_naturalness",
            "unieval_coherence",
            "unieval_engagingness",
            "unieval_groundedness",
        ),
    ),
    "sfres": (("sfres",), "human_overall", (1.0, 6.0), ("unieval_overall", "unieval_naturalness")),
    "sfhot": (("sfhot",), "human_overall", (1.0, 6.0), ("unieval_overall", "unieval_naturalness")),
    "qags": (
        ("qags_cnndm", "qags_xsum"),
        "human_consistency",
        (0.0, 1.0),
        ("unieval_consistency",),
    ),
}


def unieval(*, families: Sequence[str] | None = None, path: str | Path | None = None) -> RealData:
    """UniEval meta-evaluation: human scores rescaled to [0, 1], UniEval scores as signals.

    Parameters
    ----------
    families : sequence of {'system', 'length'}, optional
        'system': Topical-Chat, Z = system (categorical, 6 systems of 60). 'length': Z = log
        output length (continuous) on Topical-Chat, SF-RES, SF-HOT and QAGS (CNN/DM + XSum).
    path : path, optional

    Returns
    -------
    RealData
        Budgets 50, 100, 200.
    """
    chosen = _select(families, UNIEVAL_FAMILIES, "unieval")
    frame = pd.read_csv(data_dir(path) / "unieval" / "outputs.csv")
    tables: dict[str, pd.DataFrame] = {}
    for name, (datasets, label, (low, high), signals) in UNIEVAL_CELLS.items():
        part = frame[frame["dataset"].isin(datasets)].reset_index(drop=True)
        table = pd.DataFrame(
            {
                "log_output_chars": np.log(part["output_chars"].astype(np.float64)),
                "y": (part[label].astype(np.float64) - low) / (high - low),
            }
        )
        if part["system_id"].notna().all():  # systems are named on Topical-Chat only
            table["system"] = part["system_id"].astype(str)
        for signal in signals:
            table[signal] = part[signal].astype(np.float64)
        if table.isna().any().any():
            raise ValueError(f"UniEval cell {name!r} has missing values in its columns.")
        tables[name] = table
    families_out = []
    for family in chosen:
        names = ("topical_chat",) if family == "system" else tuple(UNIEVAL_CELLS)
        specs = tuple(
            CellSpec(
                name=f"{name}/{family}",
                table=tables[name],
                z="system" if family == "system" else "log_output_chars",
                label="y",
                signals=UNIEVAL_CELLS[name][3],
                kind="categorical" if family == "system" else "continuous",
                primary=UNIEVAL_CELLS[name][3][0],
            )
            for name in names
        )
        families_out.append(
            Family(
                family,
                "categorical" if family == "system" else "continuous",
                specs,
                "Topical-Chat system (categorical, 6 systems of 60)"
                if family == "system"
                else "log output length (continuous, Gaussian kernel, h0)",
            )
        )
    return RealData(
        name="unieval",
        families=tuple(families_out),
        budgets=(50, 100, 200),
        description=(
            "UniEval meta-evaluation outputs (maszhongming/UniEval, commit d33e7b6, MIT): human "
            "scores (gold) and UniEval scores (cheap signals)."
        ),
        notes=(
            "Topical-Chat (360 responses): Y = (human_overall - 1) / 4; S = UniEval overall, "
            "naturalness, coherence, engagingness, groundedness (understandability left out: "
            "overall is the mean of the five dimensions).",
            "SF-RES (1,181) and SF-HOT (875): Y = (human_overall - 1) / 5; S = UniEval overall "
            "and naturalness (informativeness left out: overall is the mean of the two).",
            "QAGS CNN/DM + XSum (474): Y = human_consistency (already in [0, 1]); S = UniEval "
            "consistency (K = 1).",
            "Primary signal: UniEval overall (consistency for QAGS).",
        ),
        forbidden={
            f"{name}/{family}": tuple(c for c in frame.columns if c.startswith("human_"))
            for family in chosen
            for name in (("topical_chat",) if family == "system" else tuple(UNIEVAL_CELLS))
        },
    )


# --------------------------------------------------------------------------------------------
# wmt_mqm_ted
# --------------------------------------------------------------------------------------------

WMT_FAMILIES = ("system", "length")
#: MQM segment scores are weighted error counts capped at 25 (a non-translation); Y = 1 + MQM / 25.
MQM_CAP = 25.0


def wmt_mqm_ted(
    *, families: Sequence[str] | None = None, path: str | Path | None = None
) -> RealData:
    """WMT21 TED MQM: Y = 1 + MQM / 25 in [0, 1]; S = sentence BLEU, chrF, TER and length ratio.

    Parameters
    ----------
    families : sequence of {'system', 'length'}, optional
        One cell per language pair (en-de, zh-en): Z = system (categorical, 13 systems of 529)
        or Z = log source length (continuous).
    path : path, optional

    Returns
    -------
    RealData
        Budgets 100, 200, 500 of M = 6,877 per language pair.
    """
    chosen = _select(families, WMT_FAMILIES, "wmt_mqm_ted")
    frame = pd.read_csv(data_dir(path) / "wmt_mqm_ted" / "segments.csv")
    reference = frame["system"].isin(["ref", "refB"])
    frame = frame[~reference & frame["mqm_avg_score"].notna()].reset_index(drop=True)
    if frame[["sent_bleu", "sent_chrf", "sent_ter"]].isna().any().any():
        raise ValueError("WMT rows outside the references must have every sentence metric.")
    score = frame["mqm_avg_score"].astype(np.float64)
    if (score < -MQM_CAP).any() or (score > 0).any():
        raise ValueError(f"MQM scores must lie in [-{MQM_CAP:g}, 0] for the affine map.")
    table_all = pd.DataFrame(
        {
            "lp": frame["lp"].astype(str),
            "system": frame["system"].astype(str),
            "log_source_chars": np.log(frame["source_chars"].astype(np.float64)),
            "y": 1.0 + score / MQM_CAP,
            "chrf": frame["sent_chrf"].astype(np.float64) / 100.0,
            "bleu": frame["sent_bleu"].astype(np.float64) / 100.0,
            "ter": frame["sent_ter"].astype(np.float64) / 100.0,
            "log_len_ratio": np.log(frame["target_chars"].astype(np.float64) + 1.0)
            - np.log(frame["source_chars"].astype(np.float64) + 1.0),
        }
    )
    signals = ("chrf", "bleu", "ter", "log_len_ratio")
    families_out = []
    for family in chosen:
        specs = []
        for lp in sorted(table_all["lp"].unique()):
            table = table_all[table_all["lp"] == lp].drop(columns="lp").reset_index(drop=True)
            specs.append(
                CellSpec(
                    name=f"{lp}/{family}",
                    table=table,
                    z="system" if family == "system" else "log_source_chars",
                    label="y",
                    signals=signals,
                    kind="categorical" if family == "system" else "continuous",
                    primary="chrf",
                )
            )
        families_out.append(
            Family(
                family,
                "categorical" if family == "system" else "continuous",
                tuple(specs),
                "MT system (categorical, 13 systems of 529 segments)"
                if family == "system"
                else "log source length (continuous, Gaussian kernel, h0)",
            )
        )
    return RealData(
        name="wmt_mqm_ted",
        families=tuple(families_out),
        budgets=(100, 200, 500),
        description=(
            "WMT21 TED talks MQM (google/wmt-mqm-human-evaluation, commit 7fadea2, Apache-2.0): "
            "professional MQM scores of 13 MT systems per language pair."
        ),
        notes=(
            f"Y = 1 + mqm_avg_score / {MQM_CAP:g}: MQM 0 (no error) -> 1, the cap -25 -> 0 "
            "(affine, documented; every score lies in [-25, 0]).",
            "Rows of the human references (`ref`, `refB`) are excluded: the sentence metrics "
            "are computed against `ref`, so they are missing there, and `refB` has no MQM score.",
            "Signals: sentence chrF / 100, BLEU / 100, TER / 100 (against `ref`) and "
            "log((1 + target chars) / (1 + source chars)); K = 4. Primary: chrF.",
            "The metrics are weak signals (correlations with MQM 0.10-0.17).",
        ),
        forbidden={
            f"{lp}/{family}": ("mqm_avg_score", "n_major", "n_minor")
            for family in chosen
            for lp in ("ende", "zhen")
        },
    )


#: Every dataset builder by name.
BUILDERS: dict[str, Callable[..., RealData]] = {
    "psn_irt": psn_irt,
    "alpaca_eval": alpaca_eval,
    "llmbar": llmbar,
    "pandalm": pandalm,
    "unieval": unieval,
    "wmt_mqm_ted": wmt_mqm_ted,
}


def load(name: str, *, families: Sequence[str] | None = None) -> RealData:
    """Build the cells of dataset ``name`` (see :data:`BUILDERS`)."""
    if name not in BUILDERS:
        raise ValueError(
            f"The 'dataset' parameter must be one of {sorted(BUILDERS)}. Got {name!r} instead."
        )
    if families is None:
        return BUILDERS[name]()
    return BUILDERS[name](families=families)
