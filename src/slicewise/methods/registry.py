"""The method registry: every profile method by name, with what it needs and how to tune it."""

from __future__ import annotations

import pandas as pd

from .base import MethodSpec
from .control_variates import (
    fit_global_cv,
    fit_lace,
    fit_lace_oracle,
    fit_naive,
    fit_per_signal_cv,
    fit_residual_only,
)

RIDGE_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)

_SPECS = (
    MethodSpec(
        "naive",
        "Labeled local mean of the gold labels (no signals).",
        (),
        None,
        (),
        True,
        fit_naive,
    ),
    MethodSpec(
        "lace",
        "LACE: local ridge control variate on all signals, centered by the pool means.",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        True,
        fit_lace,
    ),
    MethodSpec(
        "lace_oracle",
        "LACE with a supplied coefficient beta(z) (simulations: the efficiency bound of LACE).",
        ("signals", "coef"),
        None,
        (),
        True,
        fit_lace_oracle,
    ),
    MethodSpec(
        "global_cv",
        "LACE with one coefficient pooled over all of Z.",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        True,
        fit_global_cv,
    ),
    MethodSpec(
        "per_signal_cv",
        "LACE with the primary judge signal only and a scalar local coefficient.",
        ("signals", "primary"),
        "ridge",
        RIDGE_GRID,
        True,
        fit_per_signal_cv,
    ),
    MethodSpec(
        "residual_only",
        "Ablation: LACE without the pool term (biased; no interval).",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        False,
        fit_residual_only,
    ),
)

METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in _SPECS}


def methods() -> pd.DataFrame:
    """Every profile method with a one-line description, its needs and its tuning parameter.

    Returns
    -------
    pandas.DataFrame
        Columns: method, description, needs, tunable, default_grid, interval.

    Examples
    --------
    >>> import slicewise as sw
    >>> "lace" in set(sw.methods()["method"])
    True
    """
    rows = [
        {
            "method": spec.name,
            "description": spec.description,
            "needs": ", ".join(spec.needs) or "-",
            "tunable": spec.tunable or "-",
            "default_grid": ", ".join(f"{v:g}" for v in spec.grid) or "-",
            "interval": spec.variance,
        }
        for spec in METHODS.values()
    ]
    return pd.DataFrame(rows)
