"""Profile methods: each estimator of the LACE paper's comparison (and ours) behind one interface."""
