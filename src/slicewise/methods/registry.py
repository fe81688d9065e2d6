"""The method registry: every profile method by name, with what it needs and how to tune it."""

from __future__ import annotations

import pandas as pd

from .base import MethodSpec
from .borrowing import fit_auto, fit_lace_learned, fit_lace_shrunk
from .control_variates import (
    fit_global_cv,
    fit_lace,
    fit_lace_oracle,
    fit_naive,
    fit_per_signal_cv,
    fit_residual_only,
)
from .local_ppi import fit_local_ppi
from .ppci import fit_ppci
from .predictions import fit_aug_plugin, fit_plugin_judge, fit_plugin_multi, fit_scalar_pred_cv
from .strat_ppi import fit_strat_ppi

RIDGE_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
LOGISTIC_C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0)
PPCI_MULTIPLIER_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
STRATA_GRID = (3.0, 4.0, 5.0, 7.0, 10.0)
PPI_BANDWIDTH_GRID = (0.5, 0.75, 1.0, 1.5, 2.0)

_SPECS = (
    MethodSpec(
        "naive",
        "Labeled local mean of the gold labels (no signals).",
        (),
        None,
        (),
        True,
        fit_naive,
        design_weights=True,
    ),
    MethodSpec(
        "lace",
        "LACE: local ridge control variate on all signals, centered by the pool means.",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        True,
        fit_lace,
        design_weights=True,
    ),
    MethodSpec(
        "lace_oracle",
        "LACE with a supplied coefficient beta(z) (simulations: the efficiency bound of LACE).",
        ("signals", "coef"),
        None,
        (),
        True,
        fit_lace_oracle,
        design_weights=True,
    ),
    MethodSpec(
        "global_cv",
        "LACE with one coefficient pooled over all of Z.",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        True,
        fit_global_cv,
        design_weights=True,
    ),
    MethodSpec(
        "per_signal_cv",
        "LACE with the primary judge signal only and a scalar local coefficient.",
        ("signals", "primary"),
        "ridge",
        RIDGE_GRID,
        True,
        fit_per_signal_cv,
        design_weights=True,
    ),
    MethodSpec(
        "residual_only",
        "Ablation: LACE without the pool term (biased; no interval).",
        ("signals",),
        "ridge",
        RIDGE_GRID,
        False,
        fit_residual_only,
        design_weights=True,
    ),
    MethodSpec(
        "plugin_judge",
        "Plug-in: logistic fit of Y on the primary judge signal, averaged locally (no interval).",
        ("signals", "primary"),
        "logistic_c",
        LOGISTIC_C_GRID,
        False,
        fit_plugin_judge,
    ),
    MethodSpec(
        "plugin_multi",
        "Plug-in: ridge-logistic fit of Y on (Z, S), averaged locally (no interval).",
        ("signals",),
        "logistic_c",
        LOGISTIC_C_GRID,
        False,
        fit_plugin_multi,
    ),
    MethodSpec(
        "aug_plugin",
        "Augmented plug-in: cross-fitted (Z, S) logistic predictions plus labeled residuals.",
        ("signals",),
        "logistic_c",
        LOGISTIC_C_GRID,
        True,
        fit_aug_plugin,
    ),
    MethodSpec(
        "scalar_pred_cv",
        "PPI++-style: cross-fitted logistic prediction from S with a local scalar coefficient.",
        ("signals",),
        "logistic_c",
        LOGISTIC_C_GRID,
        True,
        fit_scalar_pred_cv,
    ),
    MethodSpec(
        "local_ppi",
        "Local PPI (Gu and Xia 2024): local-linear fits of the raw judge score and residuals.",
        ("signals", "primary", "continuous"),
        "ppi_bandwidth_scale",
        PPI_BANDWIDTH_GRID,
        True,
        fit_local_ppi,
    ),
    MethodSpec(
        "ppci",
        "PPCI (Sui et al. 2026): cross-fitted Matern RKHS weights, L-curve Tikhonov penalty.",
        ("signals", "continuous"),
        "ppci_multiplier",
        PPCI_MULTIPLIER_GRID,
        True,
        fit_ppci,
    ),
    MethodSpec(
        "strat_ppi",
        "StratPPI (Fisch et al. 2024): PPI++ in equal-width Z strata, interpolated (no interval).",
        ("signals", "continuous"),
        "strata",
        STRATA_GRID,
        False,
        fit_strat_ppi,
    ),
    MethodSpec(
        "auto",
        "Default: naive, pooled, shrunk-local and learned control variates, chosen by CV variance.",
        (),
        None,
        (),
        True,
        fit_auto,
    ),
    MethodSpec(
        "lace_shrunk",
        "LACE with the local coefficient shrunk toward the pooled one (kappa, b chosen by CV).",
        ("signals",),
        "shrinkage",
        (0.0, 4.0, 16.0, 64.0, float("inf")),
        True,
        fit_lace_shrunk,
    ),
    MethodSpec(
        "lace_learned",
        "Learned control variate: cross-fitted prediction of Y from (Z, S), exactly centred.",
        ("signals",),
        "shrinkage",
        (0.0, 4.0, 16.0, 64.0, float("inf")),
        True,
        fit_lace_learned,
    ),
)

METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in _SPECS}


def methods() -> pd.DataFrame:
    """Every profile method with a one-line description, its needs and its tuning parameter.

    Returns
    -------
    pandas.DataFrame
        Columns: method, description, needs, tunable, default_grid, interval, inclusion
        (whether the method weights by known inclusion probabilities, ``inclusion=``).

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
            "inclusion": spec.design_weights,
        }
        for spec in METHODS.values()
    ]
    return pd.DataFrame(rows)


def check_design_weights(method: str, *, inclusion: str | None, smooth: str, func: str) -> None:
    """Raise when inclusion probabilities are given to a method that cannot weight by them."""
    if inclusion is None:
        return
    if smooth == "fh" and method != "auto":
        raise ValueError(
            f"The 'smooth' parameter of {func} is 'fh', whose smoothing does not support known "
            f"inclusion probabilities yet (inclusion={inclusion!r}); pass smooth='none'."
        )
    if METHODS[method].design_weights:
        return
    supported = [name for name, spec in METHODS.items() if spec.design_weights]
    raise ValueError(
        f"Method {method!r} of {func} does not support known inclusion probabilities yet "
        f"(inclusion={inclusion!r}); use one of {supported}, or drop inclusion= if the labels are "
        "a simple random sample of the pool."
    )
