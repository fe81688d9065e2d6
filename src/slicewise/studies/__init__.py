"""Studies: matched-split relative-efficiency studies and the paper's simulation designs."""
