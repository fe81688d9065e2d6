"""Reports: plots and tables (matplotlib is imported lazily, only when a plot is drawn)."""
