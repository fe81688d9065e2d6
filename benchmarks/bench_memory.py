"""What holds memory at the peak of one sw.profile call (M = 1,000,000, the frame of bench_core).

For each method: the peak traced allocation (tracemalloc; numpy buffers are traced) beyond the
input frame, in bytes per pool item, and the allocations alive near that peak, grouped by the
line of slicewise that made them (the innermost slicewise frame of each traceback). The
snapshot is taken on returning from a function call whenever the traced memory has grown by
more than 2 MB since the last one, so it may miss the peak by a temporary inside a C call; the
peak itself is exact.

Run: python -m benchmarks.bench_memory [--methods naive lace auto] [--top 8]
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from collections import defaultdict
from types import FrameType
from typing import Any

import slicewise as sw

from .bench_core import KWARGS, M, make_frame


def holders(snapshot: tracemalloc.Snapshot, top: int) -> list[tuple[str, float]]:
    """(innermost slicewise line, bytes per item) of the largest live allocations."""
    sizes: dict[str, int] = defaultdict(int)
    for stat in snapshot.statistics("traceback"):
        where = "outside slicewise"
        for frame in reversed(stat.traceback):
            if "slicewise" in frame.filename:
                name = frame.filename.split("slicewise", 1)[1].lstrip("/")
                where = f"{name}:{frame.lineno}"
                break
        sizes[where] += stat.size
    ranked = sorted(sizes.items(), key=lambda kv: -kv[1])[:top]
    return [(where, size / M) for where, size in ranked]


def peak_with_holders(func: Any, top: int) -> tuple[float, float, list[tuple[str, float]]]:
    """Peak traced bytes per item of ``func()``, the traced bytes per item at the last snapshot
    and the holders at that snapshot."""
    state: dict[str, Any] = {"current": 0, "snapshot": None}

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event in ("return", "c_return"):
            current, _ = tracemalloc.get_traced_memory()
            if current > state["current"] + 2_000_000:
                state["current"] = current
                state["snapshot"] = tracemalloc.take_snapshot()

    tracemalloc.start(25)
    tracemalloc.reset_peak()
    sys.setprofile(hook)
    try:
        func()
    finally:
        sys.setprofile(None)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    found = [] if state["snapshot"] is None else holders(state["snapshot"], top)
    return peak / M, state["current"] / M, found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_memory", description=__doc__)
    parser.add_argument("--methods", nargs="+", default=["naive", "lace", "auto"])
    parser.add_argument("--top", type=int, default=8, help="holders listed per method")
    args = parser.parse_args(argv)
    frame = make_frame()
    frame_bytes = frame.memory_usage(deep=True).sum()
    print(f"M={M:,}; input frame {frame_bytes / M:.0f} bytes per item (not counted below)\n")
    for method in args.methods:
        sw.profile(frame, method=method, **KWARGS)  # warm-up: imports, first-call caches
        peak, at, found = peak_with_holders(
            lambda m=method: sw.profile(frame, method=m, **KWARGS), args.top
        )
        print(f"{method}: peak {peak:.0f} bytes per item; near the peak ({at:.0f}):")
        for where, per_item in found:
            print(f"    {per_item:6.1f}  {where}")
        print()


if __name__ == "__main__":
    main()
