"""The import graph of edgereg's modules has no circle.

Read from the source (``ast``), every import counted wherever it stands (a
function's lazy import closes a circle as surely as one at the top of a
module: it only delays it). An import of a name from a module counts as an
edge to that module, or to the submodule of that name if there is one.
Imports by name at run time (``importlib.import_module``, the model registry
of ``_base``) are not edges: they are how a base module reaches the modules
built on it without importing them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "edgereg"


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the edgereg modules it imports."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in files else source)
            for target in targets:
                while target and target not in files:  # a name inside a module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

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
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_the_import_graph_has_no_circle():
    assert import_circles(import_graph()) == []


def test_the_check_sees_a_circle_and_a_lazy_import(tmp_path):
    """The checker itself: a circle closed by an import inside a function is found."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import f\n")
    (package / "b.py").write_text("from . import c\n\ndef f():\n    return c\n")
    (package / "c.py").write_text("def g():\n    from .a import f\n    return f\n")
    (package / "d.py").write_text("from .c import g\n")
    assert import_circles(import_graph(package)) == [["pkg.a", "pkg.b", "pkg.c"]]
    (package / "c.py").write_text("def g():\n    return 1\n")
    assert import_circles(import_graph(package)) == []


def test_the_model_registry_names_only_existing_classes():
    """What replaces the imports (model classes and old file formats by name) stays true."""
    import importlib

    from edgereg import _base, _catalog

    for name, module in _base.MODEL_MODULES.items():
        assert hasattr(importlib.import_module(f"edgereg.{module}"), name)
    for name, module in _catalog.BASE_NAMES.items():  # the package's lazy names
        assert hasattr(importlib.import_module(f"edgereg.{module}"), name)
    for kind, name in _base.LEGACY_FORMATS.items():
        _base.model_class(name)
        assert kind in _base._FORMAT_READERS


def test_the_lazy_package_lists_and_gives_every_public_name():
    """``edgereg`` imports its names on first use: ``dir``, ``from edgereg import *``
    and attribute access still see every one, in a fresh interpreter."""
    code = (
        "import edgereg; names = set(dir(edgereg)); "
        "assert set(edgereg.__all__) <= names, set(edgereg.__all__) - names; "
        "ns = {}; exec('from edgereg import *', ns); "
        "assert set(edgereg.__all__) <= set(ns), set(edgereg.__all__) - set(ns); "
        "assert all(getattr(edgereg, n) is ns[n] for n in edgereg.__all__); "
        "assert {'DFOP', 'load', 'OnlineModel', 'StateFileError'} <= set(edgereg.__all__)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_subpackage_ships():
    """pyproject.toml names its packages (no auto-discovery, asv_bench/ beside
    edgereg/): a subpackage left out is missing from the wheel and the sdist's
    install, though an editable install still finds it."""
    tomllib = pytest.importorskip("tomllib")
    pyproject = PACKAGE.parent / "pyproject.toml"
    if not PACKAGE.is_dir() or not pyproject.is_file():
        pytest.skip("run against an installed package: no source tree beside the tests")
    listed = set(tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["packages"])
    found = {_module_name(p, PACKAGE) for p in PACKAGE.rglob("__init__.py")}
    assert found <= listed, f"subpackages missing from pyproject.toml's packages: {found - listed}"


def _markdown_links(root: Path) -> list[tuple[Path, str]]:
    """(file, target) of every relative link in the repository's Markdown."""
    import re

    files = [root / "README.md", root / "CHANGELOG.md", *sorted(root.glob("docs/**/*.md")),
             *sorted(root.glob("examples/**/*.md"))]
    links = []
    for path in files:
        if "_build" in path.parts:
            continue
        for target in re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#"):
                links.append((path, target))
    return links


def test_every_markdown_link_resolves_inside_the_repository():
    """A clone holds everything its README and docs point at (nothing beside it,
    such as ../shared, is there for a user)."""
    root = PACKAGE.parent
    if not PACKAGE.is_dir():
        pytest.skip("run against an installed package: no source tree beside the tests")
    links = _markdown_links(root)
    assert len(links) > 20  # the README alone links a dozen files
    broken = []
    for path, target in links:
        resolved = (path.parent / target.split("#")[0]).resolve()
        if not resolved.exists() or root.resolve() not in (resolved, *resolved.parents):
            broken.append(f"{path.relative_to(root)}: {target}")
    assert not broken, broken
