"""StratPPI (Fisch et al., 2024) adapted to a profile, as in the LACE paper's comparison.

Stratified PPI estimates each stratum's mean by PPI++ (a prediction-powered mean with a tuned
scalar) inside the stratum. The LACE paper adapts it to a continuous profile: equal-width strata
of the range of Z, a PPI++ estimate per stratum with a cross-fitted logistic composite of (S, Z)
as the prediction, and linear interpolation of the stratum estimates between stratum midpoints.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._typing import FloatArray, IntArray
from ..estimators.centered import centered_estimate, ridge_coefficient
from ..estimators.predictors import cross_fitted_predictions
from ..moments.sums import LabeledMoments, PoolMoments
from .base import LabeledSet, MethodFit, PoolContext
from .options import MethodOptions
from .predictions import generator, profile_signal_design

#: Value used for a stratum without any labeled item (LACE paper, Section 5.2).
EMPTY_STRATUM_VALUE = 0.5
#: Fewer labeled or pool items than this in a stratum triggers the sparse-stratum rule.
MIN_STRATUM_ITEMS = 2


def equal_width_strata(z: FloatArray, count: int) -> tuple[IntArray, FloatArray]:
    """Assign items to ``count`` equal-width strata of [min Z, max Z].

    Returns
    -------
    stratum : ndarray of int, shape (M,)
        Stratum of each item (the maximum belongs to the last stratum).
    centers : ndarray of shape (count,)
        Stratum midpoints.
    """
    lo, hi = float(z.min()), float(z.max())
    edges = np.linspace(lo, hi, count + 1)
    stratum = np.clip(np.searchsorted(edges, z, side="right") - 1, 0, count - 1)
    return stratum.astype(np.intp), (edges[:-1] + edges[1:]) / 2.0


def fit_strat_ppi(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """StratPPI: PPI++ within equal-width strata of Z, linearly interpolated to the grid.

    Parameters
    ----------
    ctx : PoolContext
        Needs a one-dimensional ordered profile.
    labeled : LabeledSet
    options : MethodOptions
        Reads ``strata_count`` (number of strata G_s >= 2), ``C`` and ``rng`` (the
        cross-fitting folds of the composite).

    Returns
    -------
    MethodFit
        se is NaN: each stratum estimate targets its stratum mean, and the interpolated profile
        carries a binning bias of the order of the stratum width (times the profile's slope and
        curvature) that does not shrink with n, so an interval around it would not cover the
        kernel profile. ``r2`` and ``gain`` are 0 and 1 (not applicable).

    Raises
    ------
    ValueError
        If ``strata_count`` < 2 or the profile has several dimensions.

    Notes
    -----
    In stratum s with labeled items L_s, pool items T_s and the cross-fitted composite P,

    .. math::

        \\hat\\theta_s = \\bar Y_{L_s} - \\hat\\eta_s(\\bar P_{L_s} - \\bar P_{T_s}),\\qquad
        \\hat\\eta_s = \\widehat{\\mathrm{Cov}}_{L_s}(P, Y) / \\widehat{\\mathrm{Var}}_{T_s}(P),

    PPI++ in its finite-pool form (see :func:`slicewise.methods.predictions.fit_scalar_prediction`
    for the equivalence with lambda = Cov / {(1 + n/N) Var}). Sparse-stratum rule (LACE paper,
    Section 5.2): when the labeled subset or the pool has fewer than two items in a stratum, the
    stratum estimate is the labeled stratum mean, or 0.5 if the stratum has no labeled item.
    theta_hat(z) interpolates the stratum estimates linearly between stratum midpoints and is
    constant beyond the first and last midpoints.

    References
    ----------
    Fisch, A. et al. (2024), Stratified prediction-powered inference for effective hybrid
    evaluation of language models. LACE paper, Section 5.2 ("StratPPI") and Appendix H.1.
    """
    count = options.strata_count
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 2:
        raise ValueError(
            f"The 'strata_count' parameter of profile must be an integer >= 2 for method 'strat_ppi'. "
            f"Got {count!r} instead."
        )
    if ctx.table.z.shape[1] != 1:
        raise ValueError(
            "Method 'strat_ppi' needs a one-dimensional profile (equal-width strata of Z); got "
            f"{ctx.table.z.shape[1]} profile columns {list(ctx.table.z_names)}."
        )
    z = ctx.table.z[:, 0]
    stratum, centers = equal_width_strata(z, int(count))
    m = z.size
    indicator = sp.csr_array((np.ones(m), (np.arange(m), stratum)), shape=(m, int(count)))
    design = profile_signal_design(ctx)
    p = cross_fitted_predictions(
        design, labeled.index, labeled.y, c=options.C, rng=generator(options)
    ).reshape(-1, 1)
    pool = PoolMoments.compute(indicator, p)
    lab = LabeledMoments.compute(pool, labeled.index, labeled.y, p)
    coef = ridge_coefficient(pool, lab, 0.0)
    ppi = centered_estimate(pool, lab, coef.coef)
    n_lab = np.bincount(stratum[labeled.index], minlength=int(count))
    n_pool = np.bincount(stratum, minlength=int(count))
    sparse = (n_lab < MIN_STRATUM_ITEMS) | (n_pool < MIN_STRATUM_ITEMS)
    fallback = np.where(n_lab > 0, lab.mean[:, 1], EMPTY_STRATUM_VALUE)
    stratum_estimate = np.where(sparse, fallback, ppi)
    grid = ctx.locality.grid[:, 0]
    estimate = np.interp(grid, centers, stratum_estimate)
    g = ctx.grid_size
    nan = np.full(g, np.nan)
    return MethodFit(
        estimate=np.asarray(estimate, dtype=np.float64),
        var_pool=nan,
        var_population=nan.copy(),
        r2=np.zeros(g),
        gain=np.ones(g),
        borrowed=np.zeros(g, dtype=bool),
        params={
            "strata_count": int(count),
            "C": options.C,
            "stratum_centers": centers.tolist(),
            "stratum_estimates": stratum_estimate.tolist(),
            "sparse_strata": int(sparse.sum()),
        },
        notes=(
            "strat_ppi interpolates stratum means (binning bias of the order of the stratum "
            "width); no interval is reported.",
        ),
    )
