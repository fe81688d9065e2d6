"""Data layer: the validated item table, file readers, sampling designs."""
