"""The deployment mix Q of a deployment-weighted score: parsed from the command line
(:func:`read_deploy`), turned into cell weights q_g for a discrete profile or into density ratios
r_Q(Z_i) = dQ_Z / dP_Z for a continuous one (LACE paper, Section 3.4; see
:mod:`slicewise.models.deploy` for the estimator).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._typing import FloatArray, IntArray, ObjectArray
from ..data.files import read_table
from ..estimators.density_ratio import kde_density_ratio
from ..methods.base import PoolContext

FUNC = "deployment_score"

DeploySpec = (
    Mapping[Any, float] | pd.Series | Callable[[FloatArray], Any] | Sequence[Any] | FloatArray
)


def read_deploy(spec: str | os.PathLike[str]) -> dict[str, float] | FloatArray | ObjectArray:
    """Parse a deployment specification from the command line.

    Parameters
    ----------
    spec : str or path
        A file (CSV, Parquet, JSON Lines) with a ``weight`` column and one level column (target
        frequencies), or with a single column (a sample of deployment Z values); or an inline
        ``LEVEL=WEIGHT,LEVEL=WEIGHT`` list.

    Returns
    -------
    dict or ndarray
        A mapping level -> weight (levels as strings; :func:`deployment_score` matches them to
        numeric levels too) or a sample of Z values, ready for ``deploy=``.
    """
    path = Path(spec)
    if path.suffix and path.exists():
        frame = read_table(path)
        if "weight" in frame.columns:
            others = [c for c in frame.columns if c != "weight"]
            if len(others) != 1:
                raise ValueError(
                    f"Deployment file {str(path)!r} has a 'weight' column and {len(others)} other "
                    "columns; it needs exactly one level column beside it."
                )
            return {
                str(k): float(v) for k, v in zip(frame[others[0]], frame["weight"], strict=True)
            }
        if frame.shape[1] == 1:
            column = frame.iloc[:, 0]
            if pd.api.types.is_numeric_dtype(column):
                return np.asarray(column, dtype=np.float64)
            return np.asarray(column.astype(str), dtype=object)
        raise ValueError(
            f"Deployment file {str(path)!r} must have a 'weight' column plus one level column, or "
            f"a single column of deployment Z values. Got columns {list(frame.columns)}."
        )
    text = str(spec)
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = float("nan")
        if not sep or not key.strip() or not np.isfinite(weight):
            raise ValueError(
                f"Cannot read the deployment specification {text!r}: expected an existing file or "
                f"LEVEL=WEIGHT pairs separated by commas; the part {part!r} is not one."
            )
        out[key.strip()] = weight
    if not out:
        raise ValueError(f"The deployment specification {text!r} is empty.")
    return out


def _pool_levels(ctx: PoolContext) -> tuple[list[Any], IntArray]:
    """Every level present in the pool (display values) and the grid's positions among them."""
    table = ctx.table
    if table.levels is not None:
        levels = list(table.levels)
        codes = ctx.locality.grid[:, 0].astype(np.intp)
        return levels, codes
    values = np.unique(table.z[:, 0])
    levels = [float(v) for v in values]
    positions = np.searchsorted(values, ctx.locality.grid[:, 0])
    return levels, np.asarray(positions, dtype=np.intp)


def _match_level(key: Any, levels: list[Any]) -> int | None:
    for k, level in enumerate(levels):
        if key == level and type(key) is not bool:
            return k
    try:
        number = float(key)
    except (TypeError, ValueError):
        number = None
    for k, level in enumerate(levels):
        numeric = isinstance(level, int | float | np.number)
        if number is not None and numeric and float(level) == number:
            return k
        if str(level) == str(key):
            return k
    return None


def discrete_weights(ctx: PoolContext, deploy: Any) -> tuple[FloatArray, list[str]]:
    """Deployment weights q over the grid (normalised), from a mapping or a sample of levels."""
    levels, grid_pos = _pool_levels(ctx)
    if isinstance(deploy, pd.Series):
        deploy = dict(deploy.items())
    if callable(deploy) and not isinstance(deploy, Mapping):
        raise ValueError(
            f"The 'deploy' parameter of {FUNC} is a function, which applies to continuous Z only; "
            f"this profile is {ctx.locality.kind}: pass a mapping level -> weight or a sample of "
            "deployment levels."
        )
    if not isinstance(deploy, Mapping):
        sample = pd.Series(np.asarray(deploy, dtype=object).reshape(-1))
        if sample.isna().any() or sample.size == 0:
            raise ValueError(
                f"The 'deploy' sample of {FUNC} must be a non-empty list of levels without missing "
                f"values; got {sample.size} values with {int(sample.isna().sum())} missing."
            )
        deploy = {k: float(v) for k, v in sample.value_counts(sort=False).items()}
    keys = list(deploy)
    values = np.array([deploy[k] for k in keys], dtype=np.float64) if keys else np.zeros(0)
    matches = [_match_level(k, levels) for k in keys]
    unknown = [k for k, m in zip(keys, matches, strict=True) if m is None]
    if unknown:
        raise ValueError(
            f"The 'deploy' parameter of {FUNC} names level(s) {unknown[:8]!r} that do not occur in "
            f"the `z` column; available levels: {levels[:30]!r}."
        )
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(
            f"The 'deploy' weights of {FUNC} must be finite numbers; {int(bad.sum())} are not "
            f"(levels {[k for k, b in zip(keys, bad, strict=True) if b][:8]!r})."
        )
    negative = values < 0
    if negative.any():
        raise ValueError(
            f"The 'deploy' weights of {FUNC} must be >= 0; {int(negative.sum())} are negative "
            f"(e.g. {[(k, float(v)) for k, v in zip(keys, values, strict=True) if v < 0][:5]!r})."
        )
    total = float(values.sum())
    if not total > 0:
        raise ValueError(
            f"The 'deploy' weights of {FUNC} must sum to a positive number. Got a sum of {total!r}."
        )
    weight_of_level = np.zeros(len(levels))
    for match, value in zip(matches, values, strict=True):
        weight_of_level[int(match or 0)] += value / total
    on_grid = np.zeros(len(levels), dtype=bool)
    on_grid[grid_pos] = True
    missing = [levels[k] for k in np.flatnonzero(~on_grid & (weight_of_level > 0))]
    if missing:
        raise ValueError(
            f"The 'deploy' parameter of {FUNC} puts weight on level(s) {missing[:8]!r} that are "
            "not on the grid; add them to `grid` (or omit `grid` to use every level)."
        )
    notes = []
    zero = [levels[k] for k in range(len(levels)) if weight_of_level[k] == 0]
    if zero:
        notes.append(f"Level(s) {zero[:8]!r} get deployment weight 0.")
    return weight_of_level[grid_pos], notes


def _ratio_bandwidth(value: Any, q: int) -> FloatArray:
    try:
        h = np.atleast_1d(np.asarray(value, dtype=np.float64)).reshape(-1)
    except (TypeError, ValueError):
        h = np.full(1, np.nan)
    h = np.repeat(h, q) if h.size == 1 else h
    if h.size != q or not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError(
            f"The 'ratio_bandwidth' parameter of {FUNC} must be one positive finite number or one "
            f"per profile dimension ({q}). Got {value!r} instead."
        )
    return h


def continuous_ratio(
    ctx: PoolContext, deploy: Any, ratio_bandwidth: Any
) -> tuple[FloatArray, list[str]]:
    z = ctx.table.z
    q = z.shape[1]
    if isinstance(deploy, Mapping | pd.Series):
        raise ValueError(
            f"The 'deploy' parameter of {FUNC} is a mapping of level weights, which applies to "
            "categorical or ordinal Z; for continuous Z pass a density-ratio function r_Q(z) or a "
            "sample of deployment Z values."
        )
    if callable(deploy):
        arg = z[:, 0].copy() if q == 1 else z.copy()
        ratio = np.asarray(deploy(arg), dtype=np.float64).reshape(-1)
        if ratio.shape != (ctx.n_pool,):
            raise ValueError(
                f"The 'deploy' density ratio of {FUNC} must return one value per pool item "
                f"({ctx.n_pool}). Got shape {np.shape(ratio)}."
            )
        source = "the supplied density ratio r_Q(z)"
    else:
        sample = np.asarray(deploy, dtype=np.float64)
        sample = sample.reshape(-1, 1) if sample.ndim == 1 and q == 1 else sample
        if sample.ndim != 2 or sample.shape[1] != q or sample.shape[0] == 0:
            raise ValueError(
                f"The 'deploy' sample of {FUNC} must have shape (N,) or (N, {q}) with N >= 1 for "
                f"a {q}-dimensional profile. Got shape {np.shape(deploy)}."
            )
        bad = ~np.isfinite(sample)
        if bad.any():
            raise ValueError(
                f"The 'deploy' sample of {FUNC} has {int(bad.sum())} missing or non-finite values."
            )
        h = (
            ctx.locality.bandwidth
            if ratio_bandwidth is None
            else _ratio_bandwidth(ratio_bandwidth, q)
        )
        ratio = kde_density_ratio(z, sample, h)
        source = (
            f"the ratio of kernel densities of {sample.shape[0]} deployment Z values and the pool "
            f"(bandwidth {np.round(h, 6).tolist()})"
        )
    bad_r = ~np.isfinite(ratio) | (ratio < 0)
    if bad_r.any():
        raise ValueError(
            f"The 'deploy' density ratio of {FUNC} must be finite and >= 0 on every pool item; "
            f"{int(bad_r.sum())} values are not."
        )
    if not ratio.sum() > 0:
        raise ValueError(
            f"The 'deploy' density ratio of {FUNC} is zero on every pool item, so the deployment "
            "distribution does not overlap the pool."
        )
    return ratio, [f"Deployment weights r_Q(Z_i) from {source}."]
