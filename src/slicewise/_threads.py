"""Thread limits for the passes over the pool."""

from __future__ import annotations

from functools import cache
from typing import Any

from threadpoolctl import ThreadpoolController


@cache
def _controller() -> ThreadpoolController:
    """The process's thread pools, found once: a ``threadpool_limits`` call looks them up again
    among every loaded library (0.8 ms each, a few milliseconds per profile). scipy's own BLAS is
    loaded first, so that the controller limits it too."""
    import scipy.linalg  # noqa: F401

    return ThreadpoolController()


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread, for the passes over the pool.

    Each block of a pass multiplies a (block x G) kernel by a few dozen feature columns: a
    product too thin for threads to pay, and on a machine whose cores are busy with other work
    the threads of OpenBLAS wait for each other. One pass over 10^6 items (G = 20, 27 columns)
    took 1.3-15 s with two threads on two shared cores and 0.3-0.7 s with one
    (benchmarks/bench_core.py).
    """
    return _controller().limit(limits=1, user_api="blas")
