"""Setting B of the LACE paper's Appendix I: relative efficiency over 300 replications.

Design: 5 ordered groups of 2,000 items, K = 6 signals, n = 500/1000/1500, lambda = 0.3,
within-group weights, population target theta(g). The oracle-coefficient LACE must match the
closed-form gain 1 / (1 - (1 - pi) R^2(g)) within Monte-Carlo error, and the feasible LACE must be
well above naive and not above the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import slicewise as sw
from slicewise.studies.paper_designs import setting_b

REPS = 300


def log_re_and_se(mse_naive: np.ndarray, mse_method: np.ndarray) -> tuple[float, float]:
    """log RE = log mean(naive) - log mean(method) and its paired delta-method SE."""
    a, b = mse_naive.mean(), mse_method.mean()
    influence = mse_naive / a - mse_method / b
    return float(np.log(a / b)), float(influence.std(ddof=1) / np.sqrt(influence.size))


@pytest.mark.slow
def test_setting_b_relative_efficiency() -> None:
    design = setting_b()
    rng = np.random.default_rng(31)
    budgets = (500, 1000, 1500)
    methods = ("naive", "lace", "lace_oracle")
    mse = {(m, n): [] for m in methods for n in budgets}
    for _ in range(REPS):
        pool = design.draw(rng)
        order = rng.permutation(len(pool))
        for n in budgets:
            data = pool.copy()
            y = data["y"].to_numpy().copy()
            y[order[n:]] = np.nan
            data["y"] = y
            for method in methods:
                res = sw.profile(
                    data,
                    z="z",
                    signals=design.signal_names,
                    label="y",
                    kind="ordinal",
                    method=method,
                    coef=design.oracle_coef(),
                    target="population",
                )
                mse[method, n].append(np.mean((res.estimate - design.theta) ** 2))
    var_y = design.theta * (1 - design.theta)
    for n in budgets:
        naive = np.array(mse["naive", n])
        frac = n / design.z.size
        predicted = var_y.sum() / (var_y * (1 - (1 - frac) * design.r2())).sum()
        log_oracle, se_oracle = log_re_and_se(naive, np.array(mse["lace_oracle", n]))
        log_lace, se_lace = log_re_and_se(naive, np.array(mse["lace", n]))
        print(
            f"n={n}: RE lace {np.exp(log_lace):.2f}, oracle {np.exp(log_oracle):.2f}, "
            f"closed-form oracle gain {predicted:.2f}"
        )
        assert abs(log_oracle - np.log(predicted)) < 3 * se_oracle
        assert np.exp(log_lace) > 2.0
        assert log_lace < log_oracle + 2 * se_lace
