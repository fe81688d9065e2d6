"""Smoothing of direct estimates across disjoint domains, one module for profiles and domains:

* :mod:`.linear_mixed` -- the Fay-Herriot / taxonomy area-level model and its Woodbury algebra;
* :mod:`.fay_herriot` -- REML fit, EBLUP and the Prasad-Rao (Datta-Lahiri) MSE;
* :mod:`.bayes` -- the fully Bayesian posterior by exact numerical integration over the variance
  components (PP-S without taxonomy, PP-TS with one);
* :mod:`.area` -- the two fits under one name each (``'fh'``: REML/EBLUP, ``'pp-s'``: Bayesian),
  as ``profile(smooth=...)`` and ``domains(method=...)`` both call them;
* :mod:`.objective` -- what smoothing promises, ``objective='slice'`` (the limited translation
  of each slice's direct estimate, with an interval that contains the direct one) or
  ``'ensemble'`` (the model's estimate and interval), and the one ``borrowed`` rule;
* :mod:`.step` -- the one smoothing step of profiles and domains: fit the model, apply the
  objective;
* :mod:`.domains` -- direct estimate, then (optionally) smoothing: the one entry point used by
  ``sw.domains``, DB-CV and the oracle harness.

Smoothing of a profile's disjoint domains (``sw.profile``, ``auto``) reads method fits, so it sits
one layer up, in :mod:`slicewise.methods.smoothed`; nothing here imports the methods.
"""
