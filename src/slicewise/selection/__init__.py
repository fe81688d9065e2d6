"""Selection and validation: within-L cross-validation and design-based cross-validation."""
