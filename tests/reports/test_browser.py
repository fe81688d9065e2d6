"""The HTML report in a real browser: headless Chromium loads it without console errors, at a
phone's width without sideways scrolling, and a screenshot shows it rendered.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``make test`` installs them when
missing) and selenium (dev extra). Without them these tests fail and say what is missing: they
never skip.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE = (412, 915)
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def _require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    if missing:
        pytest.fail(
            f"headless browser test needs {', '.join(missing)}: install the Debian packages "
            "chromium and chromium-driver (`make test` does: apt-get install -y chromium "
            "chromium-driver)",
            pytrace=False,
        )
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("headless browser test needs selenium: pip install -e '.[dev]'", pytrace=False)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    _require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.add_argument(f"--window-size={PHONE[0]},{PHONE[1]}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.parametrize("which", ["categorical", "continuous"])
def test_report_loads_without_console_errors_at_phone_width(
    results: dict[str, Any], which: str, browser: Any, tmp_path: Path
) -> None:
    path = tmp_path / "report.html"
    results[which].to_html(path, label="correct")
    browser.get(path.as_uri())
    title = browser.title
    assert title.startswith("How 'correct' varies with")
    errors = [e for e in browser.get_log("browser") if e["level"] in {"SEVERE", "ERROR"}]
    assert errors == []
    width = browser.execute_script("return document.documentElement.scrollWidth")
    inner = browser.execute_script("return window.innerWidth")
    assert width <= inner, "the page scrolls sideways at a phone's width"
    svg_width = browser.execute_script(
        "return document.querySelector('figure svg').getBoundingClientRect().width"
    )
    assert 0 < svg_width <= inner
    requested = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert requested == []  # nothing fetched besides the file itself


def test_report_screenshot_renders(results: dict[str, Any], browser: Any, tmp_path: Path) -> None:
    import matplotlib.image as mpimg

    path = tmp_path / "report.html"
    results["ordinal"].to_html(path, label="correct")
    browser.get(path.as_uri())
    assert browser.title == "How 'correct' varies with level"
    png = tmp_path / "shot.png"
    assert browser.save_screenshot(str(png))
    pixels = np.asarray(mpimg.imread(png))[..., :3]
    assert pixels.shape[0] > 100
    assert pixels.shape[1] > 100
    dark = float((pixels.mean(axis=2) < 0.5).mean())
    assert 0.005 < dark < 0.6, f"screenshot looks blank or broken (dark share {dark:.4f})"
    assert float(pixels.std()) > 0.05


@pytest.mark.parametrize("which", ["ranking", "plan"])
def test_ranking_and_plan_reports_render_at_phone_width(
    many: dict[str, Any], which: str, browser: Any, tmp_path: Path
) -> None:
    import matplotlib.image as mpimg

    from slicewise.reports.html_more import plan_html, ranking_html

    path = tmp_path / "report.html"
    render = ranking_html if which == "ranking" else plan_html
    render(many[which], path, label="correct")
    browser.get(path.as_uri())
    expected = {
        "ranking": "Which model is better where: 3 models by subject",
        "plan": "How many more gold labels, by subject",
    }
    assert browser.title == expected[which]
    errors = [e for e in browser.get_log("browser") if e["level"] in {"SEVERE", "ERROR"}]
    assert errors == []
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= browser.execute_script("return window.innerWidth")
    png = tmp_path / "shot.png"
    assert browser.save_screenshot(str(png))
    pixels = np.asarray(mpimg.imread(png))[..., :3]
    dark = float((pixels.mean(axis=2) < 0.5).mean())
    assert 0.005 < dark < 0.6, f"screenshot looks blank or broken (dark share {dark:.4f})"


def test_demo_topics_report_reads_well(browser: Any, tmp_path: Path) -> None:
    """`slicewise demo --topics`: the report over discovered topics, with the family-wise section,
    loads without errors, fits a phone's width and renders."""
    import matplotlib.image as mpimg

    from slicewise.cli import main

    assert main(["demo", "--topics", "--out", str(tmp_path)]) == 0
    path = tmp_path / "topics" / "report.html"
    browser.get(path.as_uri())
    assert browser.title == "How 'gold' varies with topic"
    errors = [e for e in browser.get_log("browser") if e["level"] in {"SEVERE", "ERROR"}]
    assert errors == []
    width = browser.execute_script("return document.documentElement.scrollWidth")
    assert width <= browser.execute_script("return window.innerWidth")
    headings = browser.execute_script(
        "return [...document.querySelectorAll('h2')].map(h => h.textContent)"
    )
    assert "Slices where the model is worst, with 95% family-wise confidence" in headings
    png = tmp_path / "shot.png"
    assert browser.save_screenshot(str(png))
    pixels = np.asarray(mpimg.imread(png))[..., :3]
    dark = float((pixels.mean(axis=2) < 0.5).mean())
    assert 0.005 < dark < 0.6, f"screenshot looks blank or broken (dark share {dark:.4f})"


def _long_names_result() -> Any:
    """A profile whose slices have long names (benchmarks as users name them) and borrow."""
    import warnings

    import numpy as np
    import pandas as pd

    import slicewise as sw

    rng = np.random.default_rng(5)
    names = [
        "Chinese SimpleQA (factual recall, zh)",
        "BIG-Bench Hard: multistep arithmetic",
        "MMLU-Pro professional law and ethics",
        "HumanEval+ program synthesis tasks",
        "GPQA diamond graduate-level science",
    ]
    n = 3000
    g = rng.choice(names, size=n, p=[0.45, 0.3, 0.2, 0.03, 0.02])
    y = rng.binomial(1, 0.6, size=n).astype(float)
    frame = pd.DataFrame(
        {"benchmark": g, "judge": y + rng.normal(0, 0.8, n), "other": rng.normal(size=n), "y": y}
    )
    frame.loc[rng.random(n) > 0.1, "y"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sw.profile(
            frame, z="benchmark", kind="categorical", label="y", signals=["judge", "other"]
        )


@pytest.mark.parametrize("which", ["categorical", "continuous", "long names"])
def test_per_slice_table_fits_a_1200px_window(
    results: dict[str, Any], which: str, browser: Any, tmp_path: Path
) -> None:
    """Issue 31: on a laptop-sized window the per-slice table shows whole, with no sideways
    scrolling inside its box."""
    path = tmp_path / "report.html"
    result = _long_names_result() if which == "long names" else results[which]
    result.to_html(path, label="correct")
    browser.set_window_size(1200, 900)
    browser.get(path.as_uri())
    overflow = browser.execute_script(
        "return Array.from(document.querySelectorAll('div.scroll'))"
        ".map(d => d.scrollWidth - d.clientWidth)"
    )
    assert overflow, "the report has no table"
    assert max(overflow) <= 0, overflow
