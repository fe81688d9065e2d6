"""Typed warnings, so users can filter exactly what they mean to silence, and the error of an
invalid parameter.

Errors on bad input are raised once at the public boundary with the parameter or column named, the
rule stated and the offending value or count echoed: :class:`InvalidParameterError` for a
declared tuning option (:mod:`slicewise.methods.options`), :class:`ValueError` (or
:class:`TypeError` for a wrong type) for the rest.
"""

from __future__ import annotations


class InvalidParameterError(ValueError, TypeError):
    """A parameter of a public function breaks its declared constraint.

    A subclass of both ValueError and TypeError (as scikit-learn's), so code that catches either
    keeps working.
    """


class SlicewiseWarning(UserWarning):
    """Base class of every warning slicewise emits."""


class EmptyNeighbourhoodWarning(SlicewiseWarning):
    """Some grid points have no labeled weight; their estimate is NaN."""


class SparseNeighbourhoodWarning(SlicewiseWarning):
    """Some grid points have too few labeled items for a variance estimate; their se is NaN."""


class FullyLabeledWarning(SlicewiseWarning):
    """Every pool item is labeled, so the cheap signals cannot help: LACE reduces to naive."""


class ConstantSignalWarning(SlicewiseWarning):
    """A signal column is constant over the whole pool and carries no information."""


class BorrowedStrengthWarning(SlicewiseWarning):
    """An estimate leans on strength borrowed from other grid points or domains."""


class EmptyDomainWarning(SlicewiseWarning):
    """Some domains have no labeled unit; their estimate is NaN."""


class SmallDomainWarning(SlicewiseWarning):
    """Some domains have too few labels for a design variance or a normal interval to be trusted."""


class SmoothingFallbackWarning(SlicewiseWarning):
    """A smoothing step could not be used as asked and slicewise fell back to a safer choice."""


class InSampleFitWarning(SlicewiseWarning):
    """A coefficient fitted on the same few labels it adjusts (``lace`` and the other in-sample
    fits) with many signals per label: the estimate can be biased; ``auto`` cross-fits."""


class LabelSelectionWarning(SlicewiseWarning):
    """The labeled items do not look like a random sample of the pool (signal balance test).

    Labels chosen by the signals or by the label itself bias every estimate; pass the inclusion
    probabilities (``inclusion=``) when they are known.
    """


class DuplicateItemsWarning(SlicewiseWarning):
    """An id-like column repeats on rows that are counted as separate items (no ``id`` given):
    repeated items count twice, so n grows and the standard errors shrink."""


class InclusionProbabilityWarning(SlicewiseWarning):
    """The inclusion probabilities disagree with the number of labeled items: the labeled items'
    1 / pi_i do not add up to about the pool size, as they do under any sampling design whose
    probabilities they are."""
