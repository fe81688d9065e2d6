"""Many models on one grid: per-model profiles (:mod:`~slicewise.models.profiles`), paired gaps
and simultaneous rankings (:mod:`~slicewise.models.gaps`), deployment-weighted scores
(:mod:`~slicewise.models.deploy`), cascaded raters (:mod:`~slicewise.models.cascade`), and the
item-level influence values the last three share (:mod:`~slicewise.models.influence`)."""
