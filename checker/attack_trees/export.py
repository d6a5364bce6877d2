"""Export of IIIf attack trees (:mod:`checker.attack_trees.tree`): text, JSON, Graphviz DOT and the ADTool
XML formats, plus the JSON reader used to re-check exported trees.

* JSON (``flcheck-attack-tree/1``): the shared tree as a DAG — a ``nodes`` table (``id``, ``kind``
  ``base|and|or``, the pair as state-id lists ``initial``/``goal`` with their sizes, ``label`` text and,
  for base attacks, the ``action`` and observable ``changes``) and ``root``; ``valid`` is the result of
  re-checking the tree with :func:`checker.attack_trees.validity.is_valid`. :func:`tree_from_json` reads it
  back.
* DOT: one Graphviz node per shared sub-attack (``digraph``; and-children are numbered in sequence).
* ADTool: the ``<adtree>`` format of ADTool 2 (``<node refinement="disjunctive|conjunctive">`` with a
  ``<label>`` and an optional ``<comment>``; a leaf is written ``disjunctive`` as ADTool does), or with
  ``sequential=True`` its ``<sandtree>`` format in which IIIf's and-attacks, which are sequential, are
  ``refinement="sequential"``. XML trees cannot share nodes: shared sub-attacks are repeated. Given step
  attributes, the export declares ADTool's domains and writes every node's values
  (:mod:`checker.attack_trees.adtool`, which also reads the XML back).

Display formats (text, DOT, ADTool) flatten, by default, an or-attack nested as a child of an or-attack
with the *same* pair into its parent (the or-chain shape that IIIf's or-validity needs for more than two
alternatives over the same start states); JSON always keeps the exact, re-checkable structure.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

from checker.attack_trees import adtool
from checker.attack_trees.attributes import StepAttributes, StepTable, as_table
from checker.attack_trees.generation import AttackFound, NoAttack
from checker.attack_trees.labels import Change, StateValues, StepLabel
from checker.attack_trees.tree import AndAttack, AttackTree, BaseAttack, OrAttack
from checker.attack_trees.validity import check_validity
from checker.mc.kripke import Kripke
from checker.mc.ts import Action
from checker.render import value_text

FORMAT_ID = "flcheck-attack-tree/1"


# =============================================================================== helpers


def states_text(states: frozenset[int], kripke: Kripke | None, limit: int = 4) -> str:
    """``{s0, s3}`` by state name, or ``N states`` when larger than ``limit``."""
    if len(states) > limit:
        return f"{len(states)} states"
    names = [kripke.state_name(s) if kripke is not None and 0 <= s < kripke.num_states else f"s{s}"
             for s in sorted(states)]
    return "{" + ", ".join(names) + "}"


def _summary_changes(kripke: Kripke | None, node: AttackTree) -> list[Change]:
    """Observables that differ between the single start state and the single goal state of ``node``
    (only those its base attacks' labels show, when it has labelled base attacks)."""
    if kripke is None or len(node.pre) != 1 or len(node.post) != 1:
        return []
    (x,), (y,) = tuple(node.pre), tuple(node.post)
    if not (0 <= x < kripke.num_states and 0 <= y < kripke.num_states) or x == y:
        return []
    shown = {c.name for b in node.children if isinstance(b, BaseAttack) and b.label is not None
             for c in b.label.changes}
    out = []
    value = StateValues(kripke)
    for name in sorted(kripke.observables):
        if shown and name not in shown:
            continue
        a, b = value_text(value(name, x)), value_text(value(name, y))
        if a != b:
            out.append(Change(name, a, b))
    return out


def display_children(node: AttackTree, flatten: bool) -> list[AttackTree]:
    """Children as displayed: with ``flatten``, an or-child with the parent's pair is inlined."""
    kids = list(node.children)
    if not flatten or node.kind != "or":
        return kids
    out: list[AttackTree] = []
    stack = kids[::-1]
    while stack:
        c = stack.pop()
        if c.kind == "or" and c.pair == node.pair:
            stack.extend(reversed(c.children))
        else:
            out.append(c)
    return out


def node_label(node: AttackTree, kripke: Kripke | None, *, goal_text: str | None = None,
               n_children: int | None = None, is_root: bool = False, sep: str = "; ",
               head: str = ": ") -> str:
    """A human reading of a node (one line with the defaults; ``sep``/``head`` = newline for DOT)."""
    if isinstance(node, BaseAttack):
        if node.label is not None:
            return node.label.text(sep, head)
        return f"step {states_text(node.pre, kripke)} -> {states_text(node.post, kripke)}"
    n = len(node.children) if n_children is None else n_children
    target = goal_text if (is_root and goal_text) else states_text(node.post, kripke)
    start = states_text(node.pre, kripke)
    if node.kind == "and":
        if n == 0:
            return f"already there: {start} in {target}"
        changes = _summary_changes(kripke, node)
        text = f"sequence of {n} step{'s' if n != 1 else ''}"
        if changes:
            text += head + sep.join(map(str, changes))
        else:
            text += f" from {start} to {target}"
        return text
    if n == 0:
        return f"no step needed: {start} in {target}"
    kids = node.children
    if len(kids) > 1 and sum(len(c.pre) for c in kids) == len(node.pre) \
            and frozenset().union(*(c.pre for c in kids)) == node.pre:
        return f"from each of {len(kids)} groups of start states {start} to {target}"
    if n == 1:
        return f"the one way found from {start} to {target}"
    return f"one of {n} ways from {start} to {target}"


# =============================================================================== text
def tree_to_text(tree: AttackTree, kripke: Kripke | None = None, *, goal_text: str | None = None,
                 flatten: bool = True) -> str:
    """An indented outline; a repeated shared sub-attack is printed once and then referred to."""
    lines: list[str] = []
    number: dict[int, int] = {}

    def walk(node: AttackTree, depth: int, prefix: str) -> None:
        kids = display_children(node, flatten)
        indent = "  " * depth
        tag = {"base": "-", "and": "AND", "or": "OR"}[node.kind]
        if node.kind != "base" and id(node) in number:
            lines.append(f"{indent}{prefix}{tag} (same as #{number[id(node)]})")
            return
        if node.kind != "base":
            number[id(node)] = len(number) + 1
            tag = f"{tag} #{number[id(node)]}"
        text = node_label(node, kripke, goal_text=goal_text, n_children=len(kids), is_root=depth == 0)
        lines.append(f"{indent}{prefix}{tag} {text}")
        for i, c in enumerate(kids, 1):
            walk(c, depth + 1, f"{i}. " if node.kind == "and" else "| ")

    walk(tree, 0, "")
    return "\n".join(lines)


# =============================================================================== JSON
def _action_json(a: Action | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {"rule": a.rule, "actor": a.actor, "location": a.location, "detail": a.detail}


def tree_to_json(tree: AttackTree, kripke: Kripke | None = None, *, goal_text: str | None = None,
                 names_limit: int = 20) -> dict[str, Any]:
    """The tree as a JSON-ready DAG (see the module docstring); ``valid`` is filled in when a Kripke
    structure is given (re-check with :func:`checker.attack_trees.validity.check_validity`)."""
    order = tree.postorder()
    ids = {id(n): i for i, n in enumerate(order)}
    nodes = []
    for n in order:
        entry: dict[str, Any] = {
            "id": ids[id(n)],
            "kind": n.kind,
            "initial": sorted(n.pre),
            "goal": sorted(n.post),
            "initial_size": len(n.pre),
            "goal_size": len(n.post),
            "label": node_label(n, kripke, goal_text=goal_text, is_root=n is tree),
        }
        if kripke is not None:
            for key, states in (("initial_names", n.pre), ("goal_names", n.post)):
                if len(states) <= names_limit:
                    entry[key] = [kripke.state_name(s) for s in sorted(states)
                                  if 0 <= s < kripke.num_states]
        if isinstance(n, BaseAttack) and n.label is not None:
            entry["action"] = _action_json(n.label.action)
            entry["changes"] = [{"observable": c.name, "before": c.before, "after": c.after}
                                for c in n.label.changes]
            entry["source"] = n.label.source
            entry["target"] = n.label.target
        else:
            entry["children"] = [ids[id(c)] for c in n.children]
        nodes.append(entry)
    out: dict[str, Any] = {
        "format": FORMAT_ID,
        "root": ids[id(tree)],
        "pair": {"initial_size": len(tree.pre), "goal_size": len(tree.post)},
        "nodes_shared": len(order),
        "nodes_expanded": tree.tree_size(),
        "nodes": nodes,
    }
    if goal_text:
        out["goal_text"] = goal_text
    if kripke is not None:
        v = check_validity(tree, kripke)
        out["valid"] = v.valid
        if not v.valid:
            out["invalid_reason"] = v.reason
    return out


def tree_from_json(data: dict[str, Any]) -> AttackTree:
    """Read a tree written by :func:`tree_to_json` (``ValueError`` on a malformed document)."""
    if data.get("format") != FORMAT_ID:
        raise ValueError(f"not an attack tree document (format {data.get('format')!r}, expected "
                         f"{FORMAT_ID!r})")
    built: dict[int, AttackTree] = {}
    for entry in data["nodes"]:
        i, kind = int(entry["id"]), entry["kind"]
        pre, post = frozenset(entry["initial"]), frozenset(entry["goal"])
        if kind == "base":
            label = None
            if entry.get("action") is not None or entry.get("changes"):
                a = entry.get("action")
                action = None if a is None else Action(a["rule"], a.get("actor"), a.get("location"),
                                                       a.get("detail", ""))
                changes = tuple(Change(c["observable"], c["before"], c["after"])
                                for c in entry.get("changes", []))
                label = StepLabel(action, changes, entry.get("source", ""), entry.get("target", ""))
            built[i] = BaseAttack(pre, post, label)
        elif kind in ("and", "or"):
            try:
                kids = [built[int(c)] for c in entry["children"]]
            except KeyError as exc:
                raise ValueError(f"node {i}: child {exc} is not defined before it") from None
            built[i] = (AndAttack if kind == "and" else OrAttack)(kids, pre, post)
        else:
            raise ValueError(f"node {i}: unknown kind {kind!r} (expected base, and or or)")
    return built[int(data["root"])]


def result_to_json(result: AttackFound | NoAttack, kripke: Kripke, *, goal_text: str | None = None,
                   model: str | None = None) -> dict[str, Any]:
    """The whole answer of :func:`checker.attack_trees.generation.generate_attack_tree` as JSON:
    ``attack_exists``, ``valid`` (re-check of the tree; ``false`` when there is no tree), the pair sizes and
    either the tree and the alternatives found, or the blocking invariant."""
    out: dict[str, Any] = {"model": model, "goal": goal_text, "attack_exists": result.exists,
                           "initial_size": len(result.initial), "goal_size": len(result.goal),
                           "model_complete": kripke.complete}
    if isinstance(result, AttackFound):
        tree_json = tree_to_json(result.tree, kripke, goal_text=goal_text)
        out["valid"] = tree_json["valid"]
        out["verdict"] = "holds"
        out["alternatives"] = {
            kripke.state_name(i): [
                {"length": p.length, "states": [kripke.state_name(s) for s in p.states],
                 "actions": [str(kripke.actions[int(kripke.edge_action[e])]) for e in p.edges]}
                for p in paths]
            for i, paths in result.paths.items()}
        out["distinguish"] = result.distinguish
        out["truncated"] = result.truncated
        out["warnings"] = result.warnings
        out["tree"] = tree_json
    else:
        out["valid"] = False
        out["verdict"] = "violated" if result.conclusive else "unknown"
        out["blocking_invariant"] = {
            "statement": "AG ¬goal from every failing initial state",
            "failing_initial": [kripke.state_name(s) for s in sorted(result.failing)],
            "reachable_states_covered": result.invariant_size,
            "states_that_cannot_reach_goal": int(result.cannot_reach.sum()),
            "certificate_checked": result.certificate_ok,
            "facts": result.facts,
        }
        if not result.conclusive:
            out["limit_reason"] = result.limit_reason
        if result.partial is not None:
            out["partial_tree_for_other_initial_states"] = tree_to_json(result.partial.tree, kripke,
                                                                        goal_text=goal_text)
    return out


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# =============================================================================== DOT
def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def tree_to_dot(tree: AttackTree, kripke: Kripke | None = None, *, goal_text: str | None = None,
                flatten: bool = True, name: str = "attack_tree") -> str:
    """Graphviz ``digraph``: base attacks as boxes, and-nodes as ``AND`` ellipses with numbered edges
    (the sequence), or-nodes as ``OR`` diamonds; shared sub-attacks are drawn once."""
    lines = [f"digraph {_dot_quote(name)} {{", "  rankdir=TB;", "  ordering=out;",
             '  node [fontname="Helvetica", fontsize=10];']
    ids: dict[int, str] = {}
    edges: list[tuple[int, str, list[int]]] = []
    stack: list[tuple[AttackTree, bool]] = [(tree, True)]
    while stack:
        node, is_root = stack.pop()
        if id(node) in ids:
            continue
        nid = f"n{len(ids)}"
        ids[id(node)] = nid
        kids = display_children(node, flatten)
        text = node_label(node, kripke, goal_text=goal_text, n_children=len(kids), is_root=is_root,
                          sep="\n", head="\n")
        if node.kind == "base":
            attrs = "shape=box, style=rounded, label=" + _dot_quote(text)
        elif node.kind == "and":
            attrs = "shape=ellipse, label=" + _dot_quote("AND\n" + text)
        else:
            attrs = "shape=diamond, label=" + _dot_quote("OR\n" + text)
        if is_root:
            attrs += ", penwidth=2"
        lines.append(f"  {nid} [{attrs}];")
        for c in reversed(kids):
            stack.append((c, False))
        edges.append((id(node), node.kind, [id(c) for c in kids]))
    for parent, kind, kid_ids in edges:
        for i, k in enumerate(kid_ids, 1):
            label = f" [label={_dot_quote(str(i))}]" if kind == "and" else ""
            lines.append(f"  {ids[parent]} -> {ids[k]}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


# =============================================================================== ADTool XML
def tree_to_adtool(tree: AttackTree, kripke: Kripke | None = None, *, goal_text: str | None = None,
                   flatten: bool = True, sequential: bool = False,
                   attributes: StepAttributes | StepTable | None = None) -> str:
    """ADTool 2 XML: ``<adtree>`` (and = ``conjunctive``) or, with ``sequential``, ``<sandtree>`` (and =
    ``sequential``). Each node has a ``<label>`` and a ``<comment>`` with its pair of state sets. With
    ``attributes`` (:mod:`checker.attack_trees.attributes`), the domains of
    :mod:`checker.attack_trees.adtool` are declared and every node carries its values (``basic`` on
    leaves, ``derived`` on inner nodes)."""
    root_tag = "sandtree" if sequential else "adtree"
    and_ref = "sequential" if sequential else "conjunctive"
    out = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>', f"<{root_tag}>"]
    domains = adtool.SANDTREE_DOMAINS if sequential else adtool.ADTREE_DOMAINS
    ids = adtool.domain_ids(domains)
    values = ({} if attributes is None else
              adtool.node_values(tree, as_table(attributes), domains,
                                 lambda node: display_children(node, flatten)))

    def emit(node: AttackTree, depth: int, is_root: bool) -> None:
        kids = display_children(node, flatten)
        pad = "  " * depth
        ref = "disjunctive" if node.kind in ("or", "base") or not kids else and_ref
        text = node_label(node, kripke, goal_text=goal_text, n_children=len(kids), is_root=is_root)
        comment = (f"IIIf {node.kind} attack; from {states_text(node.pre, kripke, 8)} "
                   f"to {states_text(node.post, kripke, 8)}")
        out.append(f'{pad}<node refinement="{ref}">')
        out.append(f"{pad}  <label>{escape(text)}</label>")
        out.append(f"{pad}  <comment>{escape(comment)}</comment>")
        if attributes is not None:
            out.extend(adtool.parameter_lines(values[id(node)], ids, "derived" if kids else "basic",
                                              pad + "  "))
        for c in kids:
            emit(c, depth + 1, False)
        out.append(f"{pad}</node>")

    emit(tree, 1, True)
    if attributes is not None:
        out.extend(adtool.domain_lines(domains, "  "))
    out.append(f"</{root_tag}>")
    return "\n".join(out) + "\n"


def render(result_tree: AttackTree, kripke: Kripke, fmt: str, *, goal_text: str | None = None) -> str:
    """Render a tree in ``fmt`` (``text``, ``json``, ``dot``, ``adtool``, ``adtool-sand``)."""
    if fmt == "text":
        return tree_to_text(result_tree, kripke, goal_text=goal_text) + "\n"
    if fmt == "json":
        return dumps(tree_to_json(result_tree, kripke, goal_text=goal_text))
    if fmt == "dot":
        return tree_to_dot(result_tree, kripke, goal_text=goal_text)
    if fmt == "adtool":
        return tree_to_adtool(result_tree, kripke, goal_text=goal_text)
    if fmt == "adtool-sand":
        return tree_to_adtool(result_tree, kripke, goal_text=goal_text, sequential=True)
    raise ValueError(f"unknown format {fmt!r}")


FORMATS: Sequence[str] = ("text", "json", "dot", "adtool", "adtool-sand")
