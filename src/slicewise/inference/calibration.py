"""Calibration weights: the variance of a control-variate estimate given how its labels fell.

A control variate that adjusts for the signals S is, to first order, a regression estimator in
the survey sense: it reweights the labeled items so that their local signal mean matches the
items it stands for. For LACE exactly (Section 3.3, theta = Ybar_L - c'(Sbar_L - Sbar_T) with
c = (Sigma_SS,T + lambda I)^+ Sigma_SY,L) the estimate is sum_L w_i g_i Y_i with calibration
weights g_i = 1 + (Sbar_T - Sbar_L)'(Sigma_SS,T + lambda I)^+ (S_i - Sbar_L) (Deville and
Sarndal 1992). ``auto``'s cross-fitted estimate keeps the labeled items' own labels and
estimates the unlabeled rest (:mod:`slicewise.inference.cv_variance`), from candidates fitted
on the labeled items, so here

.. math::

    g_i(z) = 1 + \\{\\bar S_U(z) - \\bar S_L(z)\\}^\\top \\{\\Sigma_{SS,L}(z) + \\lambda(z) I\\}^{+}
        \\{S_i - \\bar S_L(z)\\},\\qquad
    \\bar S_U(z) = \\frac{\\bar S_T(z) - \\pi(z)\\, \\bar S_L(z)}{1 - \\pi(z)},

S-bar_U the local signal mean of the unlabeled items, pi(z) the local labeled fraction, S-bar_L
and Sigma_SS,L the local mean and covariance of the labeled items' signals under the weights of
their residual mean. The usual residual variance sum_L w_i^2 e_i^2 is right on average over
labeled sets, but given the set the labels of a part of the signal space that the sample
under-covers carry more weight (g > 1) than their share, and those of an over-covered part
less. The weighted residual technique (Sarndal, Swensson and Wretman 1989, Biometrika 76:
527-537) estimates the variance given the set by sum_L w_i^2 g_i^2 e_i^2. ``lace`` and the other
linear fits whose coefficient is fitted on the labels (:func:`slicewise.methods.base.linear_fit`
with a :class:`~slicewise.methods.base.GivenSet`) take the same weights through
:func:`given_set_factor`: their residual variance comes from the labeled sums, which lack the
fourth moments that g^2 e^2 needs, so the labeled rows give the ratio of the calibrated to the
plain residual sum of squares, and that ratio multiplies the variance (below). A fixed or
supplied coefficient (``naive``, ``lace_oracle``, a fixed prediction) is not calibrated on the
labels and keeps the plain variance.

The covariance is the labeled items' own (the learner is fitted on them, and GREG's
g-weights take the sample's; with raw weights, the population's, with S-bar_T for S-bar_U,
gave 0.928 in the split-judge case below), plus a ridge lambda(z) = K / n_eff(z) on the
standardised signals, n_eff = 1 / sum w^2 Kish's size: with many signals and few labels the
exact calibration weights would be extreme, and the ridge keeps them near 1 in the directions
the labels do not determine (raw weights: 0 and K / n_eff both 0.942 there, 0.3 gave 0.932).

**Relative weights, never below the plain variance.** Under simple random sampling the mean of
g^2 is about 1 + K / n_eff: raw g-weights also raise the average variance, by the second-order
noise of the fitted calibration, which ``auto``'s out-of-fold residuals already carry. Raw
weights made ``sw.plan``'s pilot half-widths pessimistic (Setting B, one grid point's median
realized / predicted 0.798 over 16 draws, against 0.829 without weights and the test's bound
0.8). So the weights are divided by the root of their mean square under the squared item
weights: they move the variance toward the items the sample under-covers without raising its
average. Those relative weights alone also lowered the variance where the sample over-covers
the noisy items, and on LLMBar by subset at 300 labels one slice's coverage fell from 0.965 to
0.925 (200 draws). ``auto`` therefore takes the calibrated variance only at grid points where it
is the larger (:meth:`~slicewise.inference.cv_variance.CrossValidated.calibrated`): validity
first, at the cost of intervals a few percent wider (below). The plan's per-grid-point medians
of realized / predicted half-width are then 0.90-0.95 (four domains) and 0.86-0.94 (Setting B).

It matters where the residual variance sits on a few items of a distinct kind. On the
split-judge pool of ``benchmarks.bench_adaptive`` (seed 1; a judge 98% right on 80% of level
1's items and a coin on the rest, so about 28 of its 137 labels carry its variance), over 400
draws of 550 labels, the error of the level-1 estimate was large exactly when few coin items
were labeled, which is when the plain residual variance was small: ``auto``'s intervals covered
0.922 (gold-only 0.962; correlation of the se with the absolute error -0.18). With the
calibrated variance where it is the larger they cover 0.942 (raw weights 0.942, relative
weights alone 0.938), the other levels 0.96-0.962 (0.948-0.962 before); the RMS se rises by 5%
at level 1 (0.0190 to 0.0200) and by 1.4-3.4% at the others. On LLMBar (``research.per_slice``,
200 draws, 60 / 120 / 300 labels) the mean coverage by log input length went from 0.968 / 0.946
/ 0.940 to 0.977 / 0.955 / 0.944, the worst slice's from 0.935 / 0.920 / 0.910 to 0.955 / 0.925
/ 0.915, by subset the worst slice's from 0.980 / 0.950 / 0.955 to 0.985 / 0.955 / 0.965; slices
below 0.93 went from 8 to 4 of 99, with errors within 0.954-1.001 of before. Calibration on the
candidate's own feature (a learned prediction) instead of the signals did not help (0.925): the
learner calibrates on the signals through a model that separates the coin items from the
others, which one linear prediction does not.

**In-sample linear fits** (``lace``, ``global_cv``, ``per_signal_cv``, and ``lace_shrunk`` /
``lace_learned``, which calibrate on the signals as ``auto`` does): the factor
sum w^2 g^2 e^2 / sum w^2 e^2 with the fit's in-sample residuals, taken where it is above 1.
On the same split-judge draws ``lace`` covered 0.935 at level 1 (0.922 with the plain variance;
raw weights and no ridge gave 0.935 too), the other levels 0.955-0.962 (0.950-0.958), with
the RMS se 5% higher at level 1 (0.0195 to 0.0205) and 2-3% at the others. On LLMBar
(``python -m research.per_slice --dataset llmbar --method lace --reps 200``, same draws) the
mean coverage by subset at 300 labels went from 0.957 to 0.970 (worst slice 0.915 to 0.940),
by log input length at 60 / 120 / 300 labels from 0.915 / 0.951 / 0.944 to 0.927 / 0.961 /
0.950 (worst slice 0.885 to 0.895 at 300; at 60 and at subset's 60 and 120 most misses are
slices with at most K labels, where ``lace`` reports no interval; AlpacaEval, UniEval, PandaLM
and WMT in docs/results/per_slice.md). With 10 of level a's 100 labels on its coin items
(``tests/methods/test_calibration.py``) the plain ``lace`` and ``global_cv`` se were 0.52-0.66
of the exact post-stratified one; calibrated, 0.98-1.32.
The cost is in small slices, where the ratio is noisy and only its upper side is taken: in the
six-group coverage test of ``tests/core/test_coverage.py`` (1,000 draws) the smallest group
(about 36 labels, 3 signals) covered 0.973 with a 5% larger RMS se (0.968 with the plain
variance); the others 0.944-0.961 (0.942-0.960). The ratio without the lower bound at 1 kept
split-judge level 1 at 0.922.
"""

from __future__ import annotations

import numpy as np

from .._typing import FloatArray
from ..estimators.centered import ridge_solve


def calibration_weights(
    signals: FloatArray,
    weights: FloatArray,
    pool_mean: FloatArray,
    fraction: FloatArray,
    *,
    residual: FloatArray | None = None,
    ridge: float | None = None,
    relative: bool = True,
) -> FloatArray:
    """g_i(z) of the module notes, shape (n, G).

    Parameters
    ----------
    signals : ndarray of shape (n, K)
        Standardised signals of the labeled items.
    weights : ndarray of shape (n, G)
        Local weights of the labeled items (each column sums to 1), whose mean of ``signals``
        pi(z) multiplies in S-bar_U.
    pool_mean : ndarray of shape (G, K)
        Local pool mean of the signals, S-bar_T(z).
    fraction : ndarray of shape (G,)
        Local labeled fraction pi(z).
    residual : ndarray of shape (n, G), optional
        Weights of the residual mean when they are not ``weights`` (design weights,
        :class:`~slicewise.inference.cv_variance.DesignWeights`); S-bar_L and the covariance
        are theirs.
    ridge : float, optional
        lambda; default K / n_eff(z), n_eff = 1 / sum w^2 (module notes).
    relative : bool, default True
        Divide g_i(z) by the root of its mean square under the squared weights (module notes),
        so that the weights move the variance between items without raising its average.

    Returns
    -------
    ndarray of shape (n, G)
        1 without signals, where the neighbourhood is fully labeled or where its moments are
        not finite.
    """
    if signals.shape[1] == 0:
        return np.ones_like(weights)
    rest = weights if residual is None else residual
    sbar = rest.T @ signals  # (G, K)
    k = signals.shape[1]
    products = (signals[:, :, None] * signals[:, None, :]).reshape(-1, k * k)
    second = (rest.T @ products).reshape(-1, k, k)
    cov = second - sbar[:, :, None] * sbar[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        labeled = weights.T @ signals
        unlabeled = (pool_mean - fraction[:, None] * labeled) / (1.0 - fraction)[:, None]
    gap = unlabeled - sbar
    usable = (
        (fraction < 1.0) & np.all(np.isfinite(gap), axis=1) & np.all(np.isfinite(cov), axis=(1, 2))
    )
    eigval, eigvec = np.linalg.eigh(np.where(usable[:, None, None], cov, 0.0))
    n_eff = 1.0 / np.maximum(np.einsum("ig,ig->g", rest, rest), 1e-300)
    lam = (signals.shape[1] / n_eff)[:, None] if ridge is None else ridge
    direction, _ = ridge_solve(
        np.maximum(eigval, 0.0), eigvec, np.where(usable[:, None], gap, 0.0), lam
    )
    g = 1.0 + signals @ direction.T - np.einsum("gk,gk->g", sbar, direction)[None, :]
    if relative:
        square = rest**2
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_square = np.einsum("ig,ig->g", square, g**2) / square.sum(axis=0)
        g = g / np.sqrt(np.where(mean_square > 0, mean_square, 1.0))
    return np.asarray(g, dtype=np.float64)


def given_set_factor(
    weights: FloatArray,
    y: FloatArray,
    x: FloatArray,
    coef: FloatArray,
    signals: FloatArray,
    pool_mean: FloatArray,
    fraction: FloatArray,
    *,
    pi: FloatArray | None = None,
) -> FloatArray:
    """The calibrated residual variance of an in-sample linear fit over its plain one, shape (G,).

    sum_L w_i^2 g_i^2 (e_i - ebar)^2 / sum_L w_i^2 (e_i - ebar)^2 with e_i = Y_i - c(z)' X_i and
    the relative g_i(z) of :func:`calibration_weights` on the standardised ``signals``,
    where that ratio is above 1 (beyond round-off), else 1: the factor by which
    :func:`slicewise.inference.variance.local_variance` raises the residual variance of ``lace``
    and the other linear fits (module notes).

    Parameters
    ----------
    weights : ndarray of shape (n, G)
        Unweighted local weights of the labeled items (each column sums to 1).
    y : ndarray of shape (n,)
    x : ndarray of shape (n, p)
        The fit's features.
    coef : ndarray of shape (G, p)
    signals : ndarray of shape (n, K)
        The standardised features of the calibration (the fit's own, or the signals for a
        learned feature, as ``auto`` calibrates).
    pool_mean : ndarray of shape (G, K)
        Local pool mean of ``signals``.
    fraction : ndarray of shape (G,)
        Local labeled fraction.
    pi : ndarray of shape (n,), optional
        Inclusion probabilities: the residuals then take the Hajek weights (k_i / pi_i) / sum.
    """
    if x.shape[1] == 0 or signals.shape[1] == 0 or y.size == 0:
        return np.ones(weights.shape[1])
    rest = weights
    if pi is not None:
        inverse = weights / pi[:, None]
        total = inverse.sum(axis=0)
        rest = inverse / np.where(total > 0, total, 1.0)
    e = y[:, None] - x @ coef.T
    e = e - np.einsum("ig,ig->g", rest, e)[None, :]
    square = rest**2 * e**2
    g = calibration_weights(
        signals, weights, pool_mean, fraction, residual=None if pi is None else rest
    )
    plain = square.sum(axis=0)
    calibrated = np.einsum("ig,ig->g", square, g**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = calibrated / plain
    higher = np.isfinite(ratio) & (calibrated > plain + 1e-9 * np.abs(plain))
    return np.where(higher, ratio, 1.0)
