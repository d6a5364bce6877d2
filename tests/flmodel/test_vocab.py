"""The vocabulary flmodel shares with the checker (``flcheck_spec.vocab``, ``flcheck_spec.unquote``), and
flmodel's import graph (no cycles, also not through imports inside functions)."""

from __future__ import annotations

import ast
from pathlib import Path

import flcheck_spec
from flcheck_spec.vocab import Action, Diagnostic, Position

from checker.errors import Position as CheckerPosition
from checker.mc.ts import Action as CheckerAction
from checker.mc.ts import as_action
from flmodel.errors import Diagnostic as ModelDiagnostic
from flmodel.errors import ModelError
from flmodel.examples import seed_model
from flmodel.scenario_ast import Link, Named
from flmodel.system import Action as ModelAction

FLMODEL = Path(__file__).resolve().parents[2] / "flmodel"


def test_one_definition_of_each_shared_value() -> None:
    assert ModelAction is CheckerAction is Action
    assert CheckerPosition is Position
    assert ModelDiagnostic is Diagnostic


def test_model_actions_cross_the_seam_unchanged() -> None:
    system = seed_model()
    (s0,) = system.initial_states()
    for action, _, _ in system.successors(s0):
        assert type(action) is Action
        assert as_action(action) is action


def test_action_reading() -> None:
    assert str(Action("get_grad", "c1", "loc1", "l=0")) == "get_grad(c1@loc1) [l=0]"
    assert str(Action("eval_server", "server")) == "eval_server(server)"
    assert str(Action("step")) == "step"
    assert Action("a") < Action("b")


def test_position_and_diagnostic_text() -> None:
    assert str(Position("f.fl")) == "f.fl"
    assert str(Position("f.fl", 3)) == "f.fl:3"
    assert str(Position("f.fl", 3, 7)) == "f.fl:3:7"
    d = Diagnostic(Position("f.fl", 3, 7), "bad")
    assert (d.source, d.line, d.column, str(d)) == ("f.fl", 3, 7, "f.fl:3:7: bad")
    assert str(ModelError("inconsistent")) == "<model>: inconsistent"


def test_positions_do_not_take_part_in_ast_equality() -> None:
    here, there = Position("a.fl", 1, 1), Position("b.fl", 9, 9)
    assert Named("x", here) == Named("x", there)
    assert hash(Link("a", "b", False, here)) == hash(Link("a", "b", False, there))
    assert here != there


def test_unquote() -> None:
    assert flcheck_spec.unquote('"plain"') == "plain"
    assert flcheck_spec.unquote(r'"a\"b"') == 'a"b'
    assert flcheck_spec.unquote(r'"back\\slash"') == "back\\slash"
    assert flcheck_spec.unquote(r'"tab\tnew\nline"') == "tab\tnew\nline"
    assert flcheck_spec.unquote('""') == ""


def _imports(path: Path) -> set[str]:
    """The flmodel modules ``path`` imports anywhere (top level, functions, ``TYPE_CHECKING`` blocks)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("flmodel"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("flmodel"))
    return found


def test_flmodel_has_no_import_cycle() -> None:
    graph = {f"flmodel.{p.stem}": _imports(p) for p in FLMODEL.glob("*.py") if p.stem != "__init__"}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for dep in graph.get(module, ()):
            visit(dep, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_flmodel_never_imports_checker() -> None:
    for path in FLMODEL.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            assert not any(n == "checker" or n.startswith("checker.") for n in names), path.name
