"""The scan of an out-of-core pool source for ``sw.profile``: the validated column roles, the
statistics pass, the profile's locality (grid from exact percentiles, bandwidth, levels) and the
pool context the methods read (:class:`PoolScan`; :func:`.profile.profile_source` drives it)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._typing import KINDS, FloatArray, Kind, ObjectArray
from .._validation import check_choice, format_examples, signal_index
from ..data.column_stats import constant_as_zero
from ..data.ordering import lexsort_by_ties
from ..data.table import ORDINAL_MAX_LEVELS, ItemTable, check_roles, role_columns
from ..exceptions import ConstantSignalWarning, FullyLabeledWarning
from ..io.join import _gold_labels
from .context import (
    BORROWING_METHODS,
    StreamedContext,
    needed_scales,
    standardisation,
    streamed_locality,
)
from .gold import Gold, match_gold, read_gold
from .kernel_passes import MomentsPass, ProfileColumns, ProfileMomentsPass
from .percentiles import exact_percentiles
from .scan import INFER_LEVELS, MAX_LEVELS, Rider, Stats, StatsPass

FUNC = "profile"


class PoolScan:
    """The validated column roles of a pool source and its statistics pass."""

    def __init__(
        self,
        source: Any,
        *,
        z: list[str],
        signals: list[str],
        label: str,
        kind: Kind,
        numeric: tuple[bool, ...],
        stats: Stats,
        gold: Gold | None,
    ) -> None:
        self.source = source
        self.z = z
        self.signals = signals
        self.label = label
        self.kind = kind
        self.numeric = numeric
        self.stats = stats
        self.gold = gold
        self.levels = self._levels()
        self.lab_z, self.lab_s, self.y = self._labeled()
        n, mean, m2 = stats.signal_moments
        self.signal_mean = mean if signals else np.zeros(0)
        self.signal_sd = constant_as_zero(mean, np.sqrt(m2 / n)) if signals else np.zeros(0)

    @classmethod
    def start(
        cls,
        source: Any,
        *,
        z: str | Sequence[str],
        signals: str | Sequence[str] | None,
        label: str,
        kind: Kind | None,
        gold: pd.DataFrame | str | os.PathLike[str] | None,
        on: str | Sequence[str] | None,
    ) -> PoolScan:
        """Check the columns against the source's schema, then run the statistics pass."""
        z_cols, s_cols = role_columns(z, signals, label, FUNC)
        check_roles(s_cols, label, FUNC)
        gold_info = None if gold is None else read_gold(gold, on=on, label=label)
        schema = source.arrow_schema()
        names = list(schema.names)
        roles = [("z", z_cols), ("signals", s_cols)]
        roles.append(("on", list(gold_info.on)) if gold_info else ("label", [label]))
        for name, cols in roles:
            missing = [c for c in cols if c not in names]
            if missing:
                raise ValueError(
                    f"The '{name}' parameter of {FUNC} names column(s) "
                    f"{format_examples(missing)} that are not in the pool {source.description}. "
                    f"Available columns: {format_examples(names, 30)}."
                )
        from .scan import is_numeric

        for col in s_cols:
            kind_of = schema.field(col).type
            if not (is_numeric(kind_of) or str(kind_of) == "bool"):
                raise ValueError(f"Signal column '{col}' has dtype {kind_of}; it must be numeric.")
        numeric = tuple(is_numeric(schema.field(c).type) for c in z_cols)
        for col in z_cols:
            field_type = schema.field(col).type
            if getattr(field_type, "ordered", False):
                raise ValueError(
                    f"`z` column '{col}' is an ordered categorical, which an out-of-core pool "
                    "does not support yet; store integer levels (an ordinal profile) instead."
                )
        if kind is not None:
            kind = check_choice(kind, KINDS, name="kind", func=FUNC)
            if kind != "categorical" and not all(numeric):
                col = z_cols[numeric.index(False)]
                raise ValueError(
                    f"`z` column '{col}' has dtype {schema.field(col).type}; a {kind} profile "
                    "must be numeric."
                )
            if kind != "continuous" and len(z_cols) > 1:
                raise ValueError(
                    f"The 'kind' parameter of {FUNC} is {kind!r}, but {len(z_cols)} `z` columns "
                    f"were given ({z_cols}); only continuous profiles may have several dimensions."
                )
        elif len(z_cols) > 1 and not all(numeric):
            raise ValueError(
                f"`z` columns {z_cols} mix non-numeric columns with others; a profile over "
                "several columns must be continuous (numeric). Pass kind= explicitly."
            )
        multi = len(z_cols) > 1
        cap = 0 if kind == "continuous" or multi else INFER_LEVELS if kind is None else MAX_LEVELS
        stats = source.run(
            StatsPass(
                z=tuple(z_cols),
                numeric_z=numeric,
                level_cap=cap,
                signals=tuple(s_cols),
                on=gold_info.on if gold_info else (),
                gold_keys=gold_info.keys if gold_info else None,
                label=None if gold_info else label,
            )
        )
        _check_stats(stats, z_cols, s_cols, numeric)
        if kind is None:
            levels = stats.z_levels[0]
            if multi:
                kind = "continuous"
            elif not numeric[0]:
                kind = "categorical"
            elif levels is not None and len(levels) <= ORDINAL_MAX_LEVELS and stats.z_integer[0]:
                kind = "ordinal"
            else:
                kind = "continuous"
        return cls(
            source,
            z=z_cols,
            signals=s_cols,
            label=label,
            kind=kind,
            numeric=numeric,
            stats=stats,
            gold=gold_info,
        )

    def _levels(self) -> ObjectArray | None:
        if self.kind == "continuous":
            return None
        values = self.stats.z_levels[0]
        if values is None:
            raise ValueError(
                f"`z` column '{self.z[0]}' has more than {MAX_LEVELS} distinct values, too many "
                f"for a {self.kind} profile; use kind='continuous' or coarser levels."
            )
        if self.kind == "ordinal":
            return np.asarray(sorted(float(v) for v in values), dtype=object)
        _, uniques = pd.factorize(pd.Series(list(values)), sort=True)
        return np.asarray(uniques, dtype=object)

    def _labeled(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        rows = self.stats.labeled
        if self.gold is not None:
            rows, y = match_gold(self.gold, rows)
            if y.size == 0:
                raise ValueError(
                    f"`gold` has no graded rows: all {len(self.gold.keys)} values of its label "
                    f"column '{self.label}' are missing; at least one gold label is needed."
                )
        else:
            if len(rows) == 0:
                raise ValueError(
                    f"Label column '{self.label}' has no labeled rows (all {self.stats.rows} values "
                    "are missing); at least one gold label is needed."
                )
            y = _gold_labels(rows[self.label], where="The pool").to_numpy(dtype=np.float64)
        if self.kind == "categorical":
            assert self.levels is not None
            codes = pd.Categorical(rows[self.z[0]], categories=list(self.levels)).codes
            lab_z = np.asarray(codes, dtype=np.float64).reshape(-1, 1)
        else:
            lab_z = rows[self.z].to_numpy(dtype=np.float64)
        lab_s = rows[self.signals].to_numpy(dtype=np.float64).reshape(len(rows), -1)
        # the canonical order of the in-memory table (data.ordering.canonical_order without ids),
        # so that folds drawn on the labeled set do not depend on the order of the scan
        order = lexsort_by_ties([*lab_z.T, *lab_s.T, y])
        return lab_z[order], lab_s[order], y[order]

    def context(
        self,
        *,
        grid: Any,
        bandwidth: Any,
        primary: str | None,
        method: str,
        options: Any,
    ) -> StreamedContext:
        """Percentiles (continuous), locality, the kernel-sums pass, and the context."""
        if method not in ("naive", "auto") and not self.signals:  # auto alone is naive
            raise ValueError(
                f"Method {method!r} needs at least one cheap signal; pass signals=[...] (got none)."
            )
        primary_index = signal_index(primary, self.signals, func=FUNC)
        if self.kind == "categorical" and options.nuisance_scale not in (1.0, math.inf):
            raise ValueError(
                "The 'nuisance_scale' parameter must be 1 (within-category coefficients) or inf "
                "(one pooled coefficient) for a categorical profile. Got "
                f"{options.nuisance_scale!r} instead."
            )
        n_rows = self.stats.rows
        n, _, m2 = self.stats.z_moments
        percentiles = None
        squares = None
        if self.kind == "continuous":
            z_sd = np.sqrt(m2 / (n - 1)) if n > 1 else np.zeros(len(self.z))
            if grid is None or isinstance(grid, int | np.integer):
                # the moments of the squared standardised Z that a learned control variate's
                # design needs (StreamedContext.design_basis), in the percentiles' first pass
                center, scale_z = standardisation(self.stats.z_moments)
                squared = ProfileMomentsPass(ProfileColumns(tuple(self.z)), center, scale_z)
                riding = squared if method in BORROWING_METHODS else None
                by_sql = getattr(self.source, "percentiles", None)
                if by_sql is not None and len(self.z) == 1:  # SQL aggregates (DuckDB)
                    found, squares = by_sql(
                        self.z[0],
                        [5, 95],
                        n=n_rows,
                        lo=float(self.stats.z_min[0]),
                        hi=float(self.stats.z_max[0]),
                        squares=riding,
                    )
                    percentiles = found.reshape(-1, 1)
                else:
                    run = None if riding is None else Rider(self.source.run, riding)
                    percentiles = np.column_stack(
                        [
                            exact_percentiles(
                                self.source.run if run is None else run,
                                col,
                                [5, 95],
                                n=n_rows,
                                lo=float(self.stats.z_min[d]),
                                hi=float(self.stats.z_max[d]),
                            )
                            for d, col in enumerate(self.z)
                        ]
                    )
                    squares = None if run is None else run.state
        else:
            z_sd = np.zeros(0)
        locality = streamed_locality(
            self.kind,
            levels=self.levels,
            n=n_rows,
            z_sd=z_sd,
            percentiles=percentiles,
            grid=grid,
            bandwidth=bandwidth,
        )
        scale = np.where(self.signal_sd > 0, self.signal_sd, 1.0)
        reader = MomentsPass(
            z=tuple(self.z),
            levels=tuple(self.levels)
            if self.kind == "categorical" and self.levels is not None
            else None,
            signals=tuple(self.signals),
            mean=self.signal_mean,
            scale=scale,
            locality=locality,
            scales=needed_scales(
                method, options.nuisance_scale, ordered=self.kind != "categorical"
            ),
        )
        # a continuous profile's kernel sums wait for the first method that reads them: the
        # learned control variates then sum them in their own pass (StreamedContext)
        sums = None if self.kind == "continuous" else self.source.run(reader)
        table = ItemTable(
            z=self.lab_z,
            kind=self.kind,
            z_names=tuple(self.z),
            levels=self.levels if self.kind == "categorical" else None,
            signals=self.lab_s,
            signal_names=tuple(self.signals),
            label=self.y,
            label_name=self.label,
        )
        values = None
        if self.kind != "continuous":
            assert self.levels is not None
            values = (
                np.arange(self.levels.size, dtype=np.float64)
                if self.kind == "categorical"
                else np.asarray(self.levels, dtype=np.float64)
            )
        counts = None
        if self.kind == "categorical" and values is not None and sums is not None:
            grid_codes = locality.grid[:, 0].astype(np.intp)
            if np.array_equal(np.sort(grid_codes), np.arange(values.size)):
                counts = np.zeros(values.size)
                counts[grid_codes] = sums[1.0].mass
        disjoint = values is not None and _disjoint(locality, values)
        smoothed = method == "auto" and options.smooth != "none" and bool(self.signals)
        ctx = StreamedContext(
            table=table,
            locality=locality,
            features=(self.lab_s - self.signal_mean) / scale,
            signal_mean=self.signal_mean,
            signal_scale=scale,
            primary=primary_index,
            pool_size=n_rows,
            sums=sums,
            run=self.source.run,
            reader=reader,
            level_values=values,
            level_counts=counts,
            synthetic_c=float(options.C) if smoothed and disjoint else None,
            profile_moments=self.stats.z_moments if self.kind == "continuous" else None,
            square_moments=squares,
        )
        if values is not None:  # every pool item's Z is one of the levels
            ctx.cached(("disjoint",), lambda: disjoint)
        return ctx

    def notes(self, method: str) -> list[str]:
        """Warn about constant signals and a fully labeled pool, as the in-memory path does."""
        notes: list[str] = []
        if method == "naive":
            return notes
        constant = [n for n, s in zip(self.signals, self.signal_sd, strict=True) if s == 0]
        if constant:
            message = (
                f"Signal column(s) {constant} are constant over the pool and carry no information."
            )
            warnings.warn(message, ConstantSignalWarning, stacklevel=4)
            notes.append(message)
        if self.y.size == self.stats.rows:
            message = (
                f"Every one of the {self.stats.rows} items is labeled, so the cheap signals cannot "
                f"add information: {method} reduces to the naive local mean there."
            )
            warnings.warn(message, FullyLabeledWarning, stacklevel=4)
            notes.append(message)
        return notes


def _disjoint(locality: Any, values: FloatArray) -> bool:
    """Whether every level has weight in at most one grid point (the grid points are disjoint
    domains; :func:`slicewise.methods.smoothed.disjoint_domains` on the whole pool)."""
    kernel = locality.kernel(values.reshape(-1, 1))
    if isinstance(kernel, np.ndarray):
        return bool(np.all((kernel > 0).sum(axis=1) <= 1))
    return bool(np.all(np.diff(kernel.indptr) <= 1))


def _check_stats(stats: Stats, z: list[str], signals: list[str], numeric: tuple[bool, ...]) -> None:
    for col, missing in zip(z, stats.z_missing, strict=True):
        if missing:
            raise ValueError(
                f"`z` column '{col}' has {missing} missing values; profile covariates must be "
                "observed on every item."
            )
    numeric_cols = [c for c, flag in zip(z, numeric, strict=True) if flag]
    for col, bad in zip(numeric_cols, stats.z_nonfinite, strict=True):
        if bad:
            raise ValueError(
                f"`z` column '{col}' has {bad} non-finite values; profile covariates must be "
                "finite numbers."
            )
    for col, bad in zip(signals, stats.signal_bad, strict=True):
        if bad:
            raise ValueError(
                f"Signal column '{col}' has {bad} missing or non-finite values; cheap signals "
                "must be observed (finite) on every item."
            )
