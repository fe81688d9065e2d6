"""Local PPI (Gu and Xia, 2024) with the raw judge score as the supplied predictor.

Local prediction-powered inference estimates a regression function at a point by a local
polynomial fit of a supplied model's predictions on an unlabeled sample plus a local polynomial
fit of the labeled residuals (the rectifier). The LACE paper (Section 5.2) applies the local-linear
version with the fixed raw judge-mean score as the predictor, without refitting or rescaling it.
Here the unlabeled sample is U = T \\ L, the pool items without a gold label.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray
from ..estimators.centered import residual_floor
from ..estimators.local_linear import (
    LocalSums,
    equivalent_weights,
    local_linear,
    residuals,
)
from ..moments.kernel_ops import take_rows
from .base import LabeledSet, MethodFit, PoolContext
from .options import MethodOptions
from .predictions import primary_index

#: U counts as empty at a grid point when its kernel mass is below this fraction of the pool's.
EMPTY_FRACTION = 1e-12


def profile_coordinates(ctx: PoolContext) -> tuple[FloatArray, FloatArray]:
    """Profile values and grid centred at the pool mean and scaled by the profile bandwidth."""
    z = ctx.table.z
    center = z.mean(axis=0)
    unit = np.where(np.isfinite(ctx.locality.bandwidth), ctx.locality.bandwidth, 1.0)
    return (z - center) / unit, (ctx.locality.grid - center) / unit


def fit_local_ppi(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Local PPI: local-linear prediction term on U = T \\ L plus a local-linear rectifier on L.

    Parameters
    ----------
    ctx : PoolContext
        Needs an ordered profile and ``ctx.primary`` (the judge score, used raw as predictor f).
    labeled : LabeledSet
    options : MethodOptions
        Reads ``ppi_bandwidth_scale``: the local-linear bandwidth as a multiple of h.

    Returns
    -------
    MethodFit
        Estimate NaN where L has no kernel mass. ``r2`` and ``gain`` are 0 and 1 (not
        applicable).

    Notes
    -----
    With local-linear fits LL_A[V](z) over the items A (kernel at ``ppi_bandwidth_scale`` x h):

    .. math::

        \\hat\\theta(z) = \\mathrm{LL}_U[f](z) + \\mathrm{LL}_L[Y - f](z),

    (LL_L[f] replaces LL_U[f] where U has no kernel mass, i.e. every item there is labeled).

    **Variance.** Linearising a local-linear fit on a random subset A of T (fraction pi_A) around
    the pool fit, :math:`\\mathrm{LL}_A[V] - \\mathrm{LL}_T[V] \\approx \\pi_A^{-1}\\sum_A
    \\ell^T_i r_i`, and using :math:`\\sum_U \\ell^T_i r^f_i = -\\sum_L \\ell^T_i r^f_i` gives the
    linear representation

    .. math::

        \\hat\\theta(z) - \\theta^{LL}_T(z) \\approx \\sum_{i\\in L}\\ell_i(z)\\, d_i(z),\\quad
        d_i = r^{e}_i - \\frac{\\pi(z)}{1 - \\pi(z)} r^{f}_i ,

    with r^e the residuals of e = Y - f from the labeled fit, r^f the residuals of f from the
    U fit, l_i the labeled equivalent weights and pi(z) the labeled share of the kernel mass.
    Under simple random sampling of L from T,

    .. math::

        \\widehat V_{pool}(z) = (1 - \\pi(z))\\,\\kappa(z)\\sum_L \\ell_i^2 d_i^2,\\qquad
        \\widehat V_{pop}(z) = \\widehat V_{pool}(z) + \\pi(z)\\,\\kappa(z)\\sum_L \\ell_i^2 (r^Y_i)^2,

    with :math:`\\kappa = 1 / (1 - r \\sum_L \\ell_i^2)`, r the rank of the local design (2 for a
    one-dimensional local line), a degrees-of-freedom factor that reduces to n / (n - 1) for a
    local constant with equal weights. The pool target is the local-linear smoothed pool profile
    :math:`\\theta^{LL}_T(z) = \\mathrm{LL}_T[Y](z)`, which differs from the Nadaraya-Watson pool
    profile by the O(h^2) design-bias term of local-linear smoothing.

    **Floor.** Where the judge is right on every labeled item of a neighbourhood, r^e is 0 and
    only the prediction term's variance is left, although unlabeled items may hold judge
    mistakes that the rectifier never sees. As for the centered control variates
    (:func:`~slicewise.estimators.centered.residual_floor`), the pool-target variance is at
    least the labels-only local-linear one over :math:`n_{eff,L}(z) + 1`,

    .. math::

        \\widehat V_{pool}(z) \\ge \\frac{(1 - \\pi(z))\\,\\kappa(z)\\sum_L \\ell_i^2 (r^Y_i)^2}
            {n_{eff,L}(z) + 1},\\qquad n_{eff,L}(z) = 1 \\Big/ \\sum_L \\ell_i^2 ,

    and a note names the grid points where it is reached. Measured on four ordinal levels of
    1,500 items with the judge wrong on 1% of each, 120 labels: without it the intervals
    covered 0.66-0.84 per level (se about 0.002 against errors of about 0.01). At a labeled
    fraction of 1/3 the floor is rarely reached: the prediction term's own variance,
    (pi / (1 - pi))^2 times the labels-only one, is then larger.

    References
    ----------
    Gu, Y. and Xia, D. (2024), Local prediction-powered inference, arXiv:2409.18321. LACE paper,
    Section 5.2 ("Local PPI").
    """
    column = primary_index(ctx, "local_ppi")
    f = np.asarray(ctx.table.signals[:, column], dtype=np.float64)
    x, grid_x = profile_coordinates(ctx)
    kernel = ctx.kernel(options.ppi_bandwidth_scale)
    index, y = labeled.index, labeled.y
    k_lab = take_rows(kernel, index)
    x_lab, f_lab = x[index], f[index]
    e = y - f_lab

    lab_sums = LocalSums.compute(k_lab, x_lab, np.column_stack([e, y, f_lab]))
    pool_sums = LocalSums.compute(kernel, x, f.reshape(-1, 1))
    unl_sums = pool_sums.minus(LocalSums(design=lab_sums.design, cross=lab_sums.cross[:, :, 2:]))
    fit_lab = local_linear(lab_sums, grid_x)
    fit_unl = local_linear(unl_sums, grid_x)

    pool_mass = pool_sums.design[:, 0, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.clip(fit_lab.mass / np.where(pool_mass > 0, pool_mass, np.nan), 0.0, 1.0)
    has_unl = fit_unl.mass > EMPTY_FRACTION * pool_mass
    prediction = np.where(has_unl, fit_unl.fitted[:, 0], fit_lab.fitted[:, 2])
    estimate = np.where(fit_lab.mass > 0, prediction + fit_lab.fitted[:, 0], np.nan)

    weights = equivalent_weights(k_lab, x_lab, grid_x, fit_lab)
    resid_lab = residuals(fit_lab, x_lab, np.column_stack([e, y, f_lab]), grid_x)
    resid_f = residuals(fit_unl, x_lab, f_lab.reshape(-1, 1), grid_x)[:, :, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(has_unl & (fraction < 1.0), fraction / (1.0 - fraction), 0.0)
    d = resid_lab[:, :, 0] - ratio[None, :] * np.where(np.isfinite(resid_f), resid_f, 0.0)
    w2 = weights**2
    sum_w2 = w2.sum(axis=0)
    denominator = 1.0 - fit_lab.rank * sum_w2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(denominator > 0, 1.0 / np.where(denominator > 0, denominator, 1.0), np.nan)
    var_pool = np.where(has_unl, (1.0 - fraction) * kappa * (w2 * d**2).sum(axis=0), 0.0)
    label_sq = kappa * (w2 * resid_lab[:, :, 1] ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(sum_w2 > 0, 1.0 / np.where(sum_w2 > 0, sum_w2, 1.0), 0.0)
    naive_pool = np.where(has_unl, (1.0 - fraction) * label_sq, 0.0)
    lift = np.fmax(residual_floor(naive_pool, n_eff) - var_pool, 0.0)
    var_pool = np.where(fit_lab.mass > 0, var_pool + lift, np.nan)
    var_pop = var_pool + fraction * label_sq
    g = ctx.grid_size
    return MethodFit(
        estimate=np.asarray(estimate, dtype=np.float64),
        var_pool=np.asarray(var_pool, dtype=np.float64),
        var_population=np.asarray(var_pop, dtype=np.float64),
        r2=np.zeros(g),
        gain=np.ones(g),
        borrowed=np.zeros(g, dtype=bool),
        floored=lift > 0.0,
        params={
            "ppi_bandwidth_scale": options.ppi_bandwidth_scale,
            "primary": ctx.table.signal_names[column],
        },
        notes=(
            "local_ppi targets the local-linear smoothed profile; its interval ignores the "
            "O(h^2) difference from the kernel (Nadaraya-Watson) profile.",
        ),
    )
