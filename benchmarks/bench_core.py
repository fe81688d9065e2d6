"""sw.profile at M = 1,000,000 pool items, n = 10,000 labeled, K = 6, 20 grid points, continuous Z.

Reports wall time and peak traced memory of ``sw.profile`` (validation included) and the ratio
against a plain per-grid-point loop that computes the same LACE estimates and standard errors,
and the default ``method='auto'`` (cross-validated selection, learned candidates) at the same size.

Run: python -m benchmarks.bench_core
"""

from __future__ import annotations

import resource
import sys

import numpy as np
import pandas as pd

import slicewise as sw

from ._util import peak_memory, timed

M, N, K, G = 1_000_000, 10_000, 6, 20


def make_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=M)
    y = (rng.random(M) < 1 / (1 + np.exp(-z))).astype(float)
    signals = y[:, None] * rng.uniform(0.5, 2, K) + rng.normal(size=(M, K))
    frame = pd.DataFrame(signals, columns=[f"s{k}" for k in range(K)])
    frame["z"] = z
    y[rng.permutation(M)[N:]] = np.nan
    frame["y"] = y
    return frame


def loop_profile(frame: pd.DataFrame, ridge: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """The obvious implementation: one pass over the pool per grid point."""
    z = frame["z"].to_numpy()
    s = frame[[f"s{k}" for k in range(K)]].to_numpy()
    s = (s - s.mean(0)) / s.std(0)
    y = frame["y"].to_numpy()
    lab = ~np.isnan(y)
    h = 1.5 * 1.06 * z.std(ddof=1) * M ** (-0.2)
    grid = np.linspace(*np.percentile(z, [5, 95]), G)
    est, se = np.empty(G), np.empty(G)
    for g, point in enumerate(grid):
        k = np.exp(-0.5 * ((z - point) / h) ** 2)
        w_t = k / k.sum()
        mean_t = w_t @ s
        centred = s - mean_t
        sigma_ss = (centred * w_t[:, None]).T @ centred
        w_l = k[lab] / k[lab].sum()
        sl, yl = s[lab], y[lab]
        mean_l = w_l @ sl
        sigma_sy = (sl - mean_l).T @ (w_l * (yl - w_l @ yl))
        beta = np.linalg.solve(sigma_ss + ridge * np.eye(K), sigma_sy)
        est[g] = w_l @ yl - beta @ (mean_l - mean_t)
        e = yl - sl @ beta
        se[g] = np.sqrt((w_l**2 * (e - w_l @ e) ** 2).sum())
    return est, se


def main() -> None:
    frame = make_frame()
    kwargs = {"z": "z", "signals": [f"s{k}" for k in range(K)], "label": "y", "kind": "continuous"}
    t_fast, res = timed(lambda: sw.profile(frame, method="lace", **kwargs))
    t_loop, (est, _) = timed(lambda: loop_profile(frame), repeat=1)
    mem = peak_memory(lambda: sw.profile(frame, method="lace", **kwargs))
    t_auto, _ = timed(lambda: sw.profile(frame, **kwargs), repeat=1)
    mem_auto = peak_memory(lambda: sw.profile(frame, **kwargs))
    frame_mb = frame.memory_usage(deep=True).sum() / 1e6
    np.testing.assert_allclose(res.estimate, est, rtol=1e-8)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"M={M:,} n={N:,} K={K} G={G} (continuous Z), python {sys.version.split()[0]}")
    print("| path | wall time (s) | ratio |")
    print("|---|---|---|")
    print(f"| sw.profile (lace, validation included) | {t_fast:.2f} | 1.0 |")
    print(f"| per-grid-point loop (same estimates) | {t_loop:.2f} | {t_loop / t_fast:.1f} |")
    print(f"| sw.profile (default method='auto') | {t_auto:.2f} | {t_auto / t_fast:.1f} |")
    print(
        f"\npeak traced memory inside sw.profile: lace {mem:.0f} MB, auto {mem_auto:.0f} MB"
        f" (input frame itself: {frame_mb:.0f} MB)"
    )
    print(f"peak resident set of the whole benchmark process: {rss:.0f} MB")


if __name__ == "__main__":
    main()
