"""The one method registry: every method of :func:`slicewise.profile` and of
:func:`slicewise.domains` by name, tagged with its entry points, with what it needs and how to
tune it; :func:`methods` lists them."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from ..smoothing.area import DESCRIPTIONS as SMOOTHING
from .base import LabeledSet, MethodFit, MethodFunction, MethodSpec, PoolContext
from .borrowing import fit_auto, fit_lace_learned, fit_lace_shrunk
from .control_variates import (
    fit_global_cv,
    fit_lace,
    fit_lace_oracle,
    fit_naive,
    fit_per_signal_cv,
    fit_residual_only,
)
from .design import (
    fit_greg,
    fit_greg_or_hajek,
    fit_hajek,
    fit_ht,
    fit_ppi,
    fit_ppi_plus_plus,
)
from .local_ppi import fit_local_ppi
from .options import MethodOptions
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
        "C",
        LOGISTIC_C_GRID,
        False,
        fit_plugin_judge,
    ),
    MethodSpec(
        "plugin_multi",
        "Plug-in: ridge-logistic fit of Y on (Z, S), averaged locally (no interval).",
        ("signals",),
        "C",
        LOGISTIC_C_GRID,
        False,
        fit_plugin_multi,
    ),
    MethodSpec(
        "aug_plugin",
        "Augmented plug-in: cross-fitted (Z, S) logistic predictions plus labeled residuals.",
        ("signals",),
        "C",
        LOGISTIC_C_GRID,
        True,
        fit_aug_plugin,
    ),
    MethodSpec(
        "scalar_pred_cv",
        "PPI++-style: cross-fitted logistic prediction from S with a local scalar coefficient.",
        ("signals",),
        "C",
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
        "strata_count",
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
        design_weights=True,
    ),
    MethodSpec(
        "lace_shrunk",
        "LACE with the local coefficient shrunk toward the pooled one (kappa, b chosen by CV).",
        ("signals",),
        "shrinkage",
        (0.0, 4.0, 16.0, 64.0, float("inf")),
        True,
        fit_lace_shrunk,
        design_weights=True,
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


def _domains_only(name: str, model: str) -> MethodFunction:
    """The profile fit of a domains-only method: a clear refusal naming the profile option."""

    def fit(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
        raise ValueError(
            f"Method {name!r} is a method of slicewise.domains; a profile smooths its slices "
            f"with the same model as smooth={model!r}."
        )

    return fit


#: The design-based direct estimators (:mod:`slicewise.estimators.survey.direct`), methods of
#: both entry points: each level of a categorical profile is a domain, the labeled set's
#: inclusion probabilities (n / M without them) give the design weights (:mod:`.design`).
_DESIGN_SPECS = tuple(
    MethodSpec(
        name=name,
        description=description,
        needs=(*needs, "categorical"),
        tunable=None,
        grid=(),
        variance=True,
        fit=fit,
        design_weights=True,
        entry_points=("profile", "domains"),
    )
    for name, needs, description, fit in (
        (
            "ht",
            (),
            "Horvitz-Thompson: design-weighted labeled total over the domain's pool size.",
            fit_ht,
        ),
        ("hajek", (), "Hajek: design-weighted labeled mean (ratio of HT totals).", fit_hajek),
        (
            "ppi",
            ("signals",),
            "PPI: pool mean of a prediction plus the HT mean of the labeled residuals.",
            fit_ppi,
        ),
        (
            "ppi++",
            ("signals",),
            "PPI++: PPI with the prediction scaled by its variance-minimising coefficient.",
            fit_ppi_plus_plus,
        ),
        (
            "greg",
            ("signals",),
            "GREG: HT plus a regression correction with one slope pooled over all domains.",
            fit_greg,
        ),
        (
            "greg-or-hajek",
            ("signals",),
            "GREG's pooled-slope correction scaled per labeled unit by its domain's "
            "leave-one-out slope (shrunk, in [0, 1]; domains with >= 20 labels); the default "
            "direct estimator under fh, pp-s and pp-ts.",
            fit_greg_or_hajek,
        ),
    )
)

#: The smoothed domain methods of :func:`slicewise.domains` (:mod:`slicewise.domains.fit`):
#: a direct estimate, then the area-level model of :mod:`slicewise.smoothing.area`.
_SMOOTHED_SPECS = tuple(
    MethodSpec(
        name=name,
        description=description,
        needs=needs,
        tunable=None,
        grid=(),
        variance=True,
        fit=_domains_only(name, model),
        design_weights=True,
        entry_points=("domains",),
    )
    for name, needs, description, model in (
        (
            "fh",
            (),
            f"{SMOOTHING['fh']} (Prasad-Rao MSE), on the direct estimates (GREG-or-Hajek with "
            "signals, else HT); taxonomy levels if given. As profile(smooth='fh').",
            "fh",
        ),
        (
            "pp-s",
            (),
            f"{SMOOTHING['pp-s']}, on the direct estimates. As profile(smooth='pp-s').",
            "pp-s",
        ),
        (
            "pp-ts",
            ("taxonomy",),
            "PP-TS: PP-S with additive random effects per taxonomy level (nested or crossed).",
            "pp-s",
        ),
    )
)

#: Every method of both entry points, tagged with them (``MethodSpec.entry_points``).
REGISTRY: dict[str, MethodSpec] = {
    spec.name: spec for spec in (*_SPECS, *_DESIGN_SPECS, *_SMOOTHED_SPECS)
}
#: The methods of :func:`slicewise.profile` (and the functions built on it).
METHODS: dict[str, MethodSpec] = {
    name: spec for name, spec in REGISTRY.items() if "profile" in spec.entry_points
}
#: The methods of :func:`slicewise.domains`, in the order of the listing.
DOMAIN_METHODS: tuple[str, ...] = tuple(
    name for name, spec in REGISTRY.items() if "domains" in spec.entry_points
)

EntryPoint = Literal["profile", "domains"]
ENTRY_POINTS: tuple[EntryPoint, ...] = ("profile", "domains")


def methods(entry_point: EntryPoint | None = None) -> pd.DataFrame:
    """Every method with a one-line description, its entry points, its needs and its tuning.

    Parameters
    ----------
    entry_point : {'profile', 'domains'}, optional
        Only the methods of :func:`slicewise.profile` (and the functions built on it: select,
        study, profile_models, gap, rank_models, deployment_score, cascade), or only those of
        :func:`slicewise.domains`. Default: all, profile methods first.

    Returns
    -------
    pandas.DataFrame
        One row per method. Columns: method, entry_point (the functions whose ``method=`` takes
        the name: 'profile', 'domains', or 'profile, domains' for the design-based direct
        estimators, which a categorical profile runs on its levels as domains), description,
        needs (inputs besides Z and the gold label: 'signals', 'primary', 'coef', 'continuous'
        (an ordered Z), 'categorical' (each level of Z a domain), 'taxonomy'; every domain method
        also needs the sampling design), tunable, default_grid, interval (whether it reports a
        standard error), inclusion (whether it weights by known inclusion probabilities,
        ``inclusion=``).

    Examples
    --------
    >>> import slicewise as sw
    >>> "lace" in set(sw.methods()["method"])
    True
    >>> sw.methods("domains")["method"].tolist()
    ['ht', 'hajek', 'ppi', 'ppi++', 'greg', 'greg-or-hajek', 'fh', 'pp-s', 'pp-ts']
    """
    from .._validation import check_choice

    if entry_point is not None:
        entry_point = check_choice(entry_point, ENTRY_POINTS, name="entry_point", func="methods")
    frame = pd.DataFrame(
        [
            {
                "method": spec.name,
                "entry_point": ", ".join(spec.entry_points),
                "description": spec.description,
                "needs": ", ".join(spec.needs) or "-",
                "tunable": spec.tunable or "-",
                "default_grid": ", ".join(f"{v:g}" for v in spec.grid) or "-",
                "interval": spec.variance,
                "inclusion": spec.design_weights,
            }
            for spec in REGISTRY.values()
        ]
    )
    if entry_point is None:
        return frame
    keep = [entry_point in str(where).split(", ") for where in frame["entry_point"]]
    return frame[keep].reset_index(drop=True)


def check_design_weights(method: str, *, inclusion: str | None, func: str) -> None:
    """Raise when inclusion probabilities are given to a method that cannot weight by them.

    Fay-Herriot smoothing (``smooth='fh'`` or ``'pp-s'``, and ``auto``'s default on disjoint
    domains) takes the method's design-based direct variances, so it needs no check of its own.
    """
    if inclusion is None:
        return
    if METHODS[method].design_weights:
        return
    supported = [name for name, spec in METHODS.items() if spec.design_weights]
    raise ValueError(
        f"Method {method!r} of {func} does not support known inclusion probabilities yet "
        f"(inclusion={inclusion!r}); use one of {supported}, or drop inclusion= if the labels are "
        "a simple random sample of the pool."
    )
