"""Tiny offline Inspect task used to produce the frozen fixtures in ``inspect/``.

Run by ``make_logs.sh`` with ``--model mockllm/model``. The mock model always answers
"Default output from mockllm/model", so every score below is known in advance:

* ``includes``: C when the target (case-folded) is a substring of that reply.
* ``match``: C when the reply (case-folded, punctuation stripped) ends with the target.
* ``letter_grade``: P for difficulty 2, N for difficulty 3, otherwise C/I from ``includes``;
  it returns no score at all (``None``) for sample ``q13``.
* ``judge``: a numeric pseudo judge score, ``difficulty / 10``.
* ``rubric``: a dict value ``{"short": C/I (target of at most 5 characters), "words": number
  of words in the target}``, like model-graded scorers that return several values.

Sample ``q07`` raises inside the solver, so it is logged with an error and no scores
(``fail_on_error=False`` keeps the eval going).
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    PARTIAL,
    Score,
    Scorer,
    Target,
    accuracy,
    includes,
    match,
    mean,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

DATASET = Path(__file__).parent / "inspect_dataset.jsonl"
ERROR_ID = "q07"
NO_SCORE_ID = "q13"


@solver
def flaky_generate() -> Solver:
    """Generate, except for sample ``q07`` which raises."""
    inner = generate()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == ERROR_ID:
            raise RuntimeError(f"simulated solver failure on sample {ERROR_ID}")
        return await inner(state, generate)

    return solve


@scorer(metrics=[accuracy()])
def letter_grade() -> Scorer:
    """Letter grades C/I/P/N from metadata; no score for sample ``q13``."""

    async def score(state: TaskState, target: Target) -> Score | None:
        if state.sample_id == NO_SCORE_ID:
            return None
        difficulty = state.metadata["difficulty"]
        if difficulty == 2:
            return Score(value=PARTIAL)
        if difficulty == 3:
            return Score(value=NOANSWER)
        hit = target.text.casefold() in state.output.completion.casefold()
        return Score(value=CORRECT if hit else INCORRECT)

    return score


@scorer(metrics=[mean()])
def judge() -> Scorer:
    """A numeric pseudo judge score: difficulty / 10."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["difficulty"] / 10)

    return score


@scorer(metrics={"short": [accuracy()], "words": [mean()]})
def rubric() -> Scorer:
    """A dict-valued score: is the target short, and how many words it has."""

    async def score(state: TaskState, target: Target) -> Score:
        short = CORRECT if len(target.text) <= 5 else INCORRECT
        return Score(value={"short": short, "words": len(target.text.split())})

    return score


@task
def slicewise_fixture() -> Task:
    """Twenty questions with ``difficulty`` and ``subject`` metadata."""
    return Task(
        dataset=json_dataset(
            str(DATASET),
            FieldSpec(
                input="question", target="answer", id="id", metadata=["difficulty", "subject"]
            ),
        ),
        solver=flaky_generate(),
        scorer=[includes(), match(), letter_grade(), judge(), rubric()],
        fail_on_error=False,
    )
