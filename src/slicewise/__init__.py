"""slicewise: how an AI model performs across a profile axis, from a few gold labels and many
cheap signals, with honest uncertainty.

>>> import slicewise as sw
>>> sorted(sw.methods("profile")["method"])[:3]
['aug_plugin', 'auto', 'global_cv']

The public names are loaded on first use (PEP 562), so ``import slicewise`` and the command line
start without importing scikit-learn, scipy.stats or matplotlib.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from . import _display, _hooks

if TYPE_CHECKING:
    from .api import profile
    from .data.designs import DesignSample
    from .data.table import ItemTable, make_table
    from .datasets import load_demo
    from .domains import domains, validate
    from .domains.results import DomainResult, ValidationResult
    from .domains.sample import sample
    from .exceptions import InvalidParameterError, LabelSelectionWarning
    from .methods.registry import methods
    from .models.cascade import CascadePlan, cascade, cascade_break_even
    from .models.deploy import DeploymentScore, deployment_score
    from .models.deploy_mix import read_deploy
    from .models.gaps import UnpairedLabelsWarning, gap
    from .models.profiles import ModelProfiles, profile_models
    from .models.ranking import ModelRanking, rank_models
    from .planning.adaptive import next_items
    from .planning.plan import plan
    from .planning.result import PlanResult
    from .results import ConfidenceInterval, ProfileResult
    from .selection.cv import SelectionResult, select
    from .studies.engine import study
    from .studies.summary import StudyResult
    from .topics import topics

#: Public name -> the module that defines it (relative to this package).
_EXPORTS: dict[str, str] = {
    "CascadePlan": ".models.cascade",
    "ConfidenceInterval": ".results",
    "DeploymentScore": ".models.deploy",
    "DesignSample": ".data.designs",
    "DomainResult": ".domains.results",
    "InvalidParameterError": ".exceptions",
    "ItemTable": ".data.table",
    "LabelSelectionWarning": ".exceptions",
    "ModelProfiles": ".models.profiles",
    "ModelRanking": ".models.ranking",
    "PlanResult": ".planning.result",
    "ProfileResult": ".results",
    "SelectionResult": ".selection.cv",
    "StudyResult": ".studies.summary",
    "UnpairedLabelsWarning": ".models.gaps",
    "ValidationResult": ".domains.results",
    "cascade": ".models.cascade",
    "cascade_break_even": ".models.cascade",
    "deployment_score": ".models.deploy",
    "domains": ".domains",
    "gap": ".models.gaps",
    "load_demo": ".datasets",
    "make_table": ".data.table",
    "methods": ".methods.registry",
    "next_items": ".planning.adaptive",
    "plan": ".planning.plan",
    "profile": ".api",
    "profile_models": ".models.profiles",
    "rank_models": ".models.ranking",
    "read_deploy": ".models.deploy_mix",
    "sample": ".domains.sample",
    "select": ".selection.cv",
    "study": ".studies.engine",
    "topics": ".topics",
    "validate": ".domains",
}

__all__ = [
    "CascadePlan",
    "ConfidenceInterval",
    "DeploymentScore",
    "DesignSample",
    "DomainResult",
    "InvalidParameterError",
    "ItemTable",
    "LabelSelectionWarning",
    "ModelProfiles",
    "ModelRanking",
    "PlanResult",
    "ProfileResult",
    "SelectionResult",
    "StudyResult",
    "UnpairedLabelsWarning",
    "ValidationResult",
    "cascade",
    "cascade_break_even",
    "deployment_score",
    "domains",
    "gap",
    "load_demo",
    "make_table",
    "methods",
    "next_items",
    "plan",
    "profile",
    "profile_models",
    "rank_models",
    "read_deploy",
    "sample",
    "select",
    "study",
    "topics",
    "validate",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'slicewise' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """This package; a loaded submodule that shares its name with a public function
    (``cascade``, ``domains``, ``methods``) is not bound over the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
            and _EXPORTS.get(name, "").lstrip(".").split(".")[0] == name
        ):
            return  # still in sys.modules; the attribute resolves to the function
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _load_renderers() -> object:
    """Register the reports' renderers of every result type (:mod:`slicewise._display`)."""
    return importlib.import_module(".reports.register", __name__)


_display.set_loader(_load_renderers)


def _design_saving(result: Any, *args: Any) -> Any:
    """The planning feature ``sw.profile`` reports (:mod:`slicewise._hooks`), imported on first use."""
    module = importlib.import_module(".planning.saving", __name__)
    return module.with_design_saving(result, *args)


_hooks.set_design_saving(_design_saving)
