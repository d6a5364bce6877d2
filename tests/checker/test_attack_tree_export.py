"""Exports of attack trees: JSON round trip and re-check, DOT syntax (parsed with a DOT grammar), ADTool
XML structure, atomic writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from lark import Lark
from lark.exceptions import LarkError

from checker.attack_trees.export import (
    display_children,
    render,
    result_to_json,
    tree_from_json,
    tree_to_adtool,
    tree_to_dot,
    tree_to_json,
    tree_to_text,
)
from checker.attack_trees.generation import AttackFound, generate_attack_tree
from checker.attack_trees.tree import AttackTree
from checker.attack_trees.validity import is_valid
from checker.mc.kripke import Kripke
from tests.checker.test_attack_trees import diamond, labelled_kripke

DOT_GRAMMAR = r"""
start: "digraph" id "{" stmt* "}"
stmt: (edge_stmt | node_default | graph_attr | node_stmt) ";"
graph_attr: id "=" id
node_default: "node" attrs
node_stmt: id attrs?
edge_stmt: id "->" id attrs?
attrs: "[" [attr ("," attr)*] "]"
attr: id "=" id
id: CNAME | ESCAPED | SIGNED_NUMBER
ESCAPED: /"(\\.|[^"\\])*"/
%import common.CNAME
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"""
DOT = Lark(DOT_GRAMMAR, parser="lalr")


def _tree() -> tuple[Kripke, AttackTree]:
    k = diamond()
    r = generate_attack_tree(k, k.labels["done"], distinguish="paths", max_attacks=10)
    assert isinstance(r, AttackFound)
    return k, r.tree


def test_json_round_trip_and_recheck() -> None:
    k, t = _tree()
    data = json.loads(json.dumps(tree_to_json(t, k, goal_text="done")))
    assert data["valid"] is True and data["pair"] == {"initial_size": 1, "goal_size": 1}
    assert data["nodes_shared"] < data["nodes_expanded"] or data["nodes_shared"] == t.size()
    back = tree_from_json(data)
    assert back == t and is_valid(back, k)
    bases = [n for n in data["nodes"] if n["kind"] == "base"]
    assert all(n["action"]["rule"] in {"get_grad", "hack"} for n in bases)
    assert any(c["observable"] == "ready" for n in bases for c in n["changes"])
    # tamper: a base attack whose goal is not a successor -> the re-check says invalid
    first = bases[0]
    first["goal"] = [5]
    tampered = tree_to_json(tree_from_json(data), k)
    assert tampered["valid"] is False and "invalid_reason" in tampered


def test_json_reader_rejects_malformed_documents() -> None:
    with pytest.raises(ValueError, match="format"):
        tree_from_json({"format": "x", "nodes": [], "root": 0})
    with pytest.raises(ValueError, match="unknown kind"):
        tree_from_json({"format": "flcheck-attack-tree/1", "root": 0,
                        "nodes": [{"id": 0, "kind": "xor", "initial": [], "goal": []}]})


def test_result_json_for_both_answers() -> None:
    k = diamond()
    found = generate_attack_tree(k, k.labels["done"])
    j = result_to_json(found, k, goal_text="done")
    assert j["attack_exists"] and j["valid"] and j["verdict"] == "holds" and j["alternatives"]["s0"]
    none = generate_attack_tree(k, k.labels["done"], initial=[5])
    j2 = result_to_json(none, k, goal_text="done")
    assert not j2["attack_exists"] and j2["valid"] is False and j2["verdict"] == "violated"
    assert j2["blocking_invariant"]["reachable_states_covered"] == 1
    json.dumps(j2)


def _check_dot(text: str, t: AttackTree) -> None:
    tree = DOT.parse(text)
    nodes = {str(s.children[0].children[0]) for s in tree.find_data("node_stmt")}
    edges = [(str(e.children[0].children[0]), str(e.children[1].children[0]))
             for e in tree.find_data("edge_stmt")]
    assert all(a in nodes and b in nodes for a, b in edges)
    # every shared node drawn once; flattened or-chains drop the nested or nodes
    shown = set()
    stack = [t]
    while stack:
        n = stack.pop()
        if id(n) not in shown:
            shown.add(id(n))
            stack.extend(display_children(n, True))
    assert len(nodes) == len(shown)


def test_dot_parses_and_renders_when_graphviz_exists(tmp_path: Path) -> None:
    k, t = _tree()
    text = tree_to_dot(t, k, goal_text='"x" in ready')
    _check_dot(text, t)
    assert "get_grad by sat1 at loc1" in text
    if shutil.which("dot"):
        out = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labelled_kripke())
def test_every_generated_tree_exports_everywhere(k: Kripke) -> None:
    goal = k.labels["p"]
    r = generate_attack_tree(k, goal, max_attacks=4)
    if not isinstance(r, AttackFound):
        return
    t = r.tree
    _check_dot(tree_to_dot(t, k), t)
    assert tree_from_json(json.loads(json.dumps(tree_to_json(t, k)))) == t
    root = ET.fromstring(tree_to_adtool(t, k))
    assert root.tag == "adtree"
    _check_adtool(root.find("node"), t, sequential=False)
    sand = ET.fromstring(tree_to_adtool(t, k, sequential=True))
    assert sand.tag == "sandtree"
    _check_adtool(sand.find("node"), t, sequential=True)
    assert tree_to_text(t, k)


def _check_adtool(elem: ET.Element | None, node: AttackTree, sequential: bool) -> None:
    assert elem is not None and elem.tag == "node"
    kids = display_children(node, True)
    xml_kids = elem.findall("node")
    assert len(xml_kids) == len(kids)
    assert elem.find("label") is not None and (elem.find("label").text or "")  # type: ignore[union-attr]
    expected = ("sequential" if sequential else "conjunctive") if node.kind == "and" and kids \
        else "disjunctive"
    assert elem.get("refinement") == expected
    for x, c in zip(xml_kids, kids, strict=True):
        _check_adtool(x, c, sequential)


def test_text_outline_refers_to_shared_subtrees() -> None:
    k, t = _tree()
    text = tree_to_text(t, k, goal_text="done")
    assert text.splitlines()[0].startswith("OR #1 one of 3 ways")
    assert "1. - get_grad by sat1 at loc1: ready {} -> {sat1}" in text
    assert render(t, k, "adtool-sand").startswith("<?xml")




def test_dot_grammar_rejects_broken_quoting() -> None:
    with pytest.raises(LarkError):
        DOT.parse('digraph "g" {\n  n0 [label="say "hi""];\n}\n')
    k, t = _tree()
    text = tree_to_dot(t, k, goal_text='ready == {"a"} \\ x')
    DOT.parse(text)  # quotes and backslashes in labels are escaped
