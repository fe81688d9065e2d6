"""Imports point down the layers of docs/architecture.md: a module imports, at module level and
inside its functions alike, only from its own package or from a package of a lower layer (only
those under ``TYPE_CHECKING``, which never run, are not counted). Results reach the reports
through :mod:`slicewise._display`, whose renderers the reports register by result type."""

from __future__ import annotations

import ast
from pathlib import Path

import slicewise

#: Lowest first. A package may import from the packages before it (and from itself).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_typing", "_threads", "__version__", "exceptions", "_display", "_hooks"),
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
    ("selection", "models", "studies", "sources", "topics"),
    ("domains", "api"),
    ("planning",),
    ("reports",),
    ("cli", "__init__", "__main__"),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
ROOT = Path(slicewise.__file__).parent


def _imports(tree: ast.AST) -> list[ast.ImportFrom | ast.Import]:
    """Every import statement of ``tree`` (in functions too), except under ``if TYPE_CHECKING:``."""
    found: list[ast.ImportFrom | ast.Import] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _import_targets(path: Path) -> list[tuple[str, int]]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    out = []
    for node in _imports(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):  # `import slicewise.x` spelled absolutely
            out.extend(
                (a.name.split(".")[1], node.lineno)
                for a in node.names
                if a.name.startswith("slicewise.")
            )
            continue
        if node.level == 0:
            module = node.module or ""
            if module.startswith("slicewise."):
                out.append((module.split(".")[1], node.lineno))
            elif module == "slicewise":
                out.extend((alias.name, node.lineno) for alias in node.names)
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
        for target, line in _import_targets(path):
            if target != own and RANK[target] > RANK[own]:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target} ({own} is lower)")
    assert not upward, "\n".join(upward)


def test_the_check_sees_imports_inside_functions() -> None:
    """The walk finds an import in a function body and skips one under TYPE_CHECKING."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..reports import html\n"
        "def f():\n    from ..reports.plot import plot_profile\n    return plot_profile\n"
    )
    found = [n.module for n in _imports(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
    assert sorted(map(str, found)) == ["reports.plot", "typing"]
