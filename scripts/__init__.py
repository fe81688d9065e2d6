"""Maintenance and study scripts (run from the repository root, e.g. ``python -m scripts.study_real``)."""
