"""Smoothing of direct domain estimates (area-level models):

* :mod:`.linear_mixed` -- the Fay-Herriot / taxonomy model and its Woodbury algebra;
* :mod:`.fay_herriot` -- REML fit, EBLUP and the Prasad-Rao (Datta-Lahiri) MSE;
* :mod:`.bayes` -- the fully Bayesian posterior by exact numerical integration over the variance
  components (PP-S without taxonomy, PP-TS with one);
* :mod:`.pipeline` -- direct estimate, then (optionally) smoothing: the one entry point used by
  ``sw.domains``, DB-CV and the oracle harness.
"""
