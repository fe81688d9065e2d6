"""Estimators past the paper: borrowing strength for the coefficient, learned control variates, and
``auto``, which chooses among them by cross-validated variance.

Every candidate here is a centered control variate theta_hat(z) = Ybar_L(z) - c(z)'{Xbar_L(z) -
Xbar_T(z)}, unbiased for the profile whatever its coefficient; candidates differ in the features X
(the standardised signals; a cross-fitted prediction of Y from (Z, S) with or without the signals)
and the coefficient rule (the local ridge coefficient at nuisance bandwidth b, shrunk toward the
pooled one with strength kappa, :func:`~slicewise.estimators.centered.shrunk_coefficient`).
Because all are unbiased, the one with the smallest variance has the smallest error; the
variances are compared on out-of-fold residuals
(:func:`~slicewise.inference.cv_variance.cross_validated`), which penalise coefficients
that are noise. Naive is always a candidate, so the cheap signals can help but, up to the noise of
the criterion, not hurt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .._typing import BoolArray, FloatArray, IntArray
from ..data.folds import balanced_folds
from ..estimators.centered import (
    CoefficientFit,
    residual_floor,
)
from ..estimators.learned import (
    cross_fit,
)
from ..inference.calibration import calibration_weights
from ..inference.cv_batch import FoldOrder, item_sums
from ..inference.cv_variance import (
    CrossValidated,
    DesignWeights,
    cross_validated,
    dense_weights,
    design_weights,
    fold_parts,
    fourth_moment_df,
    selection_correction,
    term_factor,
)
from ..inference.variance import degenerate_floor, design_effect_factor
from ..moments.kernel_ops import take_rows
from ..moments.sums import LabeledMoments, PoolMoments
from .base import (
    GivenSet,
    LabeledSet,
    MethodFit,
    PoolContext,
    linear_fit,
)
from .candidates import (
    Candidate,
    FeatureSet,
    candidate_words,
    coefficient_caches,
    family_candidates,
    learned_features,
    signal_features,
)
from .choice import NAIVE_Z, criterion_point, item_terms, one_standard_error_choice
from .options import MethodOptions
from .smoothed import disjoint_domains, shrinkage_weights, smooth_fit

#: ``auto`` tries learned candidates only with at most this many signals per label. The
#: learner's out-of-fold predictions are features of the candidates, and the coefficient fitted
#: on them in a training fold has seen predictions made with the test fold's labels; with many
#: signals per label this second-order leak made the cross-validated variance of a learned
#: candidate 0.5-0.8 x naive's where its true error was larger than naive's (1 judge and 120
#: noise signals, 100 labels; tests/core/test_trust.py). Signal candidates are fitted strictly
#: inside the folds and are always tried.
LEARNED_SIGNALS_PER_LABEL = 0.25


def choose_and_fit(
    ctx: PoolContext,
    labeled: LabeledSet,
    options: MethodOptions,
    *,
    families: Sequence[str],
    include_naive: bool,
    method: str,
    point_weights: FloatArray | None = None,
    cross_fitted: bool = False,
) -> MethodFit:
    """Score every candidate by cross-validated variance, refit the best on all of L.

    Parameters
    ----------
    families : sequence of {'signals', 'learned', 'learned+signals'}
        Feature sets to try.
    include_naive : bool
        Whether naive competes (it wins unless a candidate's score is below
        :data:`NAIVE_MARGIN` times its own).
    method : str
        Name reported in the notes.
    point_weights : ndarray of shape (G,), optional
        Weight of each grid point's variance in the criterion (default 1). When the estimate is
        smoothed afterwards, a domain's direct variance enters the final error with the square of
        its shrinkage weight, so ``auto`` passes gamma_g^2.
    cross_fitted : bool, default False
        Report the cross-fitted estimate with its out-of-fold variance
        (:class:`~slicewise.inference.cv_variance.CrossValidated`; ``auto``) instead of the
        coefficient refitted on all of L (``lace_shrunk``, ``lace_learned``). When naive
        competes, that variance is increased by the expected optimism of having beaten naive
        (:func:`~slicewise.inference.cv_variance.selection_correction`).
    """
    rng = options.rng if options.rng is not None else np.random.default_rng(0)
    candidates = family_candidates(ctx, families, options)
    weights, mass = dense_weights(ctx.pool_kernel(1.0), labeled.index)
    fold = balanced_folds(labeled.y, max(2, min(options.folds, labeled.n)), rng)
    scales = sorted({c.nuisance_scale for c in candidates})
    feature_sets: dict[str, FeatureSet] = {}
    learner = options.learner
    families_used = {c.features for c in candidates}
    learned = families_used & {"learned", "learned+signals"}
    if learned:
        crossfit = cross_fit(
            ctx.learner_design(learner),
            labeled.index,
            labeled.y,
            learner=learner,
            folds=options.folds,
            c=options.C,
            categorical=ctx.locality.kind == "categorical",
            rng=rng,
        )
        # first: on a new pool its passes also give the signals' sums and the kernel masses
        sums = ctx.learned_sums(crossfit, scales)
    if "signals" in families_used:
        feature_sets["signals"] = signal_features(ctx, labeled, scales)
    # after the feature sets: their passes over the pool also give the kernel mass
    pool_mass = ctx.moments("none", np.zeros((ctx.n_pool, 0))).mass
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = np.clip(np.where(pool_mass > 0, mass / pool_mass, 0.0), 0.0, 1.0)
    design = None if labeled.pi is None else design_weights(weights, mass, labeled.pi, pool_mass)
    if learned:
        # centred as the pool mean of the feature: the labeled items' own out-of-fold
        # predictions and the fold models' mean over the unlabeled items, mixed by each fold's
        # share of the residual weights (CrossFit.design_centering; module notes of
        # slicewise.inference.cv_variance), with or without inclusion probabilities
        residual = weights if design is None else design.residual
        full = learned_features(ctx, labeled, crossfit, scales, residual, sums)
        feature_sets["learned+signals"] = full
        feature_sets["learned"] = full.first(1, "learned")
    empty = np.zeros((labeled.n, 0))
    g = ctx.grid_size
    naive = Candidate("none", 1.0, 0.0)
    caches = coefficient_caches(ctx, labeled, feature_sets, options.ridge, fold)

    factor = term_factor(weights, fraction, design=design)  # the same for every candidate
    parts = fold_parts(fold)

    def score(cand: Candidate) -> CrossValidated:
        if cand.features == "none":
            return cross_validated(
                weights,
                fraction,
                labeled.y,
                empty,
                fold,
                lambda rows: CoefficientFit.fixed(np.zeros((g, 0))),
                design=design,
                factor=factor,
                parts=parts,
            )
        return cross_validated(
            weights,
            fraction,
            labeled.y,
            feature_sets[cand.features].x_lab,
            fold,
            _first(caches[cand.features].rule(cand)),
            design=design,
            factor=factor,
            parts=parts,
        )

    def batch(members: Sequence[Candidate], point: FloatArray) -> tuple[FloatArray, BoolArray]:
        """The item sums of candidates that share their features, made together."""
        if members[0].features == "none":
            x_lab, coefs = empty, [[np.zeros((g, 0))] * len(parts)]
        else:
            x_lab = feature_sets[members[0].features].x_lab
            rules = [_first(caches[cand.features].rule(cand)) for cand in members]
            coefs = [[rule(train).coef for train, _ in parts] for rule in rules]
        return item_sums(in_fold_order, x_lab, coefs, point)

    in_fold_order = FoldOrder.of(weights, labeled.y, parts, factor, design=design)

    per_item = item_terms(score, [naive, *candidates], point_weights, batch=batch, grid_size=g)
    best, ratios = one_standard_error_choice(per_item, include_naive)
    table = {c.label: round(r, 4) for c, r in sorted(ratios.items(), key=lambda kv: kv[1])}
    params: dict[str, Any] = {"ridge": options.ridge, "cv_variance_ratio": table}
    if best is None or best.features == "none":
        from .control_variates import fit_naive

        runner = min(
            (c for c in ratios if c.features != "none"), key=ratios.__getitem__, default=None
        )
        reason = (
            "too few labeled items to compare the cheap signals with the gold labels alone"
            if best is None or runner is None
            else "the cheap signals did not reliably do better (the best way of using them, "
            f"{candidate_words(runner.label)}, had {ratios[runner]:.2f} times the gold-only "
            "variance in cross-validation, not clearly enough below it)"
        )
        fit = fit_naive(ctx, labeled, options)
        if cross_fitted and design is not None and best is not None:
            # the design-weighted naive that the criterion scored (module notes of cv_variance)
            none = ctx.moments("none", np.zeros((ctx.n_pool, 0)))
            fit = _cross_fitted_fit(
                ctx, labeled, score(best), weights, fraction, none, empty, design=design
            )
        return replace(
            fit,
            params={**params, "chosen": "naive"},
            notes=(f"{method} used the gold labels alone: {reason}.", *_design_note(design)),
        )
    feats = feature_sets[best.features]
    coef, omega = caches[best.features].rule(best)(np.arange(labeled.n))
    pool = feats.pool[best.nuisance_scale if not np.isinf(best.shrinkage) else np.inf]
    if cross_fitted:
        g_i = calibration_weights(  # the variance given the labeled set
            ctx.features[labeled.index],
            weights,
            ctx.moments("signals").mean,
            fraction,
            residual=None if design is None else design.residual,
        )
        chosen = score(best)
        extra = None
        if include_naive:  # the variance that won the test against naive is optimistic
            point = criterion_point(point_weights, g)
            extra = selection_correction(chosen.terms, score(naive).terms, point, NAIVE_Z)
        chosen = chosen.calibrated(g_i)  # the correction read the terms compared with naive's
        if extra is not None:
            chosen = replace(chosen, terms=chosen.terms + extra / labeled.n)
        fit = _cross_fitted_fit(
            ctx, labeled, chosen, weights, fraction, pool, feats.x_lab, design=design
        )
    else:
        lab = LabeledMoments.from_rows(
            take_rows(pool.kernel, labeled.index),
            take_rows(pool.kernel_b, labeled.index),
            labeled.y,
            feats.x_lab,
            pi=labeled.pi,
        )
        given = GivenSet(
            labeled, feats.x_lab, ctx.features[labeled.index], ctx.moments("signals").mean
        )
        fit = linear_fit(pool, lab, coef, given=given)
    borrowed = omega < 0.5
    lowest = min(ratios, key=ratios.__getitem__)
    ratio = ratios[best]
    note = (
        f"{method} combined the gold labels with {candidate_words(best.label)}. In "
        f"cross-validation its variance was {ratio:.2f} times the gold-only one, worth about "
        f"{1.0 / ratio:.1f} times as many gold labels."
        if ratio > 0
        else f"{method} combined the gold labels with {candidate_words(best.label)}."
    )
    if lowest != best:
        note += (
            f" A more flexible adjustment did slightly better ({ratios[lowest]:.2f}) but by less "
            "than its uncertainty, so the simpler one is kept."
        )
    if cross_fitted:
        note += (
            " Each label's adjustment was fitted without that label, so even many signals "
            "cannot bias the estimate."
        )
    if borrowed.any():
        note += f" {int(borrowed.sum())} slice(s) use the shared adjustment (column 'borrowed')."
    return replace(
        fit,
        borrowed=borrowed,
        params={
            **params,
            "chosen": best.label,
            "features": best.features,
            "nuisance_scale": best.nuisance_scale,
            "shrinkage": best.shrinkage,
            **({"learner": learner} if best.features != "signals" else {}),
        },
        notes=(note, *_design_note(design)),
    )


def _design_note(design: DesignWeights | None) -> tuple[str, ...]:
    if design is None:
        return ()
    return (
        "Design weights 1 / pi from the inclusion probabilities were used: candidates are "
        "compared by their design-based (Poisson, with-replacement approximation) variances, "
        "and the unlabeled items are estimated from residuals weighted by 1 / pi - 1.",
    )


def _cross_fitted_fit(
    ctx: PoolContext,
    labeled: LabeledSet,
    chosen: CrossValidated,
    weights: FloatArray,
    fraction: FloatArray,
    pool: PoolMoments,
    x_lab: FloatArray,
    *,
    design: DesignWeights | None = None,
) -> MethodFit:
    """The cross-fitted estimate of the chosen candidate with its out-of-fold variance.

    Estimate and pool-target variance: :class:`~slicewise.inference.cv_variance.CrossValidated`.
    The population target adds the pool's own sampling variance, estimated as for naive
    (:mod:`slicewise.inference.variance`); both are floored at the Agresti-Coull value where every
    label of a neighbourhood is the same. Intervals use t quantiles with nu(z) - 1 degrees of
    freedom (nu the Satterthwaite effective size, :attr:`LabeledMoments.df_effective`): the
    residuals are out of fold, so no coefficient degrees of freedom are spent on them. Where a
    candidate with features reports its residuals' own variance, that normal-theory value is
    lowered by the residuals' fourth moment
    (:func:`~slicewise.inference.cv_variance.fourth_moment_df`: the heavy-tailed residuals of a
    good prediction make the variance estimate noisier). The variance terms carry the
    calibration weights g_i(z)^2 (:mod:`slicewise.inference.calibration`, attached by
    :meth:`~slicewise.inference.cv_variance.CrossValidated.calibrated`): the variance given how
    the labels fell in the signal space, not only on average. With ``design`` (inclusion
    probabilities) the labeled moments, floor, degrees of freedom and the population part are
    the design-based ones of :mod:`slicewise.inference.variance`.
    """
    rows = take_rows(pool.kernel, labeled.index)
    lab0 = LabeledMoments.from_rows(rows, rows, labeled.y, np.zeros((labeled.n, 0)), pi=labeled.pi)
    zero = np.zeros((ctx.grid_size, 0))
    var_y = lab0.quadratic(zero, squared=False)
    floor = degenerate_floor(lab0, var_y)
    sum_w2 = lab0.sum_w2
    label_sq = lab0.quadratic(zero, squared=True)
    factor = design_effect_factor(lab0, var_y, label_sq)
    with np.errstate(divide="ignore", invalid="ignore"):
        label_part = np.where(sum_w2 < 1.0, label_sq / (1.0 - sum_w2), np.nan)
        var_pool = np.maximum(chosen.variance * factor, (1.0 - fraction) * floor)
        var_pop = var_pool + fraction * np.maximum(label_part * factor, floor)
        naive_var = (1.0 - fraction) * label_part
        r2 = np.where(naive_var > 0, 1.0 - chosen.variance / naive_var, 0.0)
        gain = 1.0 / (1.0 - (1.0 - fraction) * r2)
    if design is not None:  # Poisson design variance of the labeled items' own part
        with np.errstate(divide="ignore", invalid="ignore"):
            calibration = lab0.mass / np.where(pool.mass > 0, pool.mass, np.nan)
            sampled = calibration * lab0.design_quadratic(zero)
            var_pop = var_pool + np.maximum(sampled / (1.0 - sum_w2), fraction * floor)
            naive_var = np.maximum(label_sq - sampled, 0.0) / (1.0 - sum_w2)
            r2 = np.where(naive_var > 0, 1.0 - chosen.variance / naive_var, 0.0)
            gain = 1.0 / (1.0 - (1.0 - fraction) * r2)
    lift = np.fmax(residual_floor(naive_var * factor, lab0.n_eff) - var_pool, 0.0)
    # where a candidate with features reports its residuals' own variance (no floor reached),
    # the degrees of freedom follow the residuals' fourth moment: the residuals of a good
    # prediction are heavy-tailed, and their variance noisier than normal theory says (the
    # design-weighted naive keeps the normal-theory ones of the unweighted naive)
    own = (
        (chosen.coef.shape[1] > 0)
        & (lift <= 0.0)
        & (chosen.variance * factor >= (1.0 - fraction) * floor)
    )
    df = np.maximum(lab0.df_effective - 1.0, 1.0)
    var_pool, var_pop = var_pool + lift, var_pop + lift
    estimate = chosen.estimate(weights, pool.mean, fraction, labeled.y, x_lab, design=design)
    estimate = np.where(sum_w2 > 0, estimate, np.nan)
    no_variance = (sum_w2 <= 0) | (sum_w2 >= 1.0)  # no labels, or a single labeled item
    var_pool = np.where(no_variance, np.nan, var_pool)
    var_pop = np.where(no_variance, np.nan, var_pop)
    return MethodFit(
        estimate=estimate,
        var_pool=np.maximum(var_pool, 0.0),
        var_population=np.maximum(var_pop, 0.0),
        r2=r2,
        gain=gain,
        borrowed=np.zeros(ctx.grid_size, dtype=bool),
        df=np.where(
            own, fourth_moment_df(chosen.resid, weights, df, design=design, g=chosen.g), df
        ),
        floored=lift > 0.0,
    )


def _first(
    rule: Callable[[IntArray], tuple[CoefficientFit, FloatArray]],
) -> Callable[[IntArray], CoefficientFit]:
    def coefficient(rows: IntArray) -> CoefficientFit:
        return rule(rows)[0]

    return coefficient


def fit_lace_shrunk(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """LACE with the local coefficient shrunk toward the pooled one (borrowing strength).

    beta(z) = omega(z) beta_local(z) + (1 - omega(z)) beta_pool with omega = n_eff,b / (n_eff,b +
    kappa) (:func:`~slicewise.estimators.centered.shrunk_coefficient`). Unless ``shrinkage``
    (kappa) and ``nuisance_scale`` are given, both are chosen by cross-validated variance over
    kappa in {0, 4, 16, 64, inf} and b / h in {1, 2} (ordered profiles). Variance as for LACE.
    """
    return choose_and_fit(
        ctx, labeled, options, families=("signals",), include_naive=False, method="lace_shrunk"
    )


def fit_lace_learned(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """Learned control variate: a cross-fitted prediction of Y from (Z, S) added to the signals.

    Features: the out-of-fold prediction (exactly centred, :mod:`slicewise.estimators.learned`) and
    the standardised signals; coefficient shrunk toward the pooled one as in ``lace_shrunk``, with
    kappa and b chosen by cross-validated variance unless given. Learner: ``learner``
    ('logistic' with profile x signal interactions, or 'boosting'). For any fixed coefficient the
    estimator is unbiased for the pool profile (exactly for group profiles), so its variance has the
    same linear representation as LACE's.
    """
    return choose_and_fit(
        ctx,
        labeled,
        options,
        families=("learned", "learned+signals"),
        include_naive=False,
        method="lace_learned",
    )


def fit_auto(ctx: PoolContext, labeled: LabeledSet, options: MethodOptions) -> MethodFit:
    """``auto``: naive, pooled, shrunk-local and learned control variates, chosen by CV variance.

    Candidates: naive; the signals with the pooled coefficient and with local coefficients shrunk
    toward it (kappa in {0, 4, 16, 64}, b / h in {1, 2} for ordered profiles); a cross-fitted
    learned prediction alone and with the signals, with the same coefficient rules. The winner is the
    smallest cross-validated variance summed over grid points; naive is kept unless a candidate
    scores below 0.98 x naive. On disjoint domains (categorical or exact-level ordinal profiles)
    the chosen direct estimates are then smoothed with a Bayesian Fay-Herriot model
    (:mod:`slicewise.methods.smoothed`; ``smooth='none'`` turns this off) under
    ``options.objective`` (:mod:`slicewise.smoothing.objective`), and the criterion weighs each
    domain's variance by the square of the share of its direct estimate that the smoothing will
    report, since that is how much of it survives. The result's notes and params report the
    choice and every candidate's score; ``borrowed`` marks grid points that lean on the pooled
    coefficient or on the smoothing model. Intervals are those of the chosen estimator, widened
    by the shift of a smoothed slice (``'slice'``) or the model's (``'ensemble'``); their
    coverage after selection is measured in the test suite and docs/results.

    With inclusion probabilities (``labeled.pi``) every candidate is design-weighted: the
    coefficients, the cross-fitted estimate (the unlabeled rest from residuals weighted by
    1 / pi - 1) and the design-based cross-validated variance that selects and reports
    (:mod:`slicewise.inference.cv_variance`); the smoothing takes those direct variances.
    The learned candidates' prediction is centred at the pool mean of the feature
    (:meth:`~slicewise.estimators.learned.CrossFit.design_centering`): the labeled items at
    their out-of-fold prediction, the unlabeled ones at the fold models' mean over them, mixed by
    each fold's share of the residual weights. The centering of
    :meth:`~slicewise.estimators.learned.CrossFit.centering` (each fold model's mean over the
    items it did not train on) assumes each fold is a simple random sample of those items, and
    under the adaptive design of ``sw.next_items`` (LACE paper's Setting B, pilot 100, three
    batches of 150, 120 seeds, learned candidate forced) it left a bias of up to 2.4
    Monte-Carlo standard errors per level and coverage 0.90-0.92 (design centering: |bias| <=
    0.9 MC se, coverage 0.93-0.94, reported variance 0.86-1.16 x the Monte-Carlo one). With
    equal probabilities it is unbiased, but since those items include the fold's own labeled
    ones, the estimate applied the coefficient times (1 - n_k / |U_k|) / (1 - pi) (about 1.2
    with a fifth of a category labeled and five folds) while the out-of-fold variance assumes
    the coefficient itself: on Setting C with 1,000 of 5,000 items labeled the error was 1.3-1.5
    times the reported se where the specialists predict almost perfectly, and 100 draws covered
    894 of 1,000 (0.77 in the worst category); centred at the pool mean, 938 of 1,000, worst
    category 0.91 (``tests/methods/test_borrowing.py``).
    """
    if ctx.features.shape[1] == 0:
        from .control_variates import fit_naive

        fit = fit_naive(ctx, labeled, options)
        fit = replace(fit, notes=("auto used the gold labels alone: no cheap signals were given.",))
        if options.smooth != "none" and disjoint_domains(ctx):
            return smooth_fit(ctx, labeled, fit, options)
        return fit
    smoothing = options.smooth != "none" and disjoint_domains(ctx)
    gamma = None
    if smoothing:
        from .control_variates import fit_naive

        # the share of each slice's direct estimate that the smoothing will report
        gamma = shrinkage_weights(ctx, labeled, fit_naive(ctx, labeled, options), options)
        gamma = None if gamma is None else np.where(np.isfinite(gamma), gamma, 1.0)
    k = ctx.features.shape[1]
    learned = k <= LEARNED_SIGNALS_PER_LABEL * labeled.n
    fit = choose_and_fit(
        ctx,
        labeled,
        options,
        families=("signals", "learned", "learned+signals") if learned else ("signals",),
        include_naive=True,
        method="auto",
        point_weights=None if gamma is None else gamma**2,
        cross_fitted=True,
    )
    if not learned:
        fit = replace(
            fit,
            notes=(
                *fit.notes,
                f"Learned predictions were not tried: {k} signals for {labeled.n} labels (more "
                f"than {LEARNED_SIGNALS_PER_LABEL:g} per label), where a learner's out-of-fold "
                "predictions still carry the other folds' labels into the comparison.",
            ),
        )
    if smoothing:
        return smooth_fit(ctx, labeled, fit, options)
    return fit
