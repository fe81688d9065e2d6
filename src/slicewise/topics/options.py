"""The options of :func:`slicewise.topics`, declared once: default, constraint and help.

The same declarations as :mod:`slicewise.methods.options` (:func:`~slicewise.methods.options.option`
fields that carry an ``Interval`` or ``OneOf`` constraint): building :class:`TopicOptions`
validates every field and raises :class:`~slicewise.exceptions.InvalidParameterError` naming the
parameter, the rule and the value; the public function takes its keyword defaults from
:data:`TOPIC_DEFAULTS` and the command line its flags from :func:`add_topic_flags`.
"""

from __future__ import annotations

import argparse
from dataclasses import InitVar, dataclass, fields
from typing import Any

from ..methods.options import Interval, OneOf, _validate, option

#: Text representations: TF-IDF with truncated SVD, or WordLlama's static embeddings (the
#: ``embed`` extra).
METHODS: tuple[str, ...] = ("tfidf", "embedding")


@dataclass(frozen=True, eq=False)
class TopicOptions:
    """Every option of :func:`slicewise.topics`, validated once (``func`` names the function in
    error messages)."""

    k: int | None = option(
        None,
        Interval(2.0, integer=True),
        "number of topics before small ones are merged (default: chosen by the silhouette rule)",
        optional=True,
    )
    method: str = option(
        "tfidf",
        OneOf(METHODS),
        "text representation: tfidf (TF-IDF, truncated SVD) or embedding (WordLlama, the "
        "embed extra)",
    )
    budget: int | None = option(
        None,
        Interval(1.0, integer=True),
        "gold labels you plan to collect on the pool; every topic must expect min-labels of "
        "them under uniform sampling (default: every topic holds 5%% of the items)",
        optional=True,
    )
    min_labels: int = option(
        10,
        Interval(1.0, integer=True),
        "labels each topic must expect at the budget (small topics are merged)",
    )
    sample_size: int = option(
        100_000,
        Interval(100.0, integer=True),
        "texts the vocabulary, the SVD and the topics are fitted on (a random sample of a "
        "larger pool); every text is then assigned",
    )
    func: InitVar[str] = "topics"

    def __post_init__(self, func: str) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is None and spec.metadata["optional"]:
                continue
            object.__setattr__(self, spec.name, _validate(spec.name, value, spec.metadata, func))


#: The declared defaults, for the public function's keyword defaults.
TOPIC_DEFAULTS = TopicOptions()


def add_topic_flags(parser: argparse._ActionsContainer) -> None:
    """The command-line flags of the declared options (``--k``, ``--method``, ``--budget``,
    ``--min-labels``, ``--sample-size``); defaults None, so the declared ones apply."""
    for spec in fields(TopicOptions):
        constraint = spec.metadata["constraint"]
        kwargs: dict[str, Any] = {"dest": f"topic_{spec.name}", "default": None}
        if isinstance(constraint, OneOf):
            kwargs["choices"] = list(constraint.choices)
        else:
            kwargs["type"] = int
            kwargs["metavar"] = "N"
        shown = "none" if spec.default is None else str(spec.default)
        kwargs["help"] = f"{spec.metadata['help']} (default {shown})"
        flag = "--topic-" + spec.name.replace("_", "-")
        parser.add_argument(flag, **kwargs)


def given_topic_options(args: argparse.Namespace) -> dict[str, Any]:
    """The topic options given on the command line, by keyword name."""
    out = {}
    for spec in fields(TopicOptions):
        value = getattr(args, f"topic_{spec.name}", None)
        if value is not None:
            out[spec.name] = value
    return out
