"""One simulated pool with gold labels in a separate table, shared by the pool-source tests."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np
import pandas as pd

SIGNALS = ["judge", "length", "agree"]


@dataclass(frozen=True)
class PoolData:
    pool: pd.DataFrame  # id, z, segment, level, judge, length, agree, part, shop
    gold: pd.DataFrame  # id, human
    merged: pd.DataFrame  # pool with the label column 'human' (NaN where not graded)


def make_pool(m: int = 4000, n: int = 400, seed: int = 0) -> PoolData:
    """A pool with a continuous z, a 7-level segment, an ordinal level, a 35-level shop (more
    levels than the learner's level interactions take) and three signals."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    segment = rng.choice([f"seg{i:02d}" for i in range(7)], size=m)
    level = rng.integers(1, 6, size=m)
    y = (rng.random(m) < 1.0 / (1.0 + np.exp(-z - 0.2 * level))).astype(float)
    pool = pd.DataFrame(
        {
            "id": np.arange(10_000, 10_000 + m),
            "z": z,
            "segment": segment,
            "level": level,
            "judge": y + rng.normal(0, 0.7, m),
            "length": (rng.normal(size=m) + 0.3 * z).astype(np.float32),
            "agree": rng.normal(size=m) + 0.5 * y,
            "part": rng.integers(0, 3, size=m),
            "shop": [f"shop{(13 * i) % 35:02d}" for i in range(m)],  # 35 levels
        }
    )
    graded = rng.choice(m, size=n, replace=False)
    gold = pd.DataFrame({"id": pool["id"].to_numpy()[graded], "human": y[graded]})
    merged = pool.copy()
    merged["human"] = np.nan
    merged.loc[graded, "human"] = y[graded]
    return PoolData(pool=pool, gold=gold, merged=merged)


def assert_same_profile(out: object, ref: object, atol: float = 1e-9) -> None:
    """Every numeric per-grid-point field of two ProfileResults agrees to ``atol``."""
    for name in (
        "estimate",
        "se",
        "naive_estimate",
        "naive_se",
        "n_labeled_eff",
        "n_pool_eff",
        "labeled_mass",
        "r2",
        "gain",
    ):
        a = np.asarray(getattr(out, name), dtype=np.float64)
        b = np.asarray(getattr(ref, name), dtype=np.float64)
        scale = np.maximum(1.0, np.abs(b)) if name == "n_pool_eff" else 1.0
        np.testing.assert_allclose(a / scale, b / scale, rtol=0, atol=atol, err_msg=name)
    assert list(np.asarray(out.z).ravel()) == list(np.asarray(ref.z).ravel())  # type: ignore[attr-defined]
    assert out.n_pool == ref.n_pool  # type: ignore[attr-defined]
    assert out.n_labeled == ref.n_labeled  # type: ignore[attr-defined]


def java_problem() -> str | None:
    """Why the Spark tests cannot run here (no Java 17+), or None."""
    java = shutil.which("java", path=os.path.join(os.environ.get("JAVA_HOME", ""), "bin"))
    java = java or shutil.which("java")
    if java is None:
        return "no `java` on PATH or in JAVA_HOME/bin"
    try:
        version = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30
        ).stderr
    except (OSError, subprocess.SubprocessError) as error:
        return f"`{java} -version` failed: {error}"
    if not any(f'version "{v}' in version for v in ("17", "18", "19", "2")):
        return f"Java 17 or later is needed; `java -version` says: {version.strip()[:200]}"
    return None
