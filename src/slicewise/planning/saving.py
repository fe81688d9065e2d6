"""How many labels a design with unequal inclusion probabilities saved against uniform labeling,
at the worst-slice half-width it achieved (what ``sw.profile(..., inclusion=...)`` reports).

With the labels' inclusion probabilities pi_i and the out-of-fold residuals e_i of the residual
model (:mod:`slicewise.planning.residual`) fitted on them, the labeled items estimate, for
every grid point g, both the design variance of the realized design and the pool quantity
that uniform labeling's variance is made of (Horvitz-Thompson weights 1 / pi_i; kappa_ig =
k_ig / sum_T k_jg, e_g the design-weighted mean residual):

.. math::

    \\hat V_g = \\sum_{i \\in L} \\frac{\\kappa_{ig}^2 (e_i - e_g)^2}{\\pi_i}
        \\Big(\\frac{1}{\\pi_i} - 1\\Big),\\qquad
    \\hat B_g = \\sum_{i \\in L} \\frac{\\kappa_{ig}^2 (e_i - e_g)^2}{\\pi_i},

so that uniform labeling of m items would give grid point g the variance B_g (M / m - 1). The
labels uniform labeling needs for the design's worst-slice variance are the m* with
max_g B_g (M / m* - 1) = max_g V_g,

.. math::

    m^* = M \\Big/ \\Big(1 + \\frac{\\max_g \\hat V_g}{\\max_g \\hat B_g}\\Big),

and the saving is 1 - n / m*: at the worst-slice half-width the design reaches, uniform
labeling would need m* labels (the design effect of the residual model's residuals stands for
the method's, whose own residuals are not exposed). The interval is the percentile interval of
:data:`DRAWS` Poisson-weight bootstrap replicates of the labeled items. On split-judge (pilot
of 100 and three adaptive batches of 150), the 95% interval covered the saving computed from
the design's own probabilities and the true conditional variances in 8 of 8 draws
(``tests/planning/test_design_saving.py`` pins it on more). A slice labeled completely has
V_g = 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import FloatArray

if TYPE_CHECKING:
    from ..data.table import ItemTable
    from ..methods.base import PoolContext
    from ..results import ProfileResult

#: Bootstrap replicates of the saving's interval.
DRAWS = 400


@dataclass(frozen=True)
class DesignSaving:
    """The labels a design saved against uniform labeling (module notes).

    Attributes
    ----------
    labels : int
        n, the labels of the design.
    uniform : float
        m*, the labels uniform labeling needs for the same worst-slice half-width.
    saved, low, high : float
        1 - n / m* and its bootstrap interval at ``level``.
    level : float
    """

    labels: int
    uniform: float
    saved: float
    low: float
    high: float
    level: float

    def note(self) -> str:
        """The plain-words note of a profile result."""
        word = "fewer" if self.saved >= 0 else "more"
        return (
            f"Labeling design: these {self.labels} labels, drawn with unequal inclusion "
            f"probabilities, reach the worst-slice half-width reported here; uniform labeling "
            f"would need about {self.uniform:.0f} for it, so the design used "
            f"{abs(self.saved):.0%} {word} labels ({self.level:.0%} interval "
            f"{self.low:+.0%} to {self.high:+.0%} saved; estimated from the residuals of the "
            "labeled items, weighted by their inclusion probabilities)."
        )

    def to_params(self) -> dict[str, float]:
        """The numbers, for the result's ``params``."""
        return {
            "labels": float(self.labels),
            "uniform_labels": self.uniform,
            "saved": self.saved,
            "low": self.low,
            "high": self.high,
            "level": self.level,
        }


def _uniform_labels(
    weights: FloatArray | None, terms: FloatArray, pi: FloatArray, m: int
) -> FloatArray:
    """m* for every row of ``weights`` (bootstrap weights of the labeled items; None: all 1)."""
    w = np.ones((1, pi.size)) if weights is None else weights
    b = (w @ terms).max(axis=1)  # (R,)
    v = ((w * (1.0 / pi - 1.0)) @ terms).max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(m / (1.0 + v / b), dtype=np.float64)


def design_saving(
    pilot: Any,
    pi: FloatArray,
    *,
    given: Sequence[str] | None = None,
    level: float = 0.95,
    seed: int = 0,
) -> DesignSaving | None:
    """The labels saved against uniform labeling (module notes); None where the probabilities
    are equal (nothing to compare) or no grid point has a variance.

    Parameters
    ----------
    pilot
        The pool context (``items``, ``ctx``, ``labeled_rows``) of the profile.
    pi : ndarray of shape (n,)
        Inclusion probabilities of the labeled items (``items.labeled_index`` order).
    given : sequence of str, optional
        The signal columns named by the user (for the residual model).
    level : float
        Level of the interval.
    seed : int
        Seed of the bootstrap.
    """
    from .residual import residual_model, row_folds
    from .safeguard import variance_terms

    if pi.size < 2 or float(np.ptp(pi)) <= 1e-9 * float(pi.max()):
        return None
    items, ctx = pilot.items, pilot.ctx
    m = items.n_pool
    model = residual_model(pilot, 1.0, row_folds(m), given)
    kernel = ctx.kernel(1.0)
    dense = np.asarray(kernel if isinstance(kernel, np.ndarray) else kernel.toarray())
    mass = dense.sum(axis=0)
    index = items.labeled_index
    terms = variance_terms(dense[index], mass, model.resid, pi)
    if not terms.any():
        return None
    point = float(_uniform_labels(None, terms, pi, m)[0])
    weights = np.random.default_rng(seed).poisson(1.0, (DRAWS, index.size)).astype(np.float64)
    boot = _uniform_labels(weights, terms, pi, m)
    n = int(index.size)
    saved = 1.0 - n / boot[np.isfinite(boot) & (boot > 0)]
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(saved, [tail, 1.0 - tail]) if saved.size else (np.nan, np.nan)
    return DesignSaving(
        labels=n,
        uniform=point,
        saved=1.0 - n / point,
        low=float(low),
        high=float(high),
        level=level,
    )


def with_design_saving(
    result: ProfileResult,
    items: ItemTable,
    ctx: PoolContext,
    pi: FloatArray,
    signals: str | Sequence[str] | None,
) -> ProfileResult:
    """The result with the labels its design saved against uniform labeling (module notes) in
    its notes and ``params['design_saving']``; unchanged when the probabilities are equal.
    ``sw.profile`` calls it through :mod:`slicewise._hooks` (planning sits above the api)."""
    from dataclasses import replace

    from .plan import _Pilot

    given = [signals] if isinstance(signals, str) else None if signals is None else list(signals)
    pilot = _Pilot(items=items, ctx=ctx, labeled_rows=items.input_rows(items.labeled_index))
    saving = design_saving(pilot, pi, given=given, level=result.level)
    if saving is None:
        return result
    return replace(
        result,
        notes=(*result.notes, saving.note()),
        params={**result.params, "design_saving": saving.to_params()},
    )
