"""How many labels, and which items next: profile-level planning (:mod:`.plan`) and adaptive
labeling with known inclusion probabilities (:mod:`.adaptive`)."""
