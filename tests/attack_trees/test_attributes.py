"""Attributes of attack trees against brute force: minimal cost, maximal probability, minimal time and the
Pareto front of an exhaustively generated tree equal the values over every simple path from an initial
state into the goal (an or over the paths, each path an and of its steps), and so do the label-setting
searches over every path (cheapest, most probable, fastest); a defence cuts every attack of
cost <= b exactly when no such path avoids the removed transitions; the ADTool export round-trips its
values."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.attack_trees import adtool
from checker.attack_trees.attributes import (
    MAX_PROBABILITY,
    MIN_TIME,
    NEUTRAL,
    AttributeValues,
    ParetoPoint,
    StepAttributes,
    StepTable,
    Vector,
    dominates,
    evaluate,
    non_dominated,
    pareto_front,
)
from checker.attack_trees.defences import best_attack, cheapest_attack, cuts, removing
from checker.attack_trees.export import display_children, tree_to_adtool
from checker.attack_trees.generation import AttackFound, NoAttack, generate_attack_tree
from checker.attack_trees.labels import StepLabel
from checker.attack_trees.tree import AttackTree, BaseAttack, TreeBuilder
from checker.attack_trees.validity import is_valid
from checker.mc.kripke import Kripke
from checker.mc.ts import Action

RULES = ("get_grad", "put_part", "hack")
ACTORS = ("sat1", "sat2", None)
ACTIONS = tuple(Action(rule, actor, location) for rule in RULES for actor in ACTORS
                for location in ("loc1", None))
FEW = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Kripke, list[int], StepAttributes]:
    """A random structure (1..6 states, up to 3 edges per state, parallel edges allowed, random actions),
    a goal and attributes declared for some (rule, actor) pairs and some rule defaults."""
    n = draw(st.integers(1, 6))
    src: list[int] = []
    dst: list[int] = []
    act: list[int] = []
    for s in range(n):
        for _ in range(draw(st.integers(0, 3))):
            src.append(s)
            dst.append(draw(st.integers(0, n - 1)))
            act.append(draw(st.integers(0, len(ACTIONS) - 1)))
    initial = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2)))
    goal = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2)))
    values = st.fixed_dictionaries({}, optional={
        "cost": st.integers(0, 6),
        "probability": st.fractions(0, 1, max_denominator=4),
        "time": st.integers(0, 3) | st.fractions(0, 3, max_denominator=2)})
    keys = [(rule, actor) for rule in RULES for actor in ("sat1", "sat2", None)]
    declared = draw(st.lists(st.sampled_from(keys), unique=True))
    attributes: dict[tuple[str, str | None], AttributeValues] = {
        key: draw(values) for key in declared}  # type: ignore[misc]  # hypothesis draws a plain dict
    return Kripke.from_edges(n, initial, src, dst, action=act, actions=ACTIONS), goal, attributes


def simple_paths(kripke: Kripke, goal: list[int]) -> Iterator[list[int]]:
    """Every path (as its edges) from an initial state into the goal that visits no state twice (it may
    pass through the goal before its end)."""
    goal_set = set(goal)

    def extend(state: int, visited: set[int], edges: list[int]) -> Iterator[list[int]]:
        if state in goal_set:
            yield list(edges)
        for edge in range(int(kripke.succ_ptr[state]), int(kripke.succ_ptr[state + 1])):
            target = int(kripke.succ_idx[edge])
            if target not in visited:
                yield from extend(target, visited | {target}, [*edges, edge])

    for start in np.flatnonzero(kripke.initial_mask()).tolist():
        yield from extend(start, {start}, [])


def path_vector(kripke: Kripke, edges: list[int], table: StepTable) -> Vector:
    vector = NEUTRAL
    for edge in edges:
        step = table.vector(kripke.actions[int(kripke.edge_action[edge])])
        vector = Vector(vector.cost + step.cost, vector.probability * step.probability,
                        vector.time + step.time)
    return vector


def brute_front(vectors: list[Vector]) -> set[Vector]:
    return {v for v in vectors if not any(dominates(w, v) for w in vectors)}


def exhaustive_tree(kripke: Kripke, goal: list[int]) -> AttackTree | None:
    """A tree with every first-hitting simple path (``None`` when no initial state reaches the goal)."""
    found = generate_attack_tree(kripke, goal, distinguish="paths", max_attacks=10**6,
                                 max_depth=kripke.num_states, budget=10**7)
    usable = found.partial if isinstance(found, NoAttack) else found  # partial: the states that can reach
    if usable is None:
        return None
    assert isinstance(usable, AttackFound) and not usable.truncated
    assert is_valid(usable.tree, kripke)
    return usable.tree


def steps_vector(steps: tuple[BaseAttack, ...], table: StepTable) -> Vector:
    vector = NEUTRAL
    for step in steps:
        v = table.step(step)
        vector = Vector(vector.cost + v.cost, vector.probability * v.probability, vector.time + v.time)
    return vector


def is_path(kripke: Kripke, steps: tuple[BaseAttack, ...], goal: list[int]) -> bool:
    """The steps chain from an initial state into the goal along real edges with their actions."""
    if not steps:
        return bool(set(np.flatnonzero(kripke.initial_mask()).tolist()) & set(goal))
    (first,) = steps[0].pre
    if not kripke.initial_mask()[first]:
        return False
    state = first
    for step in steps:
        (source,), (target,) = step.pre, step.post
        assert step.label is not None and step.label.action is not None
        edges = range(int(kripke.succ_ptr[source]), int(kripke.succ_ptr[source + 1]))
        if source != state or not any(int(kripke.succ_idx[e]) == target
                                      and kripke.actions[int(kripke.edge_action[e])] == step.label.action
                                      for e in edges):
            return False
        state = target
    return state in goal


Scenario = tuple[Kripke, list[int], StepAttributes]


@FEW
@given(scenarios())
def test_optima_and_pareto_front_match_brute_force(scenario: Scenario) -> None:
    kripke, goal, attributes = scenario
    table = StepTable(attributes)
    vectors = [path_vector(kripke, p, table) for p in simple_paths(kripke, goal)]
    tree = exhaustive_tree(kripke, goal)
    if tree is None:
        assert not vectors
        return
    result = evaluate(tree, attributes)
    assert result.cost.value == min(v.cost for v in vectors)
    assert result.probability.value == max(v.probability for v in vectors)
    assert result.time.value == min(v.time for v in vectors)
    for optimum, name in ((result.cost, "cost"), (result.probability, "probability"), (result.time, "time")):
        assert getattr(steps_vector(optimum.alternative, table), name) == optimum.value
        assert is_path(kripke, optimum.alternative, goal)
    front = pareto_front(tree, attributes)
    assert {p.vector for p in front} == brute_front(vectors)
    assert len(front) == len({p.vector for p in front})
    for point in front:
        assert steps_vector(point.alternative, table) == point.vector
        assert is_path(kripke, point.alternative, goal)
    exact = all(isinstance(v, Fraction) for vector in vectors for v in vector)
    assert exact  # integer and fraction inputs stay exact
    cheapest, conclusive = cheapest_attack(kripke, goal, attributes)
    assert conclusive and cheapest is not None and cheapest.value == result.cost.value
    assert is_path(kripke, cheapest.alternative, goal)
    for domain in (MAX_PROBABILITY, MIN_TIME):  # the label-setting search over every path
        best, conclusive = best_attack(kripke, goal, attributes, domain)
        assert conclusive and best is not None
        assert best.value == getattr(result, domain.attribute).value
        assert getattr(steps_vector(best.alternative, table), domain.attribute) == best.value
        assert is_path(kripke, best.alternative, goal)


@FEW
@given(scenarios(), st.data())
def test_cuts_match_brute_force(scenario: Scenario, data: st.DataObject) -> None:
    kripke, goal, attributes = scenario
    table = StepTable(attributes)
    rule = data.draw(st.sampled_from((*RULES, None)))
    actor = data.draw(st.sampled_from(("sat1", "sat2", None)))
    location = data.draw(st.sampled_from(("loc1", None)))
    if rule is None and actor is None and location is None:
        rule = "hack"
    defence = removing(rule=rule, actor=actor, location=location)
    budget = data.draw(st.integers(0, 12))
    surviving = [p for p in simple_paths(kripke, goal)
                 if not any(defence.removes(kripke.actions[int(kripke.edge_action[e])]) for e in p)
                 and path_vector(kripke, p, table).cost <= budget]
    verdict = cuts(kripke, defence, budget, attributes, goal=goal)
    assert verdict.blocks == (not surviving)
    words = str(verdict)
    assert words.startswith(f"{defence} ")
    if verdict.blocks:
        assert words == f"{defence} blocks every attack of cost <= {budget}"
    else:
        assert verdict.remaining is not None and verdict.remaining.value <= budget
        assert verdict.remaining.value == min(path_vector(kripke, p, table).cost for p in surviving)
        assert not any(defence.removes(s.label.action) for s in verdict.remaining.alternative
                       if s.label is not None and s.label.action is not None)
    tree = exhaustive_tree(kripke, goal)
    if tree is not None:
        assert cuts(tree, defence, budget, attributes).blocks == verdict.blocks


def test_the_words_of_a_cut_and_the_defaults_per_rule() -> None:
    actions = (Action("get_grad", "sat3"), Action("get_grad", "sat1"), Action("hack", "eve", "ground"))
    # 0 -sat3-> 1 -hack-> 3 and 0 -sat1-> 2 -sat3-> 3
    k = Kripke.from_edges(4, [0], [0, 0, 1, 2], [1, 2, 3, 3], action=[0, 1, 2, 0], actions=actions)
    steps: StepAttributes = {("get_grad", "sat3"): {"cost": 5, "probability": Fraction(1, 2), "time": 2},
                             ("get_grad", None): {"cost": 1}}
    table = StepTable(steps)
    assert table.vector(actions[0]) == (5, Fraction(1, 2), 2)
    assert table.vector(actions[1]) == (1, 1, 0)  # the rule default, then neutral values
    assert table.vector(actions[2]) == NEUTRAL
    assert str(cuts(k, removing(rule="get_grad", actor="sat3"), 5, steps, goal=[3])) == \
        "removing transitions of rule get_grad by sat3 blocks every attack of cost <= 5"
    assert str(cuts(k, removing(rule="get_grad", actor="sat1"), 5, steps, goal=[3])) == \
        "removing transitions of rule get_grad by sat1 does not block every attack of cost <= 5: " \
        "get_grad by sat3; hack by eve at ground (cost 5) remains"
    open_hack = cuts(k, removing(location="ground"), 6, steps, goal=[3])
    assert str(open_hack) == ("removing transitions at ground does not block every attack of cost <= 6: "
                              "get_grad by sat1; get_grad by sat3 (cost 6) remains")
    assert cuts(k, removing(location="ground"), 5, steps, goal=[3]).blocks
    tree = exhaustive_tree(k, [3])
    assert tree is not None
    assert str(cuts(tree, removing(rule="get_grad", actor="sat3"), 100, steps)) == \
        "removing transitions of rule get_grad by sat3 blocks every attack in the tree of cost <= 100"
    result = evaluate(tree, steps)
    assert (("hack", "eve"), "cost") in result.undeclared
    assert result.cost.value == 5 and result.cost.text() == "get_grad by sat3; hack by eve at ground"


def test_invalid_attributes_are_rejected() -> None:
    for bad in ({"cost": -1}, {"probability": Fraction(3, 2)}, {"time": float("nan")}, {"cost": True},
                {"speed": 1}):
        with pytest.raises(ValueError):
            StepTable({("get_grad", None): bad})  # type: ignore[dict-item]  # deliberately malformed
    with pytest.raises(ValueError, match="no action label"):
        evaluate(BaseAttack({0}, {1}), {})


def test_non_dominated_keeps_one_point_per_vector() -> None:
    a = Vector(Fraction(1), Fraction(1, 2), Fraction(1))
    b = Vector(Fraction(2), Fraction(1), Fraction(1))
    c = Vector(Fraction(2), Fraction(1, 2), Fraction(1))  # b dominates c
    kept = non_dominated(ParetoPoint(v, ()) for v in (c, a, b, a))
    assert [p.vector for p in kept] == [a, b]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.booleans())
def test_adtool_export_round_trips_its_values(scenario: tuple[Kripke, list[int], StepAttributes],
                                              sequential: bool) -> None:
    kripke, goal, attributes = scenario
    tree = exhaustive_tree(kripke, goal)
    if tree is None:
        return
    table = StepTable(attributes)
    document = adtool.read_adtool(tree_to_adtool(tree, kripke, attributes=attributes, sequential=sequential))
    domains = adtool.SANDTREE_DOMAINS if sequential else adtool.ADTREE_DOMAINS
    ids = adtool.domain_ids(domains)
    assert document.kind == ("sandtree" if sequential else "adtree")
    assert document.domains == {i: d.class_name for i, d in zip(ids, domains, strict=True)}
    # the document's nodes are the displayed nodes, in order; each base step has its declared values
    nodes = _display_walk(tree)
    assert len(document.root.walk()) == len(nodes)
    for read, node in zip(document.root.walk(), nodes, strict=True):
        if isinstance(node, BaseAttack):
            vector = table.step(node)
            assert read.basic == {i: getattr(vector, d.attribute) for i, d in zip(ids, domains, strict=True)}
            assert not read.derived and not read.children
    # the derived values are ADTool's recomputation from the basic ones
    for read in document.root.walk():
        assert set(read.derived if read.children else read.basic) == set(ids)
        if read.children:
            for domain_id, domain in zip(ids, domains, strict=True):
                join = domain.choose if read.refinement == "disjunctive" else domain.combine
                kids = [(k.derived if k.children else k.basic)[domain_id] for k in read.children]
                expected = kids[0]
                for value in kids[1:]:
                    expected = join(expected, value)
                assert read.derived[domain_id] == expected
    root_values = document.root.derived or document.root.basic
    result = evaluate(tree, attributes)
    assert root_values[ids[-1]] == result.time.value
    if not sequential:
        assert root_values[ids[0]] == result.cost.value


def _display_walk(tree: AttackTree) -> list[AttackTree]:
    """Nodes in the export's order (children as displayed, repeated where shared)."""
    out: list[AttackTree] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(display_children(node, True)))
    return out


def test_number_text_is_exact() -> None:
    for value in (Fraction(5), Fraction(1, 2), Fraction(-3, 40), Fraction(1, 3), Fraction(7, 6), 0.1, 2.5):
        text, exact = adtool.number_text(value)
        document = adtool.read_adtool(
            '<adtree><node refinement="disjunctive"><label>x</label>'
            f'<parameter domainId="MinCost1" category="basic"'
            f'{"" if exact is None else f" exact={exact!r}"}>{text}</parameter></node>'
            '<domain id="MinCost1"><class>lu.uni.adtool.domains.adtpredefined.MinCost</class></domain>'
            '</adtree>'.replace("'", '"'))
        back = document.root.basic["MinCost1"]
        assert back == value if isinstance(value, Fraction) else float(back) == value
    assert adtool.number_text(Fraction(1, 2)) == ("0.5", None)
    assert adtool.number_text(Fraction(1, 3))[1] == "1/3"


def test_reader_rejects_malformed_documents() -> None:
    with pytest.raises(ValueError, match="not an ADTool tree"):
        adtool.read_adtool("<tree/>")
    with pytest.raises(ValueError, match="undeclared"):
        adtool.read_adtool('<adtree><node refinement="disjunctive"><label>x</label>'
                           '<parameter domainId="MinCost1" category="basic">1</parameter></node></adtree>')
    with pytest.raises(ValueError, match="not a number"):
        adtool.read_adtool('<adtree><node refinement="disjunctive"><label>x</label>'
                           '<parameter domainId="A1" category="basic">one</parameter></node>'
                           '<domain id="A1"><class>A</class></domain></adtree>')


def test_front_of_an_and_of_ors() -> None:
    """An and of two ors: the front is the non-dominated part of every combination of one child each."""
    actions = tuple(Action(r) for r in ("a", "b", "c", "d"))
    builder = TreeBuilder()
    first = builder.or_([builder.base({0}, {1}, StepLabel(actions[0])),
                         builder.base({0}, {1}, StepLabel(actions[1]))], {0}, {1})
    second = builder.or_([builder.base({1}, {2}, StepLabel(actions[2])),
                          builder.base({1}, {2}, StepLabel(actions[3]))], {1}, {2})
    tree = builder.and_([first, second], {0}, {2})
    steps: StepAttributes = {("a", None): {"cost": 1, "time": 5}, ("b", None): {"cost": 5, "time": 1},
                             ("c", None): {"cost": 2, "time": 4}, ("d", None): {"cost": 4, "time": 3}}
    table = StepTable(steps)
    combos = [Vector(table.vector(x).cost + table.vector(y).cost, Fraction(1),
                     table.vector(x).time + table.vector(y).time)
              for x, y in itertools.product(actions[:2], actions[2:])]
    front = pareto_front(tree, steps)
    assert {p.vector for p in front} == brute_front(combos)
    assert [p.text() for p in front] == ["a; c", "a; d", "b; c", "b; d"]  # none dominates another
    assert all(steps_vector(p.alternative, table) == p.vector for p in front)
