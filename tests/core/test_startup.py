"""Start-up: ``import slicewise`` and the command line do not import the heavy extras.

scikit-learn, scipy.stats, scipy.optimize and matplotlib are imported by the functions that need
them, so ``import slicewise`` and ``slicewise methods`` start fast. Checked in a fresh interpreter
(not by timing, which depends on the machine).
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("sklearn", "matplotlib", "scipy.stats", "scipy.optimize", "statsmodels")


def loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def test_import_slicewise_loads_no_heavy_module() -> None:
    assert loaded_after("import slicewise") == []


def test_public_names_still_resolve() -> None:
    import slicewise as sw

    for name in sw.__all__:
        assert getattr(sw, name) is not None, name
    assert "profile" in dir(sw)


def test_methods_command_loads_no_heavy_module() -> None:
    code = (
        "import contextlib, io\n"
        "from slicewise.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['methods']) == 0"
    )
    loaded = loaded_after(code)
    for heavy in ("sklearn", "matplotlib", "statsmodels"):
        assert heavy not in loaded


def test_profile_import_loads_no_sklearn_or_matplotlib() -> None:
    loaded = loaded_after("import slicewise as sw\nsw.profile")
    assert "sklearn" not in loaded
    assert "matplotlib" not in loaded


def test_functions_named_like_their_module_stay_functions() -> None:
    code = (
        "import slicewise as sw\n"
        "import slicewise.cascade, slicewise.domains, slicewise.methods.registry\n"
        "assert callable(sw.cascade) and callable(sw.domains) and callable(sw.methods)\n"
        "from slicewise import cascade, domains, methods\n"
        "assert all(callable(f) for f in (cascade, domains, methods))"
    )
    loaded_after(code)
