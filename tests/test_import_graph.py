"""The package's modules import one another one way only: no import circle, not even
through an import inside a function (which hides the circle from the start-up but
not from a reader) or under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "manetfair"


def module_names(root: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package (stubs included, as leaves)."""
    names: dict[str, Path] = {}
    for path in sorted([*root.rglob("*.py"), *root.rglob("*.pyi")]):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names.setdefault(".".join(parts), path)
    return names


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports anywhere in its file. `from P import X`
    counts as an import of P.X when that is a module, else of P."""
    names = module_names(root)
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name, path in names.items():
        if path.suffix == ".pyi":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in names:
                        graph[name].add(full)
                    elif base in names:
                        graph[name].add(base)
        graph[name].discard(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 20, "the package's modules were not found"
    assert circles(graph) == []


def test_the_generic_runner_names_no_remedy() -> None:
    assert "manetfair.throttle" not in import_graph(PACKAGE)["manetfair.runner"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"a.py": "def f():\n    from pkg import b\n", "b.py": "import pkg.a\n"},
            [["pkg.a", "pkg.b"]],
        ),
        ({"a.py": "from . import b\n", "b.py": "from .a import x\n"}, [["pkg.a", "pkg.b"]]),
        ({"a.py": "from pkg import b\n", "b.py": "import json\n"}, []),
    ],
)
def test_a_circle_behind_a_local_or_relative_import_is_found(
    tmp_path: Path, files: dict[str, str], expected: list[list[str]]
) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    assert circles(import_graph(root)) == expected
