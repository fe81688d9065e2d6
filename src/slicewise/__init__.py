"""slicewise: how an AI model performs across a profile axis, from a few gold labels and many
cheap signals, with honest uncertainty.

>>> import slicewise as sw
>>> sorted(sw.methods()["method"])[:3]
['aug_plugin', 'auto', 'global_cv']
"""

from __future__ import annotations

from .api import profile
from .data.table import ItemTable, make_table
from .methods.registry import methods
from .results import ConfidenceInterval, ProfileResult
from .selection.cv import SelectionResult, select

__all__ = [
    "ConfidenceInterval",
    "ItemTable",
    "ProfileResult",
    "SelectionResult",
    "make_table",
    "methods",
    "profile",
    "select",
]

__version__ = "0.1.0"
