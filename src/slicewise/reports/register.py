"""The renderers of every result type, registered with :mod:`slicewise._display` by type
(:func:`functools.singledispatch`): results call ``display.table`` / ``text`` / ``html`` /
``plot`` and never import this package. Imported once, on a result's first display, by the
loader that ``slicewise/__init__.py`` installs."""

from __future__ import annotations

from .. import _display as display
from ..domains.results import DomainResult, ValidationResult
from ..models.deploy import DeploymentScore
from ..models.profiles import ModelProfiles
from ..models.ranking import ModelRanking
from ..planning.result import PlanResult
from ..results import ProfileResult
from ..selection.cv import SelectionResult
from ..studies.summary import StudyResult
from . import html, tables, text
from .html_more import plan_html
from .plot import plot_profile
from .plot_domains import plot_domains
from .plot_models import plot_model_profiles
from .plot_plan import plot_plan
from .study_plots import plot_re

display.table.register(ProfileResult, tables.profile_table)
display.table.register(DomainResult, tables.domain_table)
display.table.register(ModelProfiles, tables.models_table)
display.table.register(ModelRanking, tables.ranking_table)
display.table.register(DeploymentScore, tables.deploy_table)
display.table.register(PlanResult, tables.plan_table)
display.table.register(StudyResult, tables.study_table)
display.table.register(ValidationResult, tables.validation_table)
display.table.register(SelectionResult, tables.selection_table)

display.text.register(ProfileResult, text.profile_summary)
display.text.register(DomainResult, text.domain_summary)
display.text.register(ModelProfiles, text.models_summary)
display.text.register(StudyResult, text.study_summary)

display.html.register(ProfileResult, html.profile_html)
display.html.register(DomainResult, html.domain_html)
display.html.register(ModelProfiles, html.models_html)
display.html.register(StudyResult, html.study_html)
display.html.register(PlanResult, plan_html)

display.plot.register(ProfileResult, plot_profile)
display.plot.register(DomainResult, plot_domains)
display.plot.register(ModelProfiles, plot_model_profiles)
display.plot.register(PlanResult, plot_plan)
display.plot.register(StudyResult, plot_re)
