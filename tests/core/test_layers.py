"""Imports point down the layers of docs/architecture.md: a module imports, at module level, only
from its own package or from a package of a lower layer (imports inside functions, the lazy
plotting and file paths, and those under ``TYPE_CHECKING`` are not counted)."""

from __future__ import annotations

import ast
from pathlib import Path

import slicewise

#: Lowest first. A package may import from the packages before it (and from itself).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_typing", "_threads", "__version__", "exceptions"),
    ("_validation",),
    ("data", "datasets"),
    ("io",),
    ("locality",),
    ("moments",),
    ("estimators",),
    ("inference",),
    ("smoothing",),
    ("results", "results_worst"),
    ("methods",),
    ("selection", "models", "studies", "planning", "sources", "topics"),
    ("domains", "api"),
    ("reports",),
    ("cli", "__init__", "__main__"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
ROOT = Path(slicewise.__file__).parent


def _module_level_targets(path: Path) -> list[tuple[str, int]]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    out = []
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = parts[:-1][: len(parts) - node.level] if node.level > 1 else parts[:-1]
        target = [*base, *(node.module.split(".") if node.module else [])]
        if target:
            out.append((target[0], node.lineno))
        else:
            out.extend((alias.name, node.lineno) for alias in node.names)
    return out


def test_every_package_has_a_layer() -> None:
    names = {p.name.removesuffix(".py") for p in ROOT.iterdir() if p.suffix == ".py" or p.is_dir()}
    names -= {"__pycache__", "py"}
    assert names <= set(RANK), f"packages without a layer: {sorted(names - set(RANK))}"


def test_imports_point_down() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        own = path.relative_to(ROOT).parts[0].removesuffix(".py")
        for target, line in _module_level_targets(path):
            if target != own and RANK[target] > RANK[own]:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target} ({own} is lower)")
    assert not upward, "\n".join(upward)
