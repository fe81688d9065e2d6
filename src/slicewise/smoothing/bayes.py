"""Fully Bayesian area-level model by exact numerical integration over the variance components.

Given the variance components everything is Gaussian (:mod:`.linear_mixed`), so the posterior of
each theta_d is a mixture of normals over the posterior of the components, which has only L + 1
dimensions. We integrate it on a grid instead of sampling.

Priors (documented once here):

* beta: flat (improper uniform) on R^p, so integrating beta out leaves the REML likelihood;
* each standard deviation sigma_c (every taxonomy level and the domain effect):
  half-Cauchy(0, A) independently, A = ``prior_scale`` (default 0.25 on the label scale [0, 1];
  Gelman 2006 recommends the half-Cauchy for group-level scales with few groups, because it is
  weakly informative and has positive density at zero).

Quadrature scheme (axis-aligned adaptive tensor grid in log-standard-deviation coordinates,
the "grid strategy" of INLA without rotation):

1. find the posterior mode of s = log sigma (L-BFGS-B; the Jacobian e^s is included);
2. from the finite-difference Hessian take each coordinate's marginal scale; on each axis, walk
   from the mode in half-scale steps until the log density (other coordinates at the mode) has
   dropped by ``drop`` (default 10, i.e. e^-10 relative density) and widen to at least +/- 4.5
   marginal scales;
3. evaluate the log posterior on the tensor product of the axis grids (at most ``max_nodes``
   nodes; the grid is axis-aligned so the nodes sharing sigma_v share Z^T D^-1 Z and each node
   costs one q x q Cholesky), widen any axis whose boundary face still carries more than
   ``edge_tol`` relative density, and repeat (at most four times);
4. keep the nodes that hold all but ``mass_tol`` (1e-4) of the mass (at most 1,000), and mix the
   conditional Gaussians with the normalised node weights (midpoint rule on a regular grid).

The reported ``edge_mass`` (largest relative density on the grid boundary) and ``dropped_mass``
bound the integration error.

References
----------
Gelman, A. (2006). Prior distributions for variance parameters in hierarchical models.
*Bayesian Analysis* 1, 515-534.
Rue, H., Martino, S. and Chopin, N. (2009). Approximate Bayesian inference for latent Gaussian
models by using integrated nested Laplace approximations. *JRSS-B* 71, 319-392, Section 6.5.
Kawano, Li and Parker (2026), Prediction-powered smoothing, Section 3 (Bayesian FH, PP-TS).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy import special
from threadpoolctl import threadpool_limits

from .._typing import FloatArray
from .linear_mixed import AreaModel, conditional_posterior, reml_loglik


@dataclass(frozen=True, eq=False)
class BayesFit:
    """Posterior of every observed domain's theta as a mixture of normals.

    Attributes
    ----------
    estimate, sd : ndarray of shape (D,)
        Posterior mean and standard deviation.
    weight : ndarray of shape (D,)
        Posterior mean of the shrinkage weight 1 - psi_d P_dd.
    node_weight : ndarray of shape (K,)
        Normalised quadrature weights of the retained nodes.
    node_mean, node_sd : ndarray of shape (K, D)
        Conditional posterior mean and sd of theta at every node.
    node_sigma : ndarray of shape (K, L + 1)
        Standard deviations (levels, then domain) at every node.
    sigma_mean : ndarray of shape (L + 1,)
        Posterior mean of each standard deviation.
    mode : ndarray of shape (L + 1,)
        Posterior mode of each standard deviation.
    n_evaluated : int
    edge_mass, dropped_mass : float
    """

    estimate: FloatArray
    sd: FloatArray
    weight: FloatArray
    node_weight: FloatArray
    node_mean: FloatArray
    node_sd: FloatArray
    node_sigma: FloatArray
    sigma_mean: FloatArray
    mode: FloatArray
    n_evaluated: int
    edge_mass: float
    dropped_mass: float

    def interval(self, level: float) -> tuple[FloatArray, FloatArray]:
        """Central posterior interval of every theta_d (mixture quantiles)."""
        return mixture_interval(self.node_weight, self.node_mean, self.node_sd, level)


def mixture_interval(
    weight: FloatArray, mean: FloatArray, sd: FloatArray, level: float
) -> tuple[FloatArray, FloatArray]:
    """Quantiles (1 - level)/2 and (1 + level)/2 of per-domain normal mixtures, by bisection.

    Parameters
    ----------
    weight : ndarray of shape (K,)
    mean, sd : ndarray of shape (K, D)
    level : float
    """
    lo_p = 0.5 - level / 2.0
    hi_p = 0.5 + level / 2.0
    safe_sd = np.maximum(sd, 1e-300)
    width = 12.0 * np.max(sd, axis=0) + 1e-12
    lower_bound = np.min(mean, axis=0) - width
    upper_bound = np.max(mean, axis=0) + width

    def quantile(prob: float) -> FloatArray:
        a = lower_bound.copy()
        b = upper_bound.copy()
        for _ in range(45):
            mid = 0.5 * (a + b)
            cdf = weight @ special.ndtr((mid[None, :] - mean) / safe_sd)
            below = cdf < prob
            a = np.where(below, mid, a)
            b = np.where(below, b, mid)
        out: FloatArray = 0.5 * (a + b)
        return out

    return quantile(lo_p), quantile(hi_p)


def _log_prior(s: FloatArray, scale: float) -> FloatArray:
    """log half-Cauchy(0, A) density of sigma = e^s plus the Jacobian s (per node, summed)."""
    sigma = np.exp(s)
    out: FloatArray = (np.log(2.0 / (np.pi * scale)) - np.log1p((sigma / scale) ** 2) + s).sum(
        axis=-1
    )
    return out


def log_posterior(model: AreaModel, s: FloatArray, prior_scale: float) -> FloatArray:
    """Unnormalised log posterior of s = log sigma (shape (B, L + 1)) with beta integrated out."""
    s = np.atleast_2d(s)
    return reml_loglik(model, np.exp(2.0 * s)).loglik + _log_prior(s, prior_scale)


def _axis_grid(lo: float, hi: float, count: int) -> FloatArray:
    return np.linspace(lo, hi, max(count, 3))


def _grid(
    model: AreaModel,
    mode: FloatArray,
    f0: float,
    *,
    prior_scale: float,
    bounds: tuple[float, float],
    max_nodes: int,
    drop: float,
    edge_tol: float,
) -> tuple[FloatArray, FloatArray, int, float]:
    """Axis-aligned tensor grid around ``mode`` (steps 2-3 of the module docstring).

    Returns the nodes, their log densities (maximum 0), the number of evaluations and the largest
    relative density left on the grid boundary.
    """
    n_comp = model.n_components
    lo_bound, hi_bound = bounds
    h = 0.05
    hess = np.empty((n_comp, n_comp))
    eye = np.eye(n_comp) * h
    pts = []
    for a in range(n_comp):
        for c in range(n_comp):
            pts.extend(
                [
                    mode + eye[a] + eye[c],
                    mode + eye[a] - eye[c],
                    mode - eye[a] + eye[c],
                    mode - eye[a] - eye[c],
                ]
            )
    vals = log_posterior(model, np.array(pts), prior_scale).reshape(n_comp, n_comp, 4)
    hess = (vals[..., 0] - vals[..., 1] - vals[..., 2] + vals[..., 3]) / (4 * h * h)
    neg_h = -0.5 * (hess + hess.T)
    try:
        cov = np.linalg.inv(neg_h)
        marginal = np.sqrt(np.clip(np.diag(cov), 1e-4, 25.0))
    except np.linalg.LinAlgError:
        marginal = np.ones(n_comp)
    bad = ~np.isfinite(marginal)
    marginal[bad] = 1.0
    # Anchor the grid on a fixed lattice: each axis's scale rounded to 1/8 of an octave, the mode
    # to a multiple of the half-scale step. The optimiser's mode moves by its tolerance when the
    # input changes in the last bit (sums added in another order), which shifted every node and
    # could change the walk's or the widening's discrete steps (the posterior moved by up to
    # 1.5e-4); on the lattice the nodes stay put and only their densities change.
    marginal = np.exp2(np.round(np.log2(marginal) * 8.0) / 8.0)
    mode = np.round(mode / (0.5 * marginal)) * (0.5 * marginal)
    lows = np.empty(n_comp)
    highs = np.empty(n_comp)
    for c in range(n_comp):
        step = 0.5 * marginal[c]
        offsets = step * np.arange(1, 80)
        line = np.repeat(mode[None, :], offsets.size * 2, axis=0)
        line[: offsets.size, c] = mode[c] - offsets
        line[offsets.size :, c] = mode[c] + offsets
        line[:, c] = np.clip(line[:, c], lo_bound, hi_bound)
        lp = log_posterior(model, line, prior_scale) - f0
        down = lp[: offsets.size]
        up = lp[offsets.size :]
        k_down = int(np.argmax(down < -drop)) if np.any(down < -drop) else offsets.size - 1
        k_up = int(np.argmax(up < -drop)) if np.any(up < -drop) else offsets.size - 1
        lows[c] = max(min(mode[c] - offsets[k_down], mode[c] - 4.5 * marginal[c]), lo_bound)
        highs[c] = min(max(mode[c] + offsets[k_up], mode[c] + 4.5 * marginal[c]), hi_bound)
    per_axis = max(int(np.floor(max_nodes ** (1.0 / n_comp))), 5)
    n_eval = 0
    for _ in range(5):
        counts = [
            int(min(per_axis, max(9, np.ceil((highs[c] - lows[c]) / marginal[c]) + 1)))
            for c in range(n_comp)
        ]
        axes = [_axis_grid(lows[c], highs[c], counts[c]) for c in range(n_comp)]
        nodes = np.array(list(itertools.product(*axes)))
        lp = log_posterior(model, nodes, prior_scale)
        n_eval += nodes.shape[0]
        lp -= lp.max()
        dens = np.exp(lp).reshape([a.size for a in axes])
        widened = False
        edge = 0.0
        for c in range(n_comp):
            first = float(np.take(dens, 0, axis=c).max())
            last = float(np.take(dens, -1, axis=c).max())
            edge = max(
                edge, first if lows[c] > lo_bound else 0.0, last if highs[c] < hi_bound else 0.0
            )
            width = highs[c] - lows[c]
            if first > edge_tol and lows[c] > lo_bound:
                lows[c] = max(lows[c] - 0.5 * width, lo_bound)
                widened = True
            if last > edge_tol and highs[c] < hi_bound:
                highs[c] = min(highs[c] + 0.5 * width, hi_bound)
                widened = True
        if not widened:
            break
    return nodes, lp, n_eval, edge


def bayes_fit(
    model: AreaModel,
    *,
    prior_scale: float = 0.25,
    max_nodes: int = 12_000,
    drop: float = 10.0,
    edge_tol: float = 1e-4,
    mass_tol: float = 1e-4,
    max_kept: int = 1000,
) -> BayesFit:
    """Posterior of every domain by exact integration over the variance components.

    Parameters
    ----------
    model : AreaModel
    prior_scale : float
        Scale A of the half-Cauchy prior on every standard deviation.
    max_nodes : int
        Largest tensor grid evaluated.
    drop : float
        Log-density drop that delimits the grid.
    edge_tol : float
        Largest acceptable relative density on the grid boundary.
    mass_tol : float
        Posterior mass of the variance components that may be left out of the mixture (the
        smallest-weight nodes are dropped first).
    max_kept : int
        Largest number of mixture components kept.

    Returns
    -------
    BayesFit

    Notes
    -----
    With node weights w_k (normalised posterior density of the variance components times the
    cell volume) and conditional moments m_{kd}, v_{kd}:

    .. math::

        E(\\theta_d \\mid y) = \\sum_k w_k m_{kd},\\qquad
        \\mathrm{Var}(\\theta_d \\mid y) = \\sum_k w_k (v_{kd} + m_{kd}^2) - E(\\theta_d\\mid y)^2,

    and the central interval solves sum_k w_k Phi((t - m_kd) / sqrt(v_kd)) = (1 -/+ level) / 2.
    See the module docstring for the priors and the grid. BLAS runs single-threaded here: the
    work is many small dense systems, where extra BLAS threads only add synchronisation.
    """
    with threadpool_limits(1, user_api="blas"):
        return _bayes_fit(
            model,
            prior_scale=prior_scale,
            max_nodes=max_nodes,
            drop=drop,
            edge_tol=edge_tol,
            mass_tol=mass_tol,
            max_kept=max_kept,
        )


#: L-BFGS-B stopping rule of the mode search. The grid is laid out around the mode, so with
#: scipy's default tolerances (ftol 2.2e-9) a change of 1e-16 in the data could stop the search
#: one step earlier and move every shrinkage weight by 1e-3 (the same pool summed by DuckDB and
#: by numpy gave different smoothed profiles); searched to the last digits, the fit is a
#: continuous function of its inputs again (1e-13 for such changes).
MODE_FTOL, MODE_GTOL = 1e-15, 1e-12


def _bayes_fit(
    model: AreaModel,
    *,
    prior_scale: float,
    max_nodes: int,
    drop: float,
    edge_tol: float,
    mass_tol: float,
    max_kept: int,
) -> BayesFit:
    """The body of :func:`bayes_fit`."""
    from scipy import optimize  # heavy: imported on first fit, not with slicewise

    n_comp = model.n_components
    spread = float(np.std(model.y)) if model.y.size > 1 else 0.0
    scale = max(spread, float(np.sqrt(np.mean(model.psi))), prior_scale, 1e-6)
    lo_bound = np.log(scale) - 12.0
    hi_bound = np.log(scale) + 4.0

    def neg(s: FloatArray) -> float:
        return -float(log_posterior(model, s[None, :], prior_scale)[0])

    start = np.full(n_comp, np.log(max(spread, 1e-3) / np.sqrt(n_comp)))
    best = optimize.minimize(
        neg,
        np.clip(start, lo_bound, hi_bound),
        method="L-BFGS-B",
        bounds=[(lo_bound, hi_bound)] * n_comp,
        options={"ftol": MODE_FTOL, "gtol": MODE_GTOL, "maxiter": 1000},
    )
    mode = np.asarray(best.x, dtype=np.float64)
    f0 = -float(best.fun)
    grid_args = {
        "prior_scale": prior_scale,
        "bounds": (lo_bound, hi_bound),
        "max_nodes": max_nodes,
        "drop": drop,
        "edge_tol": edge_tol,
    }
    nodes, lp, n_eval, edge = _grid(model, mode, f0, **grid_args)  # type: ignore[arg-type]
    raw_best = float(log_posterior(model, nodes[np.argmax(lp)][None, :], prior_scale)[0])
    if raw_best > f0 + 1.0:
        # The optimiser stopped at a lesser local mode: restart from the best grid node.
        again = optimize.minimize(
            neg,
            nodes[np.argmax(lp)],
            method="L-BFGS-B",
            bounds=[(lo_bound, hi_bound)] * n_comp,
            options={"ftol": MODE_FTOL, "gtol": MODE_GTOL, "maxiter": 1000},
        )
        mode = np.asarray(again.x, dtype=np.float64)
        f0 = -float(again.fun)
        nodes, lp, more, edge = _grid(model, mode, f0, **grid_args)  # type: ignore[arg-type]
        n_eval += more
    weights = np.exp(lp)
    weights /= weights.sum()
    order = np.argsort(-weights)
    cum = np.cumsum(weights[order])
    keep_count = min(int(np.searchsorted(cum, 1.0 - mass_tol)) + 1, max_kept, int(order.size))
    keep = order[:keep_count]
    dropped = float(1.0 - weights[keep].sum())
    w = weights[keep] / weights[keep].sum()
    s_keep = nodes[keep]
    cond = conditional_posterior(model, np.exp(2.0 * s_keep))
    mean = w @ cond.mean
    second = w @ (cond.variance + cond.mean**2)
    sd = np.sqrt(np.maximum(second - mean**2, 0.0))
    return BayesFit(
        estimate=mean,
        sd=sd,
        weight=w @ cond.weight,
        node_weight=w,
        node_mean=cond.mean,
        node_sd=np.sqrt(cond.variance),
        node_sigma=np.exp(s_keep),
        sigma_mean=w @ np.exp(s_keep),
        mode=np.exp(mode),
        n_evaluated=n_eval,
        edge_mass=edge,
        dropped_mass=dropped,
    )
