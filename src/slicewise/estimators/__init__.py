"""Estimators: point estimates and their coefficients, built on local weighted sums."""
