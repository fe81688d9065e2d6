"""Timing and memory helpers shared by the benchmarks."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from typing import Any


def timed(func: Callable[[], Any], *, repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls (seconds) and the last result."""
    best = float("inf")
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_memory(func: Callable[[], Any]) -> float:
    """Peak traced allocation (MB) during one call; numpy buffers are traced."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6
