"""Oracle evaluation of domain estimators on a fully labeled table.

Repeated probability samples are drawn from a pool whose labels are all known; every draw fits
each estimator on the sampled labels only, and the errors are measured against the full-pool
domain means (the oracle). Reported per estimator: RMSE over draws and domains, coverage of the
intervals, mean interval width and interval score; for design-based cross-validation, the error it
reports against the oracle error of the estimator it selected, and Kendall's tau between its
ranking of the candidates and the oracle ranking (and the same for naive CV and sample splits).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from slicewise._typing import FloatArray, IntArray, ObjectArray
from slicewise.data.designs import (
    Allocation,
    DesignSample,
    DomainSample,
    draw,
    draw_stratified,
    sample_from_design,
)
from slicewise.domains.api import domain_result
from slicewise.domains.dbcv import design_cv
from slicewise.domains.fit import DomainFit, DomainProblem, fit_domains


def interval_score(
    low: FloatArray, high: FloatArray, truth: FloatArray, level: float
) -> FloatArray:
    """Interval score of central intervals.

    Notes
    -----
    .. math::

        S(l, u; \\theta) = (u - l) + \\frac{2}{\\alpha}(l - \\theta)_+ +
        \\frac{2}{\\alpha}(\\theta - u)_+,\\qquad \\alpha = 1 - \\text{level}.

    References
    ----------
    Gneiting, T. and Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
    estimation. *JASA* 102, 359-378, Section 6.2.
    """
    alpha = 1.0 - level
    out: FloatArray = (
        (high - low)
        + (2.0 / alpha) * np.maximum(low - truth, 0.0)
        + (2.0 / alpha) * np.maximum(truth - high, 0.0)
    )
    return out


def fit_interval(
    fit: DomainFit, sample: DomainSample, level: float, *, bounded: bool | None = None
) -> tuple[FloatArray, FloatArray]:
    """The interval a user sees for ``fit`` on ``sample``: :meth:`DomainResult.ci` itself.

    The fit is wrapped as :func:`slicewise.domains` wraps it, so the harness measures the
    product's rule (bias bound of smoothed domains, Wilson-type bounds by default) and not a copy.
    """
    interval = domain_result(fit, sample, level=level).ci(bounded=bounded)
    return interval.low, interval.high


@dataclass(frozen=True)
class HarnessSpec:
    """What one repetition does (picklable, so repetitions can run in worker processes)."""

    problem: DomainProblem
    domain: IntArray
    n_domains: int
    y: FloatArray
    strata: IntArray
    stratum_labels: ObjectArray
    budget: int
    allocation: Allocation
    methods: tuple[str, ...]
    level: float
    dbcv: tuple[str, ...]
    folds: int
    stratum_sizes: IntArray | None = None
    bounded: bool | None = None


def draw_sample(spec: HarnessSpec, rng: np.random.Generator) -> DesignSample:
    """One stratified draw of the spec's design (budget and allocation, or fixed n_h)."""
    if spec.stratum_sizes is None:
        return draw(
            spec.strata,
            spec.stratum_labels,
            design="stratified",
            budget=spec.budget,
            allocation=spec.allocation,
            rng=rng,
        )
    pool = np.bincount(spec.strata, minlength=spec.stratum_labels.size).astype(np.intp)
    selected = draw_stratified(spec.strata, spec.stratum_sizes, rng)
    return DesignSample(
        design="stratified",
        selected=selected,
        inclusion=(spec.stratum_sizes / pool)[spec.strata].astype(np.float64),
        strata=spec.strata,
        stratum_labels=spec.stratum_labels,
        pool_sizes=pool,
        sample_sizes=spec.stratum_sizes.astype(np.intp),
        allocation="user",
    )


def _one_rep(spec: HarnessSpec, seed: np.random.SeedSequence) -> dict[str, FloatArray]:
    rng = np.random.default_rng(seed)
    drawn = draw_sample(spec, rng)
    sample = sample_from_design(spec.domain, spec.n_domains, drawn, spec.y)
    counts = np.bincount(spec.domain, minlength=spec.n_domains)
    truth = np.bincount(spec.domain, weights=spec.y, minlength=spec.n_domains) / counts
    fits: dict[str, DomainFit] = {}
    out: dict[str, FloatArray] = {}
    if spec.dbcv:
        outcome = design_cv(spec.problem, sample, spec.dbcv, folds=spec.folds, rng=rng)
        fits.update(zip(spec.dbcv, outcome.fits, strict=True))
        oracle = np.array([np.nanmean((f.estimate - truth) ** 2) for f in outcome.fits])
        rows = []
        for score in (outcome.dbcv, outcome.naive, outcome.split50, outcome.split80):
            pick = int(np.nanargmin(score))
            tau = stats.kendalltau(score, oracle).statistic
            rows.append([pick, score[pick], oracle[pick], tau])
        out["validation"] = np.array(rows, dtype=np.float64)
        out["oracle"] = oracle
    sq = np.full((len(spec.methods), spec.n_domains), np.nan)
    covered = np.full_like(sq, np.nan)
    width = np.full_like(sq, np.nan)
    score_is = np.full_like(sq, np.nan)
    for c, name in enumerate(spec.methods):
        fit = fits[name] if name in fits else fit_domains(spec.problem, sample, name)
        low, high = fit_interval(fit, sample, spec.level, bounded=spec.bounded)
        sq[c] = (fit.estimate - truth) ** 2
        ok = np.isfinite(low) & np.isfinite(high)
        covered[c] = np.where(ok, (low <= truth) & (truth <= high), np.nan)
        width[c] = np.where(ok, high - low, np.nan)
        score_is[c] = np.where(ok, interval_score(low, high, truth, spec.level), np.nan)
    out.update(sq=sq, covered=covered, width=width, interval_score=score_is)
    return out


@dataclass(frozen=True, eq=False)
class HarnessResult:
    """Outcome of :func:`run_harness`.

    Attributes
    ----------
    methods : tuple of str
    squared_error, covered, width, interval_score : ndarray of shape (R, C, D)
        Per repetition, method and domain (NaN where a method gave no estimate or interval).
    dbcv_candidates : tuple of str
    validation : ndarray of shape (R, 4, 4)
        Per repetition and selector (DB-CV, naive CV, 50/50, 80/20): selected candidate index,
        reported MSE, oracle MSE of the selected candidate, Kendall's tau with the oracle ranking.
    candidate_oracle : ndarray of shape (R, C')
        Oracle MSE of every DB-CV candidate per repetition.
    level : float
    """

    methods: tuple[str, ...]
    squared_error: FloatArray
    covered: FloatArray
    width: FloatArray
    interval_score: FloatArray
    dbcv_candidates: tuple[str, ...]
    validation: FloatArray
    candidate_oracle: FloatArray
    level: float

    def table(self) -> pd.DataFrame:
        """One row per method: RMSE, coverage, mean width, interval score (over draws x domains)."""
        return pd.DataFrame(
            {
                "method": list(self.methods),
                "rmse": np.sqrt(np.nanmean(self.squared_error, axis=(0, 2))),
                "coverage": np.nanmean(self.covered, axis=(0, 2)),
                "mean_width": np.nanmean(self.width, axis=(0, 2)),
                "interval_score": np.nanmean(self.interval_score, axis=(0, 2)),
                "domains_without_estimate": np.isnan(self.squared_error).mean(axis=(0, 2)),
            }
        )

    def validation_table(self) -> pd.DataFrame:
        """One row per selector: reported RMSE, oracle RMSE of its pick, their ratio, tau."""
        if not self.dbcv_candidates:
            return pd.DataFrame()
        rows = []
        for s, name in enumerate(("DB-CV", "naive CV", "split 50/50", "split 80/20")):
            block = self.validation[:, s, :]
            reported = float(np.sqrt(np.mean(np.maximum(block[:, 1], 0.0))))
            oracle = float(np.sqrt(np.mean(block[:, 2])))
            picks = pd.Series([self.dbcv_candidates[int(i)] for i in block[:, 0]])
            rows.append(
                {
                    "selector": name,
                    "reported_rmse": reported,
                    "oracle_rmse_of_pick": oracle,
                    "ratio": reported / oracle if oracle > 0 else float("nan"),
                    "kendall_tau": float(np.nanmean(block[:, 3])),
                    "picks": ", ".join(f"{k} {v}" for k, v in picks.value_counts().items()),
                }
            )
        return pd.DataFrame(rows)


def run_harness(
    problem: DomainProblem,
    domain: IntArray,
    y: FloatArray,
    *,
    methods: Sequence[str],
    budget: int,
    strata: IntArray | None = None,
    allocation: Allocation = "proportional",
    reps: int = 100,
    level: float = 0.95,
    dbcv: Sequence[str] = (),
    folds: int = 5,
    stratum_sizes: IntArray | None = None,
    bounded: bool | None = None,
    rng: np.random.Generator,
    n_jobs: int = 1,
) -> HarnessResult:
    """Repeated stratified draws from a fully labeled pool.

    Parameters
    ----------
    problem : DomainProblem
    domain : ndarray of int, shape (M,)
    y : ndarray of shape (M,)
        Every unit's label (the oracle).
    methods : sequence of str
    budget : int
        Labels per draw (stratified SRS by ``strata``, default the domains).
    strata : ndarray of int, optional
    allocation : {'proportional', 'equal', 'neyman', 'user'}
    reps : int
    level : float
    dbcv : sequence of str
        Candidates of design-based cross-validation (empty: skip it).
    folds : int
    stratum_sizes : ndarray of int, optional
        Fixed n_h per stratum (overrides ``budget`` and ``allocation``), e.g. the PAS protocol
        n_j = int(fraction x N_j).
    bounded : bool, optional
        Kind of interval (:meth:`slicewise.DomainResult.ci`); None, the default, is what users
        get.
    rng : numpy Generator
        Split with ``spawn`` into one independent stream per repetition, so results do not
        depend on ``n_jobs``.
    n_jobs : int
        Worker processes.
    """
    n_dom = int(domain.max()) + 1
    st = domain if strata is None else strata
    labels = np.arange(int(st.max()) + 1).astype(object)
    spec = HarnessSpec(
        problem=problem,
        domain=domain,
        n_domains=n_dom,
        y=y,
        strata=st.astype(np.intp),
        stratum_labels=labels,
        budget=budget,
        allocation=allocation,
        methods=tuple(methods),
        level=level,
        dbcv=tuple(dbcv),
        folds=folds,
        stratum_sizes=None if stratum_sizes is None else np.asarray(stratum_sizes, dtype=np.intp),
        bounded=bounded,
    )
    seeds = np.random.SeedSequence(int(rng.integers(2**63))).spawn(reps)
    if n_jobs > 1:
        with ProcessPoolExecutor(max_workers=n_jobs) as pool:
            results = list(pool.map(_one_rep, [spec] * reps, seeds))
    else:
        results = [_one_rep(spec, s) for s in seeds]
    validation = (
        np.stack([r["validation"] for r in results]) if spec.dbcv else np.zeros((reps, 4, 4))
    )
    oracle = np.stack([r["oracle"] for r in results]) if spec.dbcv else np.zeros((reps, 0))
    return HarnessResult(
        methods=spec.methods,
        squared_error=np.stack([r["sq"] for r in results]),
        covered=np.stack([r["covered"] for r in results]),
        width=np.stack([r["width"] for r in results]),
        interval_score=np.stack([r["interval_score"] for r in results]),
        dbcv_candidates=spec.dbcv,
        validation=validation,
        candidate_oracle=oracle,
        level=level,
    )
