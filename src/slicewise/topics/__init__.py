"""Semantic profiles: slices of a pool found from its text alone (:func:`topics`), label-free,
so a profile over them keeps valid intervals; scikit-learn and the embedding extra are imported
by the functions that need them."""

from __future__ import annotations

from .api import topics

__all__ = ["topics"]
