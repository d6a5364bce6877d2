"""The import graph of the in-tree packages, read with ``ast`` (nothing is imported).

Every import is collected: module-level and inside functions, ``from pkg import name`` (an import of the
submodule ``pkg.name`` when that is a module of the tree), relative imports, and
``importlib.import_module("...")`` / ``import_module("...")`` with a string literal. The layering of
DESIGN.md is then asserted on the graph:

* ``flmodel`` (what the system is) never imports ``checker``;
* no ``checker`` module outside ``checker.app`` and ``checker.cli`` imports ``flmodel``;
* ``flcheck_spec`` (the folder ``spec/``) imports neither;
* no cycle among the in-tree modules, also not through function-level imports (imports under
  ``if TYPE_CHECKING:`` never run and are left out of this one check);
* every function-level import of an in-tree module carries a comment on the same or the previous line
  saying why it is lazy.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Source folder -> the top-level package it installs as (pyproject's package-dir).
PACKAGES: dict[str, str] = {"flmodel": "flmodel", "checker": "checker", "spec": "flcheck_spec"}


@dataclass(frozen=True)
class Import:
    """One import of an in-tree module by ``importer`` (file ``path``, line ``line``)."""

    importer: str
    target: str
    path: Path
    line: int
    function_level: bool
    type_checking_only: bool

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.importer} -> {self.target})"


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT)
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _sources() -> dict[str, Path]:
    """Every in-tree module name -> its file."""
    return {
        _module_name(path): path
        for folder in PACKAGES
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _in_tree(name: str) -> str | None:
    """The longest in-tree module that ``name`` names or lies in (``checker.mc.ctl.Node`` ->
    ``checker.mc.ctl``)."""
    modules = _sources()
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _resolve_relative(importer: str, path: Path, module: str | None, level: int) -> str:
    package = importer.split(".") if path.name == "__init__.py" else importer.split(".")[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, module] if module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(node: ast.AST, in_function: bool, type_checking: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
    """Every node below ``node`` with whether it is inside a function and under ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        child_function = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        child_tc = type_checking
        if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
            child_tc = True
        yield child, child_function, child_tc
        yield from _walk(child, child_function, child_tc)


def _literal_import_module(call: ast.Call) -> str | None:
    func = call.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in {"import_module", "__import__"}
    )
    if not named or not call.args:
        return None
    first = call.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("."):
        return first.value
    return None


def _imports_of(importer: str, path: Path, source: str) -> list[Import]:
    """The in-tree imports in ``source``, the text of module ``importer`` at ``path``."""
    found: list[Import] = []
    for node, in_function, type_checking in _walk(ast.parse(source, filename=str(path)), False, False):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = _resolve_relative(importer, path, node.module, node.level) if node.level else node.module
            if module is None:
                continue
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                targets.append(submodule if submodule in _sources() else module)
        elif isinstance(node, ast.Call) and (literal := _literal_import_module(node)) is not None:
            targets = [literal]
        for target in targets:
            resolved = _in_tree(target)
            if resolved is not None and resolved != importer:
                line = getattr(node, "lineno", 0)
                found.append(Import(importer, resolved, path, line, in_function, type_checking))
    return found


@cache
def imports() -> tuple[Import, ...]:
    """Every import of an in-tree module by an in-tree module."""
    return tuple(
        imp for importer, path in _sources().items() for imp in _imports_of(importer, path, path.read_text())
    )


def _top(module: str) -> str:
    return module.split(".")[0]


def _violations(importer_in: str, forbidden: tuple[str, ...], exempt: tuple[str, ...] = ()) -> list[str]:
    return sorted({
        imp.where()
        for imp in imports()
        if _top(imp.importer) == importer_in
        and not any(imp.importer == e or imp.importer.startswith(e + ".") for e in exempt)
        and _top(imp.target) in forbidden
    })


def test_the_graph_is_read() -> None:
    """Guard against a reader that finds nothing: known edges of each kind are present."""
    edges = {(imp.importer, imp.target) for imp in imports()}
    assert any(_top(a) == "checker" and _top(b) == "flmodel" for a, b in edges)  # checker.app joins them
    assert any(_top(a) == _top(b) == "flmodel" for a, b in edges)
    assert any(imp.function_level for imp in imports())
    assert "checker.cli.main" in _sources() and "flcheck_spec" in _sources()


def test_flmodel_never_imports_checker() -> None:
    offenders = _violations("flmodel", ("checker",))
    assert not offenders, "flmodel imports checker:\n" + "\n".join(offenders)


def test_engines_never_import_flmodel() -> None:
    offenders = _violations("checker", ("flmodel",), exempt=("checker.app", "checker.cli"))
    assert not offenders, "checker modules outside app/ and cli/ import flmodel:\n" + "\n".join(offenders)


def test_spec_imports_neither_flmodel_nor_checker() -> None:
    offenders = _violations("flcheck_spec", ("flmodel", "checker"))
    assert not offenders, "flcheck_spec imports flmodel or checker:\n" + "\n".join(offenders)


def test_no_import_cycle() -> None:
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_nodes_from(_sources())
    graph.add_edges_from((imp.importer, imp.target) for imp in imports() if not imp.type_checking_only)
    cycles = sorted(" -> ".join([*cycle, cycle[0]]) for cycle in nx.simple_cycles(graph))
    assert not cycles, f"{len(cycles)} import cycles among in-tree modules:\n" + "\n".join(cycles[:40])


@cache
def _comment_lines(path: Path) -> frozenset[int]:
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    return frozenset(tok.start[0] for tok in tokens if tok.type == tokenize.COMMENT)


def test_function_level_in_tree_imports_say_why() -> None:
    silent = sorted({
        imp.where()
        for imp in imports()
        if imp.function_level and not {imp.line - 1, imp.line} & _comment_lines(imp.path)
    })
    assert not silent, "function-level imports without a comment saying why:\n" + "\n".join(silent)


@pytest.mark.parametrize(
    "source, importer, expected",
    [
        ("from checker.mc import ctl_ast\n", "checker.app.check", {"checker.mc.ctl_ast"}),
        ("from checker.mc.ctl_ast import Node\n", "checker.app.check", {"checker.mc.ctl_ast"}),
        ("import checker.mc.ctl_ast as ast_mod\n", "checker.app.check", {"checker.mc.ctl_ast"}),
        ("from . import check\n", "checker.app.report", {"checker.app.check"}),
        ("from ..mc import ctl_ast\n", "checker.app.report", {"checker.mc.ctl_ast"}),
        ("def f():\n    importlib.import_module('flmodel.system')\n", "checker.cli.main", {"flmodel.system"}),
        ("import numpy\nfrom scipy import stats\n", "checker.app.check", set()),
    ],
)
def test_reader_resolves_import_forms(source: str, importer: str, expected: set[str]) -> None:
    """The reader itself, on small sources standing in for an in-tree module."""
    got = {imp.target for imp in _imports_of(importer, _sources()[importer], source)}
    assert got == expected


def test_reader_marks_function_level_and_type_checking_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from checker.mc import kripke\n"
        "def f():\n    from checker.mc import ctl_ast  # lazy: a reason\n"
    )
    importer = "checker.app.check"
    got = {imp.target: imp for imp in _imports_of(importer, _sources()[importer], source)}
    assert got["checker.mc.kripke"].type_checking_only and not got["checker.mc.kripke"].function_level
    assert got["checker.mc.ctl_ast"].function_level and not got["checker.mc.ctl_ast"].type_checking_only


def _package(module: str) -> str:
    """The package a module belongs to: a subpackage of ``checker`` (``checker.mc``), a module at
    ``checker``'s root (``checker.render``), or a top-level package (``flmodel``, ``flcheck_spec``)."""
    parts = module.split(".")
    if parts[0] == "checker" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def test_no_package_import_cycle() -> None:
    """No two packages import each other, also not through function-level imports (``checker.mc``
    reads values through ``checker.render``, not ``checker.io``, which reads Kripke structures from
    ``checker.mc``; the application and the command line share the tables of ``checker.tables``)."""
    graph: nx.DiGraph[str] = nx.DiGraph()
    graph.add_edges_from((_package(imp.importer), _package(imp.target)) for imp in imports()
                         if not imp.type_checking_only and _package(imp.importer) != _package(imp.target))
    assert ("checker.io", "checker.mc") in graph.edges  # the reader sees the packages' edges
    cycles = sorted(" -> ".join([*cycle, cycle[0]]) for cycle in nx.simple_cycles(graph))
    assert not cycles, f"{len(cycles)} import cycles among packages:\n" + "\n".join(cycles[:40])
