"""Benchmarks (not tests): speed as ratios measured in one run, with peak memory."""
