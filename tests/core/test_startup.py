"""Start-up: ``import slicewise`` and the command line do not import the heavy extras.

scikit-learn, scipy.stats, scipy.optimize and matplotlib are imported by the functions that need
them, so ``import slicewise`` and ``slicewise methods`` start fast. Checked in a fresh interpreter
(not by timing, which depends on the machine).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("sklearn", "matplotlib", "scipy.stats", "scipy.optimize", "statsmodels")


def loaded_after(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
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
    # the console script's import path: slicewise.cli.main on sys.argv; `slicewise methods` took
    # 0.7-0.8 s when it loaded pandas and scipy through the registry, 0.05 s without them
    code = (
        "import contextlib, io, sys\n"
        "sys.argv = ['slicewise', 'methods']\n"
        "from slicewise.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main() == 0"
    )
    heavy = ("pandas", "scipy", "sklearn", "matplotlib", "statsmodels", "pyarrow", "numpy")
    assert loaded_after(code, heavy) == []


def test_methods_listing_is_the_registry() -> None:
    from slicewise.cli.listing import ROWS, registry_rows, rows_module

    rows = registry_rows()
    assert rows == ROWS, (
        "src/slicewise/cli/_method_rows.py is out of date with slicewise.methods(); regenerate it "
        "with `python -m slicewise.cli.listing > src/slicewise/cli/_method_rows.py`"
    )
    path = Path(__file__).parents[2] / "src" / "slicewise" / "cli" / "_method_rows.py"
    assert path.read_text(encoding="utf-8") == rows_module(rows)


def test_methods_command_lists_every_method(capsys: pytest.CaptureFixture[str]) -> None:
    import slicewise as sw
    from slicewise.cli import main

    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    names = [
        line.split()[0] for line in out.splitlines() if line.startswith("  ") and line[2] != " "
    ]
    assert names == list(sw.methods()["method"])
    assert "Domain methods" in out
    assert "needs: signals; tunes: ridge (grid 0.03, 0.1, 0.3, 1, 3)" in out


def test_help_lists_every_command_and_each_command_parses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from slicewise.cli import COMMANDS, main

    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)
    for name in COMMANDS:
        with pytest.raises(SystemExit) as stop:
            main([name, "--help"])
        assert stop.value.code == 0
        assert f"usage: slicewise {name}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["no-such-command"])
    assert stop.value.code == 2
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err


def test_profile_import_loads_no_sklearn_or_matplotlib() -> None:
    loaded = loaded_after("import slicewise as sw\nsw.profile")
    assert "sklearn" not in loaded
    assert "matplotlib" not in loaded


def test_functions_named_like_their_module_stay_functions() -> None:
    code = (
        "import slicewise as sw\n"
        "import slicewise.models.cascade, slicewise.domains, slicewise.methods.registry\n"
        "assert callable(sw.cascade) and callable(sw.domains) and callable(sw.methods)\n"
        "from slicewise import cascade, domains, methods\n"
        "assert all(callable(f) for f in (cascade, domains, methods))"
    )
    loaded_after(code)
