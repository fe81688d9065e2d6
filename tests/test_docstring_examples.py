"""Every ``>>>`` example in the package's docstrings runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import slicewise

ROOT = Path(slicewise.__file__).parent


def modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages([str(ROOT)], prefix="slicewise."):
        spec = importlib.util.find_spec(info.name)
        if spec is not None and spec.origin and ">>> " in Path(spec.origin).read_text():
            names.append(info.name)
    return sorted(names)


MODULES = modules_with_examples()


def test_examples_are_found() -> None:
    assert "slicewise.api" in MODULES
    assert "slicewise.io.join" in MODULES
    assert "slicewise.reports.markdown" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
