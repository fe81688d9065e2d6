"""Research code of slicewise: paper replications, real-data cells, study runners, result stamps.

Not part of the installed package (the wheel ships ``src/slicewise`` only) and not imported by it.
The entry points that regenerate ``docs/results`` are in ``scripts/`` and ``benchmarks/`` and run
through ``make results``; the test suite imports this package (pytest puts the repository root on
``sys.path``), never ``scripts/``.
"""
