"""Features of a higher layer that a lower one calls, installed by the package's ``__init__``.

``sw.profile`` (in :mod:`slicewise.api`) reports the labels that a design with unequal inclusion
probabilities saved against uniform labeling; the computation belongs to planning
(:func:`slicewise.planning.saving.with_design_saving`), which sits above the api layer because
``sw.next_items`` runs ``sw.profile`` on the labels so far (docs/architecture.md). The package's
``__init__`` (the top layer) installs it here, imported on first use, so that imports point down.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_DESIGN_SAVING: list[Callable[..., Any]] = []


def set_design_saving(hook: Callable[..., Any]) -> None:
    """Install the function that adds a design's saving to a profile (module notes)."""
    _DESIGN_SAVING[:] = [hook]


def design_saving(result: Any, *args: Any) -> Any:
    """``result`` with its design's saving, or ``result`` unchanged when nothing is installed
    (a lower layer used without the package)."""
    return _DESIGN_SAVING[0](result, *args) if _DESIGN_SAVING else result
