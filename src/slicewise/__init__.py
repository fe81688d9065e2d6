"""slicewise: how an AI model performs across a profile axis, from a few gold labels and many
cheap signals, with honest uncertainty.

>>> import slicewise as sw
>>> sorted(sw.methods()["method"])[:3]
['aug_plugin', 'auto', 'global_cv']
"""

from __future__ import annotations

from .api import profile
from .cascade import CascadePlan, cascade, cascade_break_even
from .data.designs import DesignSample
from .data.table import ItemTable, make_table
from .deploy import DeploymentScore, deployment_score, read_deploy
from .domains import domains, sample, validate
from .gaps import ModelRanking, UnpairedLabelsWarning, gap, rank_models
from .methods.registry import methods
from .models import ModelProfiles, profile_models
from .results import ConfidenceInterval, ProfileResult
from .results_domain import DomainResult, ValidationResult
from .selection.cv import SelectionResult, select

__all__ = [
    "CascadePlan",
    "ConfidenceInterval",
    "DeploymentScore",
    "DesignSample",
    "DomainResult",
    "ItemTable",
    "ModelProfiles",
    "ModelRanking",
    "ProfileResult",
    "SelectionResult",
    "UnpairedLabelsWarning",
    "ValidationResult",
    "cascade",
    "cascade_break_even",
    "deployment_score",
    "domains",
    "gap",
    "make_table",
    "methods",
    "profile",
    "profile_models",
    "rank_models",
    "read_deploy",
    "sample",
    "select",
    "validate",
]

__version__ = "0.1.0"
