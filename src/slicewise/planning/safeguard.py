"""Never worse than uniform: how far a batch of :func:`slicewise.next_items` moves away from
uniform probabilities.

The adaptive probabilities p^a of a batch (:mod:`slicewise.planning.allocation`) rest on a
residual model and on slice variances fitted to a few labels; where the model is wrong, they
can give a larger variance than uniform probabilities p^u would. Before each batch the design
variance each candidate would give is estimated on the labels so far, and the batch moves away
from uniform only as far as the estimated gain is significant.

**The variance of a design.** After a batch with probabilities p, item i's accumulated inclusion
probability is pi_i(p) = 1 - (1 - pi_i^prev)(1 - p_i), and the prediction-powered (AIPW)
estimate at grid point g, sum_T k_ig f_i / K_g + sum_L k_ig e_i / (pi_i K_g) (K_g = sum_T
k_ig, e = Y - f), has the Poisson design variance

.. math::

    V_g(p) = \\sum_{i \\in T} \\frac{k_{ig}^2}{K_g^2} (e_i - \\bar e_g)^2
        \\Big\\{\\frac{1}{\\pi_i(p)} - 1\\Big\\}

(Zrnic and Candes 2024, Section 3; Sarndal, Swensson and Wretman 1992, Section 3.3), which the
labels so far estimate without bias by weighting each labeled item by 1 / pi_i^prev:
V_g(p) ~ sum_L t_ig {1 / pi_i(p) - 1}, t_ig = k_ig^2 (e_i - e_g)^2 / (K_g^2 pi_i^prev), with
e_i the out-of-fold residual of the residual model (:mod:`slicewise.planning.residual`) and e_g
the slice's design-weighted mean residual. The labeled items' p_i are those the batch gives
them (from the residual model fitted without their fold), so the estimate does not judge the
design on the labels it was fitted to. A grid point with fewer than :data:`MEASURED_LABELS`
effective labels has too few residuals for that (none at all, for a small slice the pilot
missed, which the proposal may label completely): it does not enter the calibration below,
and its predicted variance is the model's alone.

**The choice.** The candidates are p(t) = (1 - t) p^u + t p^a for t in :data:`STRENGTHS`
(t > 0 also labels completely the slices that p^a labels completely). Each grid point's
variance after the batch is predicted as the plan's variance now (the slice's per-label
residual variance, shrunk as the allocation shrinks it, over its effective labels) times the
residual model's ratio sum_T kappa^2 sd^2 (1 / pi(t) - 1) / sum_T kappa^2 sd^2 (1 / pi^prev - 1),
and the whole is calibrated by how far the labels' own residuals bear the model out: c(t) /
c(0), with c(t) the estimate above summed over the grid points (each weighted by the inverse of
its model variance under uniform probabilities) over the model's own value. A residual model
that is wrong, for example one that puts its small sd on items the signals get wrong, gives
c(t) > c(0) exactly where the proposal relies on it. The ratio to uniform of the worst slice's
variance, r(t), is bootstrapped over the labeled items (:data:`BOOTSTRAP` Poisson-weight
replicates of c): its :data:`GUARD_LEVEL` quantile is an upper confidence bound u(t). Among the
candidates whose estimated mean slice variance is not above uniform's, the batch takes the t
with the smallest bound, and uniform probabilities (t = 0, r = 1) unless some u(t) < 1: the
design moves away from uniform only as far as its gain on the worst slice is significant, and
never where the mean over slices is estimated to lose. (Asking for a significant gain on the
mean as well kept half of AlpacaEval's batches uniform: its slice allocation moves labels to
the worst slice, which leaves the mean nearly where it was, 0.98-1.01 times uniform's.)

Why the calibration is pooled over grid points rather than each grid point's variance taken
from its own residuals: per grid point, the worst slice's ratio is the largest of several noisy
estimates, biased upward when the slices are alike (the judge-quality design's nine grid points)
and its bootstrap bound wider still; the first version of this module did that, and on I.3 and
the judge-quality design it kept a third of the batches uniform where the proposal's true
variance was 0.75-0.9 times uniform's (docs/results/adaptive.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._typing import FloatArray

#: Strengths t of the candidates p(t) = (1 - t) p^u + t p^a.
STRENGTHS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: One-sided level of the upper bound on the variance ratio.
GUARD_LEVEL = 0.95
#: Bootstrap replicates of the labeled items.
BOOTSTRAP = 200
#: Fewest effective labels at a grid point for its variance to be estimated from them; below,
#: the plan's residual variance stands in for its residuals (module notes).
MEASURED_LABELS = 10.0


def variance_terms(
    kernel: FloatArray, pool_mass: FloatArray, resid: FloatArray, pi_prev: FloatArray
) -> FloatArray:
    """The terms t_ig of the design variance of every grid point (module notes), shape (n, G):
    V_g(p) is estimated by sum_i t_ig {1 / pi_i(p) - 1}.

    Parameters
    ----------
    kernel : ndarray of shape (n, G)
        Kernel weights k_ig of the labeled items.
    pool_mass : ndarray of shape (G,)
        K_g = sum_T k_ig.
    resid : ndarray of shape (n,)
        Out-of-fold residuals of the labeled items.
    pi_prev : ndarray of shape (n,)
        Their inclusion probabilities before the batch.
    """
    inverse = kernel / pi_prev[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        mass = inverse.sum(axis=0)
        centre = np.where(mass > 0, resid @ inverse / np.where(mass > 0, mass, 1.0), 0.0)
        scaled = kernel / np.where(pool_mass > 0, pool_mass, np.inf)[None, :]
    spread = (resid[:, None] - centre[None, :]) ** 2
    return np.asarray(scaled**2 * spread / pi_prev[:, None], dtype=np.float64)


@dataclass(frozen=True)
class DesignChoice:
    """The strength chosen for a batch and why (module notes).

    Attributes
    ----------
    strength : float
        t of the batch's probabilities p(t) (0: uniform, 1: the adaptive proposal).
    worst, mean : tuple of float
        Estimated ratios to uniform of the worst slice's and of the mean slice variance, for
        every candidate of :data:`STRENGTHS`.
    bound : tuple of float
        The upper confidence bound u(t) of the worst slice's ratio, for every candidate.
    labels : int
        The labels the estimates rest on.
    """

    strength: float
    worst: tuple[float, ...]
    mean: tuple[float, ...]
    bound: tuple[float, ...]
    labels: int

    def note(self) -> str:
        """The plain-words account of the choice, for the notes."""
        k = STRENGTHS.index(self.strength)
        best = int(np.argmin(self.bound[1:])) + 1
        head = (
            f"On the {self.labels} labels so far (out-of-fold residuals of the residual "
            f"model), the adaptive proposal would give {self.worst[-1]:.2f} times uniform "
            f"labeling's worst-slice variance and {self.mean[-1]:.2f} times its mean slice "
            "variance"
        )
        if k == 0:
            return (
                f"{head}; no strength between uniform and the proposal was significantly "
                "better than uniform on the worst slice without a larger mean slice variance "
                f"(the best {GUARD_LEVEL:.0%} upper bound of the worst slice's ratio was "
                f"{self.bound[best]:.2f}, at strength {STRENGTHS[best]:g}), so this batch is "
                "uniform."
            )
        reach = (
            "took the full proposal"
            if self.strength == 1.0
            else f"moved {self.strength:.0%} of the way from uniform toward it"
        )
        return (
            f"{head}; this batch {reach}, the strength whose {GUARD_LEVEL:.0%} upper bound on "
            f"the worst slice's ratio was lowest ({self.bound[k]:.2f}; estimated worst slice "
            f"{self.worst[k]:.2f}, mean {self.mean[k]:.2f} times uniform's)."
        )


def choose_strength(
    terms: FloatArray,
    inverse: FloatArray,
    level: FloatArray,
    model: FloatArray,
    *,
    confidence: float = GUARD_LEVEL,
    draws: int = BOOTSTRAP,
    seed: int = 0,
) -> DesignChoice:
    """The strength of the batch (module notes).

    Parameters
    ----------
    terms : ndarray of shape (n, G)
        :func:`variance_terms` of the labeled items (a zero column where a grid point has too
        few labels to count).
    inverse : ndarray of shape (T, n)
        1 / pi_i - 1 of the labeled items after the batch under each candidate of
        :data:`STRENGTHS` (the first: uniform).
    level : ndarray of shape (G,)
        Every grid point's variance after a uniform batch, from the plan.
    model : ndarray of shape (T, G)
        The residual model's design variance of every grid point under each candidate,
        sum_T kappa_ig^2 sd_i^2 {1 / pi_i(t) - 1}.
    confidence : float
        One-sided level of the upper bound.
    draws : int
        Bootstrap replicates.
    seed : int
        Seed of the bootstrap weights (fixed: the same labels give the same choice).
    """
    n = terms.shape[0]
    measured = terms.any(axis=0) & (model[0] > 0)
    weights = np.random.default_rng(seed).poisson(1.0, (draws, n)).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        shape = np.where(model[:1] > 0, model / model[:1], 1.0)  # (T, G): the model's ratios
        omega = np.where(measured, 1.0 / model[0], 0.0)
    expected = model @ omega  # (T,)

    def calibration(v: FloatArray) -> FloatArray:
        """c(t) / c(0): the labels' variance over the model's, relative to uniform's."""
        with np.errstate(divide="ignore", invalid="ignore"):
            c = (v @ omega) / expected
            return np.asarray(c / c[..., :1], dtype=np.float64)

    point = calibration(inverse @ terms)  # (T,)
    boot = calibration(np.einsum("bi,ti,ig->btg", weights, inverse, terms, optimize=True))
    variance = level * shape  # (T, G) before the calibration
    with np.errstate(divide="ignore", invalid="ignore"):
        worst_shape = variance.max(axis=1) / variance[0].max()
        mean_shape = variance.mean(axis=1) / variance[0].mean()
    worst, mean = point * worst_shape, point * mean_shape
    boot_worst = boot * worst_shape  # (B, T)
    # an undefined ratio (no variance left to compare) counts as no gain
    bound = np.quantile(np.where(np.isfinite(boot_worst), boot_worst, 1e300), confidence, axis=0)
    bound[0] = 1.0
    k = 0
    if measured.any() and np.isfinite(level).all() and level.max() > 0 and expected[0] > 0:
        allowed = np.where(np.isfinite(mean) & (mean <= 1.0), bound, np.inf)
        k = int(np.argmin(allowed))
        k = k if allowed[k] < 1.0 else 0
    return DesignChoice(
        strength=STRENGTHS[k],
        worst=tuple(float(v) for v in worst),
        mean=tuple(float(v) for v in mean),
        bound=tuple(float(v) for v in bound),
        labels=n,
    )
