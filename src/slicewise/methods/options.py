"""Every tuning option of the estimators, declared once: default, constraint and help.

:class:`MethodOptions` is a frozen dataclass whose fields carry their constraints (the model is
scikit-learn's declared parameter constraints, ``sklearn.utils._param_validation``): building one
validates and normalises every field, and a bad value raises
:class:`~slicewise.exceptions.InvalidParameterError` naming the parameter, the public function,
the rule and the value. Three things read the declarations instead of repeating them:

* the public functions, whose keyword defaults are ``DEFAULTS.<name>`` and which build their
  options with :meth:`MethodOptions.from_arguments` (their keyword names stay explicit and typed);
* the command line, whose flags come from :func:`add_option_flags`;
* the method listing and the docs (``help`` of each field).

Adding an option: a field here (default, constraint, help, flag), the keyword in the public
functions that expose it, and the method that reads it.
"""

from __future__ import annotations

import argparse
import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, fields
from typing import Any

import numpy as np

from .._typing import FloatArray
from .._validation import check_rng
from ..estimators.learner_design import LEARNERS, Learner
from ..exceptions import InvalidParameterError
from ..smoothing.area import MODELS
from ..smoothing.objective import OBJECTIVES, PROMISES, Objective

#: Smoothing of a profile's disjoint domains (:mod:`slicewise.methods.smoothed`): ``'auto'``
#: smooths the ``auto`` method only, a model name any method with a variance, ``'none'`` never.
SMOOTHING: tuple[str, ...] = ("auto", *MODELS, "none")


# --------------------------------------------------------------------------- constraints


@dataclass(frozen=True)
class Interval:
    """A real (or integer) number in an interval; ``inf`` allowed only when ``allow_inf``."""

    low: float | None = None
    high: float | None = None
    closed: str = "left"
    integer: bool = False
    allow_inf: bool = False
    rule: str | None = None

    def describe(self, plural: bool = False) -> str:
        if self.rule is not None:
            return ("values each " if plural else "") + self.rule
        parts: list[str] = []
        if self.low is not None:
            parts.append(f"{'>=' if self.closed in ('left', 'both') else '>'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<=' if self.closed in ('right', 'both') else '<'} {self.high:g}")
        kind = ("integers" if plural else "an integer") if self.integer else "a finite float"
        kind = "finite floats" if plural and not self.integer else kind
        return f"{kind} {' and '.join(parts)}".strip() + (" or inf" if self.allow_inf else "")

    def check(self, value: object) -> float | int:
        number = _number(value, integer=self.integer)
        if number is None:
            raise TypeError
        if math.isinf(number) and self.allow_inf and number > 0:
            return float(number)
        if not math.isfinite(number):
            raise ValueError
        low_ok = self.low is None or (
            number >= self.low if self.closed in ("left", "both") else number > self.low
        )
        high_ok = self.high is None or (
            number <= self.high if self.closed in ("right", "both") else number < self.high
        )
        if not (low_ok and high_ok):
            raise ValueError
        return int(number) if self.integer else float(number)


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of strings."""

    choices: tuple[str, ...]

    def describe(self, plural: bool = False) -> str:
        return ("values each " if plural else "") + "one of " + ", ".join(map(repr, self.choices))

    def check(self, value: object) -> str:
        for choice in self.choices:
            if value == choice:
                return choice
        raise ValueError


@dataclass(frozen=True)
class Custom:
    """A rule checked by a function that returns the normalised value or raises; ``parse``
    reads the command-line text (None: the option's flag takes no value the rule can read)."""

    rule: str
    convert: Callable[[object], Any]
    parse: Callable[[str], Any] | None = None
    metavar: str | None = None

    def describe(self, plural: bool = False) -> str:
        return ("values each " if plural else "") + self.rule

    def check(self, value: object) -> Any:
        return self.convert(value)


Constraint = Interval | OneOf | Custom


def _number(value: object, *, integer: bool) -> float | int | None:
    if isinstance(value, bool):
        return None
    if integer:
        return int(value) if isinstance(value, int | np.integer) else None
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    return None


def _coefficient(value: object) -> FloatArray | Callable[[Any], Any] | None:
    if value is None or callable(value):
        return value
    array = np.asarray(value, dtype=np.float64) if _numeric(value) else None
    if array is None or array.ndim not in (1, 2):
        raise TypeError
    return array


def _numeric(value: object) -> bool:
    try:
        np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return True


def _generator(value: object) -> np.random.Generator:
    return check_rng(value, func="", reproducible=True)


def _column_names(value: object) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(isinstance(v, str) and v for v in names):
        raise TypeError
    if len(set(names)) != len(names) or not names:
        raise ValueError
    return tuple(names)


def _comma_columns(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return names


# --------------------------------------------------------------------------- declarations


def option(
    default: Any,
    constraint: Constraint,
    help: str,
    *,
    flag: str | None = None,
    optional: bool = False,
) -> Any:
    """A declared option: a dataclass field whose metadata carries the constraint and help.

    ``optional``: None is allowed besides the constraint. ``flag``: the command-line spelling
    (default ``--name`` with dashes); empty for options the command line does not take.
    """
    return field(
        default=default,
        metadata={"constraint": constraint, "help": help, "flag": flag, "optional": optional},
    )


@dataclass(frozen=True, eq=False)
class MethodOptions:
    """Every tuning option of every method, validated once; each method reads the ones it
    documents. ``func`` names the public function in error messages."""

    ridge: float = option(
        0.3,
        Interval(0.0),
        "ridge penalty lambda on the standardised-signal covariance (lace and its variants)",
    )
    nuisance_scale: float = option(
        1.0,
        Interval(1.0, allow_inf=True, rule="a float >= 1 (b >= h) or inf"),
        "nuisance bandwidth b of the local coefficient as a multiple of h (inf: one pooled "
        "coefficient)",
    )
    coef: FloatArray | Callable[[Any], Any] | None = option(
        None,
        Custom("an array (G, K) or a function of the grid point", _coefficient),
        "supplied coefficient beta(z) in raw signal units (lace_oracle)",
        flag="",
        optional=True,
    )
    C: float = option(
        1.0,
        Interval(0.0, closed="neither"),
        "inverse L2 regularisation of the logistic predictors (plug-in, prediction-based "
        "methods, the learned candidate of auto)",
        flag="--C",
    )
    ppci_multiplier: float = option(
        1.0,
        Interval(0.0, closed="neither"),
        "multiplier of the L-curve Tikhonov parameter (ppci)",
    )
    strata_count: int = option(
        5,
        Interval(2.0, integer=True),
        "number of equal-width strata in Z (strat_ppi)",
    )
    ppi_bandwidth_scale: float = option(
        1.0,
        Interval(0.0, closed="neither"),
        "local-linear bandwidth of local_ppi as a multiple of h",
    )
    shrinkage: float | None = option(
        None,
        Interval(0.0, allow_inf=True, rule="a float >= 0 (inf pools the coefficient)"),
        "kappa of the shrunk coefficient (lace_shrunk, lace_learned, auto; default: chosen by "
        "cross-validated variance)",
        optional=True,
    )
    learner: Learner = option(
        "logistic",
        OneOf(LEARNERS),
        "learner of the cross-fitted prediction (lace_learned, auto)",
    )
    folds: int = option(
        5,
        Interval(2.0, integer=True),
        "cross-fitting and cross-validation folds of the labeled items",
    )
    smooth: str = option(
        "auto",
        OneOf(SMOOTHING),
        "smoothing of disjoint domains across slices: auto (the auto method, with pp-s), fh "
        "(REML/EBLUP) or pp-s (Bayesian) for any method with a variance, none",
    )
    objective: Objective = option(
        "slice",
        OneOf(OBJECTIVES),
        "what smoothing across slices promises: slice ("
        + PROMISES["slice"].split(" (objective")[0]
        + ") or ensemble ("
        + PROMISES["ensemble"].split(" (objective")[0]
        + ")",
    )
    rng: np.random.Generator | None = option(
        None,
        Custom("None, an int seed, a numpy SeedSequence or a numpy Generator", _generator),
        "seed of the methods that cross-fit (None: a fixed seed, so a call is reproducible)",
        flag="--seed",
        optional=False,
    )
    uncertainty: tuple[str, ...] | None = option(
        None,
        Custom(
            "a column name or a non-empty list of distinct column names",
            _column_names,
            parse=_comma_columns,
            metavar="COLUMNS",
        ),
        "columns that say how reliable the signals are on each item (a judge's confidence, a "
        "verbalised uncertainty): they and their products with every signal become signals, so "
        "the estimate can trust a signal where it is reliable, and next_items' residual model "
        "sends labels where it is not (comma-separated)",
        optional=True,
    )
    func: InitVar[str] = "profile"

    def __post_init__(self, func: str) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            meta = spec.metadata
            if value is None and meta["optional"]:
                continue
            object.__setattr__(self, spec.name, _validate(spec.name, value, meta, func))

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any], *, func: str) -> MethodOptions:
        """The options among ``arguments`` (for example a public function's ``locals()``);
        the others keep their declared defaults."""
        names = {spec.name for spec in fields(cls)}
        return cls(**{k: v for k, v in arguments.items() if k in names}, func=func)

    def params(self) -> dict[str, Any]:
        """Option values as reported in a result's ``params`` (no arrays, functions or
        generators)."""
        return {
            spec.name: getattr(self, spec.name)
            for spec in fields(self)
            if spec.name not in ("coef", "rng")
        }


def _validate(name: str, value: object, meta: Mapping[str, Any], func: str) -> Any:
    constraint: Constraint = meta["constraint"]
    try:
        return constraint.check(value)
    except (TypeError, ValueError) as error:
        rule = constraint.describe() + (" or None" if meta["optional"] else "")
        shown = f"{type(value).__name__}" if name == "rng" else repr(value)
        raise InvalidParameterError(
            f"The '{name}' parameter of {func} must be {rule}. Got {shown} instead."
        ) from error


#: The declared defaults, for the public functions' keyword defaults (``ridge=DEFAULTS.ridge``).
DEFAULTS = MethodOptions()


def check_values(values: object, name: str, *, func: str, argument: str) -> FloatArray:
    """Validate a list of candidate values of the declared option ``name`` (a tuning grid given
    as the parameter ``argument`` of ``func``); returns them as floats."""
    meta = {s.name: s for s in fields(MethodOptions)}[name].metadata
    constraint: Constraint = meta["constraint"]
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        array = np.array([np.nan])
    integer = isinstance(constraint, Interval) and constraint.integer
    bad = False
    for value in array.tolist():
        try:
            constraint.check(int(value) if integer and float(value).is_integer() else value)
        except (TypeError, ValueError):
            bad = True
    if array.size == 0 or bad or isinstance(values, str):
        raise InvalidParameterError(
            f"The '{argument}' parameter of {func} must be a non-empty list of "
            f"{constraint.describe(plural=True)} (values of '{name}'). Got {values!r} instead."
        )
    return array


# --------------------------------------------------------------------------- command line


def _flag(name: str, meta: Mapping[str, Any]) -> str:
    flag: str | None = meta["flag"]
    return "--" + name.replace("_", "-") if flag is None else flag


def _whole(text: str) -> int:
    if not text.strip().lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return int(text)


def _float_or_inf(text: str) -> float:
    value = text.strip().lower()
    return math.inf if value in ("inf", "infinity") else float(value)


#: The declared options the command line takes (all but the supplied coefficient).
CLI_OPTIONS = tuple(
    s.name for s in fields(MethodOptions) if s.metadata["flag"] is None or s.metadata["flag"]
)


def flag_of(name: str) -> str:
    """The command-line flag of the declared option ``name``."""
    return _flag(name, {s.name: s for s in fields(MethodOptions)}[name].metadata)


def options_taken(function: Callable[..., Any]) -> tuple[str, ...]:
    """The declared options that ``function`` takes as keyword parameters."""
    parameters = inspect.signature(function).parameters
    return tuple(name for name in CLI_OPTIONS if name in parameters)


def add_option_flags(parser: argparse._ActionsContainer, names: Iterable[str]) -> None:
    """Add the command-line flags of the declared options ``names``.

    Defaults are None (the library's declared default applies, and the help says what it is),
    so a caller can tell a flag given from one left out; choices and types follow the
    constraint.
    """
    specs = {s.name: s for s in fields(MethodOptions)}
    for name in names:
        spec = specs[name]
        meta = spec.metadata
        flag = _flag(name, meta)
        if not flag:
            raise ValueError(f"option {name!r} has no command-line flag")
        constraint: Constraint = meta["constraint"]
        default = spec.default
        kwargs: dict[str, Any] = {"dest": name, "default": None}
        if isinstance(constraint, OneOf):
            kwargs["choices"] = list(constraint.choices)
        elif isinstance(constraint, Interval):
            kwargs["type"] = (
                _whole if constraint.integer else _float_or_inf if constraint.allow_inf else float
            )
            kwargs["metavar"] = "N" if constraint.integer else "X"
        elif name == "rng":
            kwargs["type"] = _whole
            kwargs["metavar"] = "SEED"
        elif isinstance(constraint, Custom) and constraint.parse is not None:
            kwargs["type"] = constraint.parse
            kwargs["metavar"] = constraint.metavar
        shown = (
            "0"
            if name == "rng"
            else str(default)
            if isinstance(default, str)
            else ("none" if default is None else f"{default:g}")
        )
        kwargs["help"] = meta["help"] + (
            "" if default is None and name != "rng" else f" (default {shown})"
        )
        parser.add_argument(flag, **kwargs)


def given_options(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """The options among ``names`` given on the command line (the others are left out, so the
    called function's declared defaults apply)."""
    return {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
