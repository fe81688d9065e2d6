"""Design-based disaggregated evaluation: every domain's mean from a probability sample of labels.

One feature package (issue 29): :mod:`.api` (:func:`domains`, :func:`validate`), :mod:`.input`
(the table and options checked once, into the categorical profile problem of
:mod:`slicewise.methods.run`), :mod:`.sample` (:func:`slicewise.sample`, drawing a probability
sample), :mod:`.fit` (the direct estimate, then the one smoothing step of
:mod:`slicewise.smoothing.step`), :mod:`.dbcv` (design-based cross-validation) and
:mod:`.results` (:class:`DomainResult`, :class:`ValidationResult`). The direct estimators
themselves are those of :mod:`slicewise.estimators.survey`, which categorical profiles run too.
"""

from __future__ import annotations

from .api import domains, validate

__all__ = ["domains", "validate"]
