"""Inference layer: variances from each estimator's linear representation, and intervals."""
