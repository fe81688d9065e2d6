"""The two area-level smoothing models, one name each, and the one ``borrowed`` rule.

Profiles (``sw.profile(smooth=...)``, and ``auto`` on disjoint domains) and domains
(``sw.domains(method=...)``) fit the Fay-Herriot model of :mod:`.linear_mixed` through
:func:`fit_area_model`, so a name means the same model everywhere:

* ``'fh'`` -- the random-effect variances at their REML estimate, the EBLUP, and the
  Prasad-Rao (Datta-Lahiri with taxonomy levels) MSE as its standard error
  (:mod:`.fay_herriot`);
* ``'pp-s'`` -- the fully Bayesian model, integrated exactly over the variance components
  (flat prior on the regression coefficients, half-Cauchy on every standard deviation;
  :mod:`.bayes`): the prediction-powered smoothing of Kawano, Li and Parker (2026). With taxonomy
  levels it is their PP-TS (``sw.domains(method='pp-ts')``).

Whichever model smooths, the objective of :mod:`.objective` decides what each slice reports:
under ``'slice'`` a limited translation of its direct estimate with an interval that contains
the direct one, under ``'ensemble'`` the model's estimate and standard error; the one smoothing
step of :mod:`.step` serves both entry points.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._typing import FloatArray

if TYPE_CHECKING:
    from .linear_mixed import AreaModel

Model = Literal["fh", "pp-s"]
#: The smoothing models, by the name used in ``profile(smooth=...)`` and ``domains(method=...)``.
MODELS: tuple[Model, ...] = ("fh", "pp-s")
#: One line per model, for docstrings, the CLI help and ``sw.methods()``.
DESCRIPTIONS: Mapping[str, str] = {
    "fh": "Fay-Herriot EBLUP, the variance components at their REML estimate",
    "pp-s": "PP-S: Bayesian Fay-Herriot, exact integration over the variance components",
}


@dataclass(frozen=True, eq=False)
class AreaFit:
    """Smoothed estimates of one area-level model on the observed domains.

    Attributes
    ----------
    model : {'fh', 'pp-s'}
    estimate : ndarray of shape (D_obs,)
        EBLUP or posterior mean.
    se : ndarray of shape (D_obs,)
        Root Prasad-Rao MSE (``'fh'``) or posterior standard deviation (``'pp-s'``).
    weight : ndarray of shape (D_obs,)
        Weight of each domain's own direct estimate (shrinkage factor; posterior mean of it for
        ``'pp-s'``).
    params : mapping
        Variance components and fit diagnostics.
    """

    model: Model
    estimate: FloatArray
    se: FloatArray
    weight: FloatArray
    params: Mapping[str, Any] = field(default_factory=dict)


def fit_area_model(model: AreaModel, name: Model, *, prior_scale: float = 0.25) -> AreaFit:
    """Fit the area-level model ``model`` by the method ``name`` (see module notes).

    Parameters
    ----------
    model : AreaModel
        Direct estimates, sampling variances, design matrix and taxonomy levels of the observed
        domains.
    name : {'fh', 'pp-s'}
    prior_scale : float, default 0.25
        Half-Cauchy scale of every standard deviation (``'pp-s'`` only).

    Returns
    -------
    AreaFit
    """
    if name == "fh":
        from .fay_herriot import eblup

        fh = eblup(model)
        return AreaFit(
            model="fh",
            estimate=fh.estimate,
            se=np.sqrt(fh.mse),
            weight=fh.weight,
            params={"sigma": np.sqrt(fh.sigma2), "beta": fh.beta, "converged": fh.converged},
        )
    if name == "pp-s":
        from .bayes import bayes_fit

        bayes = bayes_fit(model, prior_scale=prior_scale)
        return AreaFit(
            model="pp-s",
            estimate=bayes.estimate,
            se=bayes.sd,
            weight=bayes.weight,
            params={
                "sigma": bayes.sigma_mean,
                "sigma_mode": bayes.mode,
                "nodes": int(bayes.node_weight.size),
                "evaluated": bayes.n_evaluated,
                "edge_mass": bayes.edge_mass,
                "dropped_mass": bayes.dropped_mass,
                "prior_scale": prior_scale,
            },
        )
    raise ValueError(f"Unknown smoothing model {name!r}; valid: {', '.join(MODELS)}.")
