"""Parameter checks shared by the public functions.

Every message names the parameter, states the rule and echoes the offending value, in the form
"The 'ridge' parameter of profile must be a finite float >= 0. Got -1.0 instead."
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar, overload

import numpy as np

from ._typing import TARGETS, Target

T = TypeVar("T", bound=str)


def check_choice(value: object, choices: Sequence[T], *, name: str, func: str) -> T:
    """Return ``value`` if it is one of ``choices``; otherwise raise listing the valid ones."""
    for choice in choices:
        if value == choice:
            return choice
    valid = ", ".join(repr(c) for c in choices)
    raise ValueError(
        f"The '{name}' parameter of {func} must be one of {valid}. Got {value!r} instead."
    )


def check_level(level: object, *, func: str, name: str = "level") -> float:
    """A confidence level strictly between 0 and 1."""
    if isinstance(level, bool) or not isinstance(level, int | float | np.floating):
        raise TypeError(
            f"The '{name}' parameter of {func} must be a float in (0, 1). Got {level!r} instead."
        )
    value = float(level)
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a float in (0, 1). Got {level!r} instead."
        )
    return value


def check_common(level: object, target: object, *, func: str) -> tuple[float, Target]:
    """Validate ``level`` and ``target`` (every estimating function takes both)."""
    return check_level(level, func=func), check_choice(target, TARGETS, name="target", func=func)


def check_nonnegative(value: object, *, name: str, func: str, strict: bool = False) -> float:
    """A finite float >= 0 (> 0 when ``strict``)."""
    rule = "> 0" if strict else ">= 0"
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(
            f"The '{name}' parameter of {func} must be a finite float {rule}. "
            f"Got {value!r} instead."
        )
    number = float(value)
    if not math.isfinite(number) or number < 0 or (strict and number == 0):
        raise ValueError(
            f"The '{name}' parameter of {func} must be a finite float {rule}. "
            f"Got {value!r} instead."
        )
    return number


def check_positive_int(value: object, *, name: str, func: str, minimum: int = 1) -> int:
    """An integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(
            f"The '{name}' parameter of {func} must be an integer >= {minimum}. "
            f"Got {value!r} instead."
        )
    return int(value)


#: Seed used by the estimating functions when ``rng`` is None, so that a repeated call returns
#: the same result (studies and samplers draw fresh randomness instead).
DEFAULT_SEED = 0


def check_rng(rng: object, *, func: str, reproducible: bool = False) -> np.random.Generator:
    """Normalise ``rng`` once: None, an int seed, a SeedSequence or a Generator.

    With ``reproducible``, None means :data:`DEFAULT_SEED` instead of fresh OS entropy.
    """
    if rng is None and reproducible:
        return np.random.default_rng(DEFAULT_SEED)
    if rng is None or isinstance(rng, int | np.integer | np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(
        f"The 'rng' parameter of {func} must be None, an int seed, a numpy SeedSequence or a "
        f"numpy Generator. Got {type(rng).__name__} instead."
    )


def column_list(value: str | Sequence[str] | None, *, name: str, func: str) -> list[str]:
    """One column name or a list of them, as a list (None gives an empty list)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"The '{name}' parameter of {func} must be a column name or a list of column "
                f"names. Got {item!r} in it."
            )
    return items


@overload
def signal_index(
    name: str, signals: Sequence[str], *, func: str, parameter: str = ..., owner: str | None = ...
) -> int: ...
@overload
def signal_index(
    name: str | None,
    signals: Sequence[str],
    *,
    func: str,
    parameter: str = ...,
    owner: str | None = ...,
) -> int | None: ...
def signal_index(
    name: str | None,
    signals: Sequence[str],
    *,
    func: str,
    parameter: str = "primary",
    owner: str | None = None,
) -> int | None:
    """Position of the signal ``name`` among ``signals`` (None when ``name`` is None), or a
    ValueError naming the parameter, the function and the signals it may name (``owner``: the
    model whose signals they are)."""
    if name is None:
        return None
    names = list(signals)
    if name not in names:
        whose = f"model {owner!r}'s signals" if owner is not None else "the signals"
        raise ValueError(
            f"The '{parameter}' parameter of {func} must name one of {whose} {names}. "
            f"Got {name!r} instead."
        )
    return names.index(name)


def format_examples(values: Iterable[object], limit: int = 5) -> str:
    """Quote up to ``limit`` values for an error message, noting how many were left out.

    Parameters
    ----------
    values : iterable
        Values to show.
    limit : int, optional
        Maximum number of values shown.

    Returns
    -------
    str
        For example ``"'a', 'b', ... (3 more)"``.

    Example
    -------
    >>> format_examples(["q1", "q2", "q3"], limit=2)
    "'q1', 'q2', ... (1 more)"
    """
    items = list(values)
    shown = ", ".join(repr(v) if isinstance(v, str) else str(v) for v in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items) - limit} more)"
    return shown
