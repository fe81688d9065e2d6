"""Moments layer: local weighted sums over the pool and the labeled set."""
