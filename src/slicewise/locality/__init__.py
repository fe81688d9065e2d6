"""Locality layer: grids, bandwidths and local-weight matrices (LACE paper, Section 3.1)."""
