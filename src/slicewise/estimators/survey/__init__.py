"""Design-based direct domain estimators, each file holding one family's point estimate and its
design variance:

* :mod:`.base` -- :class:`DirectFit` and the design covariance of Horvitz-Thompson totals under
  stratified SRS and Poisson sampling, used by every family;
* :mod:`.ht` -- Horvitz-Thompson and Hajek;
* :mod:`.ppi` -- PPI and power-tuned PPI++;
* :mod:`.greg` -- GREG with a slope pooled over domains (weighted least squares).
"""
