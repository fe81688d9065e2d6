"""One labeled unit per domain under a smoothing method: a clear error, not numpy's
"zero-size array to reduction operation maximum" (issue 11, item 7)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import slicewise as sw


def one_label_per_domain(strata: bool) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    domain = np.repeat(np.arange(20), 30)
    y = (rng.random(domain.size) < 0.5).astype(float)
    label = np.full(domain.size, np.nan)
    first = np.array([np.flatnonzero(domain == d)[0] for d in range(20)])
    label[first] = y[first]
    frame = pd.DataFrame({"d": domain, "s": y + rng.normal(0, 1, domain.size), "y": label})
    if strata:
        frame["stratum"] = frame["d"]
    return frame


@pytest.mark.parametrize("method", ["pp-s", "fh"])
@pytest.mark.parametrize("strata", [True, False])
def test_smoothing_with_one_label_per_domain_says_why(method: str, strata: bool) -> None:
    frame = one_label_per_domain(strata)
    with pytest.raises(
        ValueError,
        match=rf"Method '{method}' smooths .* needs at least 2 domains with a positive sampling "
        r"variance; got 0\. 20 of 20 domains have labels .* only 0 have 2 or more labels",
    ):
        sw.domains(
            frame,
            domain="d",
            label="y",
            signals=["s"],
            inclusion=None,
            strata="stratum" if strata else None,
            method=method,  # type: ignore[arg-type]
        )
