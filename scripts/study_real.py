"""Matched-split relative-efficiency studies on the real datasets: the entry point.

Run from the repository root::

    python -m scripts.study_real --dataset psn_irt --reps 50 --jobs 2 --out docs/results/psn_irt/

The runner and its report live in :mod:`research.study_real` (tested there); see its docstring.
"""

from __future__ import annotations

import sys

from research.study_real import main

if __name__ == "__main__":
    sys.exit(main())
